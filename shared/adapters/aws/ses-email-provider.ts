/**
 * Driven adapter: the email provider's identity, tenant and account
 * operations over SES v2. Domain identities use Easy DKIM (RSA 2048) and a
 * custom MAIL FROM domain; each tenant has a configuration set of the same
 * name associated with it.
 */
import {
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  CreateEmailIdentityCommand,
  CreateTenantCommand,
  CreateTenantResourceAssociationCommand,
  DeleteEmailIdentityCommand,
  DeleteTenantResourceAssociationCommand,
  GetAccountCommand,
  GetEmailIdentityCommand,
  GetTenantCommand,
  ListTenantResourcesCommand,
  type MailFromDomainStatus,
  PutConfigurationSetTrackingOptionsCommand,
  PutEmailIdentityMailFromAttributesCommand,
  type SESv2Client,
  type DkimStatus as SesDkimStatus,
} from '@aws-sdk/client-sesv2';
import {
  NotFoundError,
  RuleViolationError,
  ServiceUnavailableError,
} from '../../errors.ts';
import type {
  DkimStatus,
  DnsRecord,
  EmailProvider,
  MailFromStatus,
  ProviderAccount,
  ProviderDomain,
  ProviderTenant,
} from '../../sending/provider.ts';

/** Where the provider's resources live: what their ARNs are built from. */
export interface SesLocation {
  region: string;
  accountId: string;
  /** `aws` unless given (`aws-cn`, `aws-us-gov`). */
  partition?: string;
  /**
   * The operator's own open and click tracking domain: every tenant's
   * configuration set names it. Without it SES tracks through its own
   * domain (`awstrack.me`).
   */
  tracking?: TrackingDomain;
}

/** A custom open and click tracking domain and its HTTPS policy. */
export interface TrackingDomain {
  domain: string;
  httpsPolicy: 'REQUIRE' | 'REQUIRE_OPEN_ONLY' | 'OPTIONAL';
}

/** The zone Easy DKIM CNAMEs point into when SES names none. */
const DEFAULT_DKIM_ZONE = 'dkim.amazonses.com';

/** The SPF record of a MAIL FROM domain that sends through SES. */
const MAIL_FROM_SPF = 'v=spf1 include:amazonses.com ~all';

/** Errors without a response that mean the network let us down. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);
const NETWORK_ERROR_NAMES = new Set(['TimeoutError', 'RequestTimeout']);

/** The parts of an SDK (or Node network) error the mapping looks at. */
interface SdkErrorShape {
  code?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

/** True for an error of the given SES exception name. */
const isNamed = (error: unknown, name: string): boolean =>
  error instanceof Error && error.name === name;

/**
 * `promise.catch(tolerate('NotFoundException'))`: that error answers
 * undefined (the idempotent path); any other is rethrown.
 */
const tolerate =
  (name: string) =>
  (error: unknown): undefined => {
    if (isNamed(error, name)) return undefined;
    throw error;
  };

/**
 * True when the provider cannot be reached right now: no response at all
 * (connection refused, DNS failure, timeout), a 5xx, or throttling.
 */
const isUnreachable = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  const { code, $fault, $metadata, $retryable } = error as SdkErrorShape;
  if (error.name === 'TooManyRequestsException' || $retryable?.throttling) {
    return true;
  }
  const status = $metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  return (
    $fault === 'server' ||
    NETWORK_ERROR_NAMES.has(error.name) ||
    (code !== undefined && NETWORK_ERROR_CODES.has(code))
  );
};

const dkimStatusOf = (status: SesDkimStatus | undefined): DkimStatus =>
  status === 'SUCCESS' || status === 'FAILED' ? status : 'PENDING';

const mailFromStatusOf = (
  status: MailFromDomainStatus | undefined,
): MailFromStatus =>
  status === 'SUCCESS' || status === 'FAILED' ? status : 'PENDING';

/** The name of the event destination of every tenant's configuration set. */
export const SES_EVENT_DESTINATION = 'events';

/** The SES event types a tenant's configuration set publishes. */
export const PUBLISHED_EVENT_TYPES = [
  'SEND',
  'REJECT',
  'BOUNCE',
  'COMPLAINT',
  'DELIVERY',
  'DELIVERY_DELAY',
  'OPEN',
  'CLICK',
  'RENDERING_FAILURE',
  'SUBSCRIPTION',
] as const;

/** The EmailProvider port over an SESv2Client. */
export class SesEmailProvider implements EmailProvider {
  /** `arn:<partition>:ses:<region>:<account>:`, what every ARN starts with. */
  private readonly arnPrefix: string;

  constructor(
    private readonly client: SESv2Client,
    private readonly location: SesLocation,
  ) {
    const { partition = 'aws', region, accountId } = location;
    this.arnPrefix = `arn:${partition}:ses:${region}:${accountId}:`;
    this.eventBusArn = `arn:${partition}:events:${region}:${accountId}:event-bus/default`;
  }

  /** The account's default event bus: SES publishes the events there. */
  private readonly eventBusArn: string;

  async createDomain(
    domain: string,
    mailFromDomain: string,
  ): Promise<ProviderDomain> {
    const existed = await this.call(() =>
      this.client.send(
        new CreateEmailIdentityCommand({
          EmailIdentity: domain,
          DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
        }),
      ),
    ).then(
      () => false,
      (error: unknown) => {
        if (isNamed(error, 'AlreadyExistsException')) return true;
        // SES refuses the name, or the account's identity limit is reached:
        // the caller's request cannot succeed as is (400, not 500).
        if (
          isNamed(error, 'BadRequestException') ||
          isNamed(error, 'LimitExceededException')
        ) {
          throw new RuleViolationError(
            'domain.refusedByProvider',
            `The email provider refused ${domain}: ${(error as Error).message}`,
            { cause: error },
          );
        }
        throw error;
      },
    );
    if (existed) {
      const current = await this.getDomain(domain);
      // Only read it (another organization may share it: its MAIL FROM
      // stays), unless an earlier attempt stopped before the MAIL FROM.
      if (current?.mailFromDomain) return current;
    }
    await this.call(() =>
      this.client.send(
        new PutEmailIdentityMailFromAttributesCommand({
          EmailIdentity: domain,
          MailFromDomain: mailFromDomain,
          BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
        }),
      ),
    );
    const created = await this.getDomain(domain);
    if (!created) {
      throw new Error(
        `SES has no identity for ${domain} right after creating it`,
      );
    }
    return created;
  }

  async getDomain(domain: string): Promise<ProviderDomain | undefined> {
    const identity = await this.call(() =>
      this.client.send(new GetEmailIdentityCommand({ EmailIdentity: domain })),
    ).catch(tolerate('NotFoundException'));
    if (!identity) return undefined;

    const dkim = identity.DkimAttributes;
    const zone = (dkim?.SigningHostedZone || DEFAULT_DKIM_ZONE).replace(
      /\.$/,
      '',
    );
    const mailFrom = identity.MailFromAttributes;
    const mailFromDomain = mailFrom?.MailFromDomain || null;
    const records: DnsRecord[] = (dkim?.Tokens ?? []).map((token) => ({
      type: 'CNAME',
      name: `${token}._domainkey.${domain}`,
      value: `${token}.${zone}`,
      purpose: 'dkim',
    }));
    if (mailFromDomain) {
      records.push(
        {
          type: 'MX',
          name: mailFromDomain,
          value: `feedback-smtp.${this.location.region}.amazonses.com`,
          priority: 10,
          purpose: 'mail_from',
        },
        {
          type: 'TXT',
          name: mailFromDomain,
          value: MAIL_FROM_SPF,
          purpose: 'mail_from',
        },
      );
    }
    return {
      dkimStatus: dkimStatusOf(dkim?.Status),
      mailFromDomain,
      mailFromStatus: mailFromDomain
        ? mailFromStatusOf(mailFrom?.MailFromDomainStatus)
        : null,
      records,
    };
  }

  async deleteDomain(domain: string): Promise<void> {
    await this.call(() =>
      this.client.send(
        new DeleteEmailIdentityCommand({ EmailIdentity: domain }),
      ),
    ).catch(tolerate('NotFoundException'));
  }

  async ensureTenant(tenantName: string): Promise<void> {
    const tracking = this.location.tracking;
    const trackingOptions = tracking
      ? {
          CustomRedirectDomain: tracking.domain,
          HttpsPolicy: tracking.httpsPolicy,
        }
      : undefined;
    const existed = await this.call(() =>
      this.client.send(
        new CreateConfigurationSetCommand({
          ConfigurationSetName: tenantName,
          ...(trackingOptions ? { TrackingOptions: trackingOptions } : {}),
        }),
      ),
    ).then(
      () => false,
      (error: unknown) => {
        if (isNamed(error, 'AlreadyExistsException')) return true;
        throw error;
      },
    );
    // A set made before the operator named a tracking domain (or another
    // one) takes the current one; PutConfigurationSetTrackingOptions
    // replaces, so repeating it is harmless.
    if (existed && trackingOptions) {
      await this.call(() =>
        this.client.send(
          new PutConfigurationSetTrackingOptionsCommand({
            ConfigurationSetName: tenantName,
            ...trackingOptions,
          }),
        ),
      );
    }
    // Every event of the tenant's mail goes to the default event bus, where
    // the events rule sends it to the events queue (suppression, stats).
    await this.call(() =>
      this.client.send(
        new CreateConfigurationSetEventDestinationCommand({
          ConfigurationSetName: tenantName,
          EventDestinationName: SES_EVENT_DESTINATION,
          EventDestination: {
            Enabled: true,
            MatchingEventTypes: [...PUBLISHED_EVENT_TYPES],
            EventBridgeDestination: { EventBusArn: this.eventBusArn },
          },
        }),
      ),
    ).catch(tolerate('AlreadyExistsException'));
    await this.call(() =>
      this.client.send(new CreateTenantCommand({ TenantName: tenantName })),
    ).catch(tolerate('AlreadyExistsException'));
    await this.associate(tenantName, this.configurationSetArn(tenantName));
  }

  async getTenant(tenantName: string): Promise<ProviderTenant | undefined> {
    const found = await this.call(() =>
      this.client.send(new GetTenantCommand({ TenantName: tenantName })),
    ).catch(tolerate('NotFoundException'));
    if (!found?.Tenant) return undefined;

    const arns: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.call(() =>
        this.client.send(
          new ListTenantResourcesCommand({
            TenantName: tenantName,
            NextToken: nextToken,
          }),
        ),
      );
      for (const resource of page.TenantResources ?? []) {
        if (resource.ResourceArn) arns.push(resource.ResourceArn);
      }
      nextToken = page.NextToken;
    } while (nextToken);

    const identityPrefix = `${this.arnPrefix}identity/`;
    return {
      sendingStatus:
        found.Tenant.SendingStatus === 'DISABLED' ? 'DISABLED' : 'ENABLED',
      configurationSetAssociated: arns.includes(
        this.configurationSetArn(tenantName),
      ),
      // Domain identities only: an address identity has an `@`.
      domains: arns
        .filter((arn) => arn.startsWith(identityPrefix))
        .map((arn) => arn.slice(identityPrefix.length))
        .filter((name) => name.includes('.') && !name.includes('@')),
    };
  }

  async associateDomain(tenantName: string, domain: string): Promise<void> {
    await this.associate(tenantName, this.identityArn(domain));
  }

  async dissociateDomain(tenantName: string, domain: string): Promise<void> {
    await this.call(() =>
      this.client.send(
        new DeleteTenantResourceAssociationCommand({
          TenantName: tenantName,
          ResourceArn: this.identityArn(domain),
        }),
      ),
    ).catch(tolerate('NotFoundException'));
  }

  async getAccount(): Promise<ProviderAccount> {
    const { SendQuota } = await this.call(() =>
      this.client.send(new GetAccountCommand({})),
    );
    return {
      max24HourSend: SendQuota?.Max24HourSend ?? 0,
      maxSendRate: SendQuota?.MaxSendRate ?? 0,
      sentLast24Hours: SendQuota?.SentLast24Hours ?? 0,
    };
  }

  private async associate(tenantName: string, arn: string): Promise<void> {
    await this.call(() =>
      this.client.send(
        new CreateTenantResourceAssociationCommand({
          TenantName: tenantName,
          ResourceArn: arn,
        }),
      ),
    )
      .catch(tolerate('AlreadyExistsException'))
      .catch((error: unknown) => {
        // The tenant or the resource does not exist (the port's contract).
        if (!isNamed(error, 'NotFoundException')) throw error;
        throw new NotFoundError(
          'provider.resourceMissing',
          `Cannot associate ${arn} with ${tenantName}: ${(error as Error).message}`,
          { cause: error },
        );
      });
  }

  private identityArn(domain: string): string {
    return `${this.arnPrefix}identity/${domain}`;
  }

  private configurationSetArn(name: string): string {
    return `${this.arnPrefix}configuration-set/${name}`;
  }

  /**
   * Runs one request; when the provider cannot be reached, throws
   * `ServiceUnavailableError` instead. Any other error passes unchanged.
   */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      throw new ServiceUnavailableError(
        'provider.unavailable',
        'The email provider cannot be reached right now',
        { cause: error },
      );
    }
  }
}
