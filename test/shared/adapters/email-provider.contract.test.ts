/**
 * The contract of the EmailProvider port, run against both implementations:
 * the SES v2 adapter over a mocked SESv2Client that answers as SES does
 * (NotFoundException, AlreadyExistsException, BadRequestException, 5xx),
 * and the local stand-in over its state file. Same calls, same results,
 * same error types: the local stack cannot drift from SES.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  AlreadyExistsException,
  BadRequestException,
  CreateConfigurationSetCommand,
  CreateEmailIdentityCommand,
  CreateTenantCommand,
  CreateTenantResourceAssociationCommand,
  DeleteEmailIdentityCommand,
  DeleteTenantResourceAssociationCommand,
  GetAccountCommand,
  GetEmailIdentityCommand,
  GetTenantCommand,
  InternalServiceErrorException,
  ListTenantResourcesCommand,
  NotFoundException,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, inject, it } from 'vitest';
import { SesEmailProvider } from '../../../shared/adapters/aws/ses-email-provider.ts';
import {
  LocalEmailProvider,
  setOutage,
  setTenantStatus,
} from '../../../shared/adapters/local/local-email-provider.ts';
import {
  NotFoundError,
  RuleViolationError,
  ServiceUnavailableError,
} from '../../../shared/errors.ts';
import type {
  DnsRecord,
  DnsResolver,
  EmailProvider,
} from '../../../shared/sending/provider.ts';

/** One implementation, and the hands that change the world around it. */
interface Subject {
  provider: EmailProvider;
  /** Publishes the records a domain asks for (DKIM CNAMEs, MAIL FROM MX). */
  publish(records: DnsRecord[]): Promise<void>;
  setOutage(on: boolean): Promise<void>;
  suspend(tenantName: string): Promise<void>;
}

// The region "local" makes both implementations name the same MX exchange.
const REGION = 'local';
const ACCOUNT = '123456789012';
const ARN = `arn:aws:ses:${REGION}:${ACCOUNT}:`;

const sesError = <T>(
  Type: new (options: {
    message: string;
    $metadata: { httpStatusCode: number };
  }) => T,
  status: number,
  message: string,
) => new Type({ message, $metadata: { httpStatusCode: status } });

/**
 * A mocked SESv2Client with SES's state and answers: identities (DKIM and
 * MAIL FROM turn SUCCESS once their records are published), configuration
 * sets, tenants and their resource associations.
 */
const sesSubject = (): Subject => {
  const client = new SESv2Client({ region: REGION });
  const ses = mockClient(client);
  const identities = new Map<
    string,
    { tokens: string[]; dkim: string; mailFrom?: string; mailFromOk: boolean }
  >();
  const configurationSets = new Set<string>();
  const tenants = new Map<string, { status: string; arns: Set<string> }>();
  const published = new Set<string>();
  let outage = false;

  /** Every handler meets the outage first, as every SES call would. */
  const answer =
    <I, O>(handle: (input: I) => O) =>
    (input: I) => {
      if (outage) {
        throw sesError(InternalServiceErrorException, 500, 'internal error');
      }
      return handle(input);
    };
  const notFound = (what: string) =>
    sesError(NotFoundException, 404, `${what} does not exist`);
  const exists = (what: string) =>
    sesError(AlreadyExistsException, 400, `${what} already exists`);
  const resourceExists = (arn: string) =>
    arn.startsWith(`${ARN}identity/`)
      ? identities.has(arn.slice(`${ARN}identity/`.length))
      : configurationSets.has(arn.slice(`${ARN}configuration-set/`.length));

  ses.on(CreateEmailIdentityCommand).callsFake(
    answer(({ EmailIdentity = '' }) => {
      if (!/^[a-z0-9.-]+\.[a-z]{2,63}$/.test(EmailIdentity)) {
        throw sesError(BadRequestException, 400, 'Invalid domain name');
      }
      if (identities.has(EmailIdentity)) throw exists(EmailIdentity);
      identities.set(EmailIdentity, {
        tokens: [1, 2, 3].map(() => randomUUID().replaceAll('-', '')),
        dkim: 'PENDING',
        mailFromOk: false,
      });
      return { IdentityType: 'DOMAIN', VerifiedForSendingStatus: false };
    }),
  );
  ses.on(PutEmailIdentityMailFromAttributesCommand).callsFake(
    answer(({ EmailIdentity = '', MailFromDomain }) => {
      const identity = identities.get(EmailIdentity);
      if (!identity) throw notFound(EmailIdentity);
      identity.mailFrom = MailFromDomain;
      return {};
    }),
  );
  ses.on(GetEmailIdentityCommand).callsFake(
    answer(({ EmailIdentity = '' }) => {
      const identity = identities.get(EmailIdentity);
      if (!identity) throw notFound(EmailIdentity);
      return {
        IdentityType: 'DOMAIN',
        DkimAttributes: { Status: identity.dkim, Tokens: identity.tokens },
        ...(identity.mailFrom
          ? {
              MailFromAttributes: {
                MailFromDomain: identity.mailFrom,
                MailFromDomainStatus: identity.mailFromOk
                  ? 'SUCCESS'
                  : 'PENDING',
                BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
              },
            }
          : {}),
      };
    }),
  );
  ses.on(DeleteEmailIdentityCommand).callsFake(
    answer(({ EmailIdentity = '' }) => {
      if (!identities.delete(EmailIdentity)) throw notFound(EmailIdentity);
      return {};
    }),
  );
  ses.on(CreateConfigurationSetCommand).callsFake(
    answer(({ ConfigurationSetName = '' }) => {
      if (configurationSets.has(ConfigurationSetName)) {
        throw exists(ConfigurationSetName);
      }
      configurationSets.add(ConfigurationSetName);
      return {};
    }),
  );
  ses.on(CreateTenantCommand).callsFake(
    answer(({ TenantName = '' }) => {
      if (tenants.has(TenantName)) throw exists(TenantName);
      tenants.set(TenantName, { status: 'ENABLED', arns: new Set() });
      return { TenantName, SendingStatus: 'ENABLED' };
    }),
  );
  ses.on(GetTenantCommand).callsFake(
    answer(({ TenantName = '' }) => {
      const tenant = tenants.get(TenantName);
      if (!tenant) throw notFound(TenantName);
      return { Tenant: { TenantName, SendingStatus: tenant.status } };
    }),
  );
  ses.on(ListTenantResourcesCommand).callsFake(
    answer(({ TenantName = '' }) => {
      const tenant = tenants.get(TenantName);
      if (!tenant) throw notFound(TenantName);
      return {
        TenantResources: [...tenant.arns].map((ResourceArn) => ({
          ResourceArn,
          ResourceType: ResourceArn.includes(':identity/')
            ? 'EMAIL_IDENTITY'
            : 'CONFIGURATION_SET',
        })),
      };
    }),
  );
  ses.on(CreateTenantResourceAssociationCommand).callsFake(
    answer(({ TenantName = '', ResourceArn = '' }) => {
      const tenant = tenants.get(TenantName);
      if (!tenant) throw notFound(TenantName);
      if (!resourceExists(ResourceArn)) throw notFound(ResourceArn);
      if (tenant.arns.has(ResourceArn)) throw exists(ResourceArn);
      tenant.arns.add(ResourceArn);
      return {};
    }),
  );
  ses.on(DeleteTenantResourceAssociationCommand).callsFake(
    answer(({ TenantName = '', ResourceArn = '' }) => {
      const tenant = tenants.get(TenantName);
      if (!tenant?.arns.delete(ResourceArn)) throw notFound(ResourceArn);
      return {};
    }),
  );
  ses.on(GetAccountCommand).callsFake(
    answer(() => ({
      SendQuota: { Max24HourSend: 200, MaxSendRate: 1, SentLast24Hours: 0 },
    })),
  );

  return {
    provider: new SesEmailProvider(client, {
      region: REGION,
      accountId: ACCOUNT,
    }),
    // SES reads public DNS: DKIM succeeds once all three CNAMEs of Easy DKIM
    // are found, the MAIL FROM once its MX is.
    publish: async (records) => {
      for (const record of records) {
        if (record.type === 'CNAME') published.add(record.name);
        for (const identity of identities.values()) {
          if (record.type === 'MX' && identity.mailFrom === record.name) {
            identity.mailFromOk = true;
          }
        }
      }
      for (const [domain, identity] of identities) {
        const names = identity.tokens.map((t) => `${t}._domainkey.${domain}`);
        if (names.every((name) => published.has(name))) {
          identity.dkim = 'SUCCESS';
        }
      }
    },
    setOutage: async (on) => {
      outage = on;
    },
    suspend: async (tenantName) => {
      const tenant = tenants.get(tenantName);
      if (tenant) tenant.status = 'DISABLED';
    },
  };
};

/** The local stand-in, on a state file of its own and an in-memory DNS. */
const localSubject = (): Subject => {
  const stateFile = join(inject('scratchDir'), `contract-${randomUUID()}.json`);
  const cnames = new Map<string, string>();
  const mx = new Map<string, string>();
  const dns: DnsResolver = {
    resolveTxt: async () => [],
    resolveCname: async (name) =>
      cnames.has(name) ? [`${cnames.get(name)}`] : [],
    resolveMx: async (name) =>
      mx.has(name) ? [{ exchange: `${mx.get(name)}`, priority: 10 }] : [],
  };
  return {
    provider: new LocalEmailProvider(stateFile, dns),
    publish: async (records) => {
      for (const record of records) {
        if (record.type === 'CNAME') cnames.set(record.name, record.value);
        if (record.type === 'MX') mx.set(record.name, record.value);
      }
    },
    setOutage: (on) => setOutage(stateFile, on),
    suspend: (tenantName) => setTenantStatus(stateFile, tenantName, 'DISABLED'),
  };
};

const DOMAIN = 'acme.example';
const MAIL_FROM = `bounce.${DOMAIN}`;

describe.each([
  ['SesEmailProvider (mocked SESv2Client)', sesSubject],
  ['LocalEmailProvider (state file)', localSubject],
])('EmailProvider contract: %s', (_, subjectOf) => {
  it('creates a domain PENDING with three DKIM CNAMEs, then the MAIL FROM MX and TXT; creating it again only reads it', async () => {
    // Arrange
    const { provider } = subjectOf();
    // Act
    const created = await provider.createDomain(DOMAIN, MAIL_FROM);
    const again = await provider.createDomain(DOMAIN, MAIL_FROM);
    const read = await provider.getDomain(DOMAIN);
    // Assert
    expect(created).toMatchObject({
      dkimStatus: 'PENDING',
      mailFromDomain: MAIL_FROM,
      mailFromStatus: 'PENDING',
    });
    expect(created.records.map((r) => [r.type, r.purpose])).toEqual([
      ['CNAME', 'dkim'],
      ['CNAME', 'dkim'],
      ['CNAME', 'dkim'],
      ['MX', 'mail_from'],
      ['TXT', 'mail_from'],
    ]);
    for (const record of created.records.slice(0, 3)) {
      expect(record.name).toMatch(/^[a-z0-9]+\._domainkey\.acme\.example$/);
      expect(record.value).toMatch(/\.dkim\.amazonses\.com$/);
    }
    expect(created.records.slice(3)).toEqual([
      {
        type: 'MX',
        name: MAIL_FROM,
        value: 'feedback-smtp.local.amazonses.com',
        priority: 10,
        purpose: 'mail_from',
      },
      {
        type: 'TXT',
        name: MAIL_FROM,
        value: 'v=spf1 include:amazonses.com ~all',
        purpose: 'mail_from',
      },
    ]);
    expect(again).toEqual(created);
    expect(read).toEqual(created);
  });

  it('creating an existing domain only reads it: another MAIL FROM does not replace its own', async () => {
    // Arrange
    const { provider } = subjectOf();
    const created = await provider.createDomain(DOMAIN, MAIL_FROM);
    // Act
    const again = await provider.createDomain(DOMAIN, `mail.${DOMAIN}`);
    // Assert
    expect(again).toEqual(created);
    expect(await provider.getDomain(DOMAIN)).toMatchObject({
      mailFromDomain: MAIL_FROM,
    });
  });

  it('reports DKIM and MAIL FROM SUCCESS once their records are published', async () => {
    const { provider, publish } = subjectOf();
    const created = await provider.createDomain(DOMAIN, MAIL_FROM);
    await publish(created.records);
    expect(await provider.getDomain(DOMAIN)).toMatchObject({
      dkimStatus: 'SUCCESS',
      mailFromStatus: 'SUCCESS',
    });
  });

  it('keeps DKIM PENDING while only some of its three CNAMEs are published', async () => {
    // Arrange
    const { provider, publish } = subjectOf();
    const created = await provider.createDomain(DOMAIN, MAIL_FROM);
    // Act
    await publish(created.records.slice(0, 2));
    // Assert
    expect(await provider.getDomain(DOMAIN)).toMatchObject({
      dkimStatus: 'PENDING',
    });
  });

  it('answers undefined for an unknown domain; deleting is idempotent', async () => {
    const { provider } = subjectOf();
    expect(await provider.getDomain('nobody.example')).toBeUndefined();
    await provider.createDomain(DOMAIN, MAIL_FROM);
    await provider.deleteDomain(DOMAIN);
    await provider.deleteDomain(DOMAIN);
    expect(await provider.getDomain(DOMAIN)).toBeUndefined();
  });

  it('refuses a name that is not a domain with RuleViolationError', async () => {
    const { provider } = subjectOf();
    await expect(
      provider.createDomain('not a domain', 'bounce.not a domain'),
    ).rejects.toBeInstanceOf(RuleViolationError);
  });

  it('ensures a tenant with its configuration set, idempotently; an unknown tenant is undefined', async () => {
    const { provider } = subjectOf();
    await provider.ensureTenant('org-1');
    await provider.ensureTenant('org-1');
    expect(await provider.getTenant('org-1')).toEqual({
      sendingStatus: 'ENABLED',
      configurationSetAssociated: true,
      domains: [],
    });
    expect(await provider.getTenant('org-2')).toBeUndefined();
  });

  it('associates and dissociates a domain, both idempotently', async () => {
    const { provider } = subjectOf();
    await provider.createDomain(DOMAIN, MAIL_FROM);
    await provider.ensureTenant('org-1');
    await provider.associateDomain('org-1', DOMAIN);
    await provider.associateDomain('org-1', DOMAIN);
    const associated = await provider.getTenant('org-1');
    await provider.dissociateDomain('org-1', DOMAIN);
    await provider.dissociateDomain('org-1', DOMAIN);
    await provider.dissociateDomain('org-9', DOMAIN);
    expect(associated?.domains).toEqual([DOMAIN]);
    expect((await provider.getTenant('org-1'))?.domains).toEqual([]);
  });

  it('refuses to associate a missing tenant or identity with NotFoundError', async () => {
    const { provider } = subjectOf();
    await provider.createDomain(DOMAIN, MAIL_FROM);
    await provider.ensureTenant('org-1');
    await expect(
      provider.associateDomain('org-9', DOMAIN),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      provider.associateDomain('org-1', 'nobody.example'),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reports a suspended tenant as DISABLED', async () => {
    const { provider, suspend } = subjectOf();
    await provider.ensureTenant('org-1');
    await suspend('org-1');
    expect((await provider.getTenant('org-1'))?.sendingStatus).toBe('DISABLED');
  });

  it('answers the account quota in numbers', async () => {
    const { provider } = subjectOf();
    const account = await provider.getAccount();
    expect(account).toEqual({
      max24HourSend: expect.any(Number),
      maxSendRate: expect.any(Number),
      sentLast24Hours: expect.any(Number),
    });
    expect(account.maxSendRate).toBeGreaterThan(0);
  });

  it('throws ServiceUnavailableError from every call during an outage', async () => {
    // Arrange
    const { provider, setOutage: outage } = subjectOf();
    await provider.createDomain(DOMAIN, MAIL_FROM);
    await provider.ensureTenant('org-1');
    await outage(true);
    // Act
    const calls = [
      provider.createDomain('other.example', 'bounce.other.example'),
      provider.getDomain(DOMAIN),
      provider.deleteDomain(DOMAIN),
      provider.ensureTenant('org-1'),
      provider.getTenant('org-1'),
      provider.associateDomain('org-1', DOMAIN),
      provider.dissociateDomain('org-1', DOMAIN),
      provider.getAccount(),
    ];
    const results = await Promise.allSettled(calls);
    // Assert
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(
        ServiceUnavailableError,
      );
    }
  });
});
