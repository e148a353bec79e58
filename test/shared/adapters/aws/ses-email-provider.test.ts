import {
  AlreadyExistsException,
  BadRequestException,
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  CreateEmailIdentityCommand,
  CreateTenantCommand,
  CreateTenantResourceAssociationCommand,
  DeleteEmailIdentityCommand,
  DeleteTenantResourceAssociationCommand,
  GetAccountCommand,
  GetEmailIdentityCommand,
  type GetEmailIdentityCommandOutput,
  GetTenantCommand,
  InternalServiceErrorException,
  LimitExceededException,
  ListTenantResourcesCommand,
  NotFoundException,
  PutConfigurationSetTrackingOptionsCommand,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
  SESv2ServiceException,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SesEmailProvider } from '../../../../shared/adapters/aws/ses-email-provider.ts';
import {
  RuleViolationError,
  ServiceUnavailableError,
} from '../../../../shared/errors.ts';

const client = new SESv2Client({ region: 'eu-west-1' });
const ses = mockClient(client);
const location = { region: 'eu-west-1', accountId: '123456789012' };
const provider = () => new SesEmailProvider(client, location);

const ARN = 'arn:aws:ses:eu-west-1:123456789012';

/** An SES exception as the SDK deserialises it. */
const alreadyExists = () =>
  new AlreadyExistsException({
    message: 'exists',
    $metadata: { httpStatusCode: 400 },
  });
const notFound = () =>
  new NotFoundException({
    message: 'not found',
    $metadata: { httpStatusCode: 404 },
  });

/** A verified identity with Easy DKIM tokens and a MAIL FROM domain. */
const identity = (
  overrides: Partial<GetEmailIdentityCommandOutput> = {},
): Partial<GetEmailIdentityCommandOutput> => ({
  IdentityType: 'DOMAIN',
  DkimAttributes: {
    Status: 'SUCCESS',
    Tokens: ['tok1', 'tok2', 'tok3'],
  },
  MailFromAttributes: {
    MailFromDomain: 'bounce.acme.example',
    MailFromDomainStatus: 'SUCCESS',
    BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
  },
  ...overrides,
});

describe('SesEmailProvider', () => {
  beforeEach(() => ses.reset());

  describe('createDomain', () => {
    it('creates the identity with Easy DKIM RSA 2048, sets MAIL FROM, then reads it', async () => {
      // Arrange
      ses.on(CreateEmailIdentityCommand).resolves({});
      ses.on(PutEmailIdentityMailFromAttributesCommand).resolves({});
      ses.on(GetEmailIdentityCommand).resolves(identity());

      // Act
      const domain = await provider().createDomain(
        'acme.example',
        'bounce.acme.example',
      );

      // Assert
      expect(
        ses.commandCalls(CreateEmailIdentityCommand)[0]?.args[0].input,
      ).toEqual({
        EmailIdentity: 'acme.example',
        DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
      });
      expect(
        ses.commandCalls(PutEmailIdentityMailFromAttributesCommand)[0]?.args[0]
          .input,
      ).toEqual({
        EmailIdentity: 'acme.example',
        MailFromDomain: 'bounce.acme.example',
        BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
      });
      expect(
        ses.commandCalls(GetEmailIdentityCommand)[0]?.args[0].input,
      ).toEqual({ EmailIdentity: 'acme.example' });
      expect(domain).toMatchObject({
        dkimStatus: 'SUCCESS',
        mailFromDomain: 'bounce.acme.example',
        mailFromStatus: 'SUCCESS',
      });
      expect(domain.records).toHaveLength(5);
    });

    it('only reads an identity that exists already with its MAIL FROM', async () => {
      // Arrange
      ses.on(CreateEmailIdentityCommand).rejects(alreadyExists());
      ses.on(GetEmailIdentityCommand).resolves(identity());

      // Act
      const domain = await provider().createDomain(
        'acme.example',
        'bounce.acme.example',
      );

      // Assert
      expect(
        ses.commandCalls(PutEmailIdentityMailFromAttributesCommand),
      ).toHaveLength(0);
      expect(domain.mailFromDomain).toBe('bounce.acme.example');
    });

    it('sets the MAIL FROM of an existing identity that lacks it (an interrupted attempt)', async () => {
      // Arrange
      ses.on(CreateEmailIdentityCommand).rejects(alreadyExists());
      ses.on(PutEmailIdentityMailFromAttributesCommand).resolves({});
      ses
        .on(GetEmailIdentityCommand)
        .resolvesOnce(identity({ MailFromAttributes: undefined }))
        .resolves(identity());

      // Act
      const domain = await provider().createDomain(
        'acme.example',
        'bounce.acme.example',
      );

      // Assert
      expect(
        ses.commandCalls(PutEmailIdentityMailFromAttributesCommand),
      ).toHaveLength(1);
      expect(domain.mailFromDomain).toBe('bounce.acme.example');
    });

    it('turns a rejected domain name into a 400 naming it, with the cause', async () => {
      // Arrange
      const invalid = new BadRequestException({
        message: 'Invalid domain',
        $metadata: { httpStatusCode: 400 },
      });
      ses.on(CreateEmailIdentityCommand).rejects(invalid);

      // Act
      const error = await provider()
        .createDomain('not a domain', 'bounce.x')
        .catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(RuleViolationError);
      expect((error as Error).message).toContain('not a domain');
      expect((error as Error).cause).toBe(invalid);
      expect(
        ses.commandCalls(PutEmailIdentityMailFromAttributesCommand),
      ).toHaveLength(0);
    });

    it('turns an exceeded identity limit into a 400 too', async () => {
      // Arrange
      const limit = new LimitExceededException({
        message: 'Too many identities',
        $metadata: { httpStatusCode: 400 },
      });
      ses.on(CreateEmailIdentityCommand).rejects(limit);

      // Act
      const error = await provider()
        .createDomain('acme.example', 'bounce.x')
        .catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(RuleViolationError);
      expect((error as Error).cause).toBe(limit);
    });
  });

  describe('getDomain', () => {
    it('lists three DKIM CNAMEs, then the MAIL FROM MX and TXT', async () => {
      // Arrange
      ses.on(GetEmailIdentityCommand).resolves(identity());

      // Act
      const domain = await provider().getDomain('acme.example');

      // Assert
      expect(domain?.records).toEqual([
        {
          type: 'CNAME',
          name: 'tok1._domainkey.acme.example',
          value: 'tok1.dkim.amazonses.com',
          purpose: 'dkim',
        },
        {
          type: 'CNAME',
          name: 'tok2._domainkey.acme.example',
          value: 'tok2.dkim.amazonses.com',
          purpose: 'dkim',
        },
        {
          type: 'CNAME',
          name: 'tok3._domainkey.acme.example',
          value: 'tok3.dkim.amazonses.com',
          purpose: 'dkim',
        },
        {
          type: 'MX',
          name: 'bounce.acme.example',
          value: 'feedback-smtp.eu-west-1.amazonses.com',
          priority: 10,
          purpose: 'mail_from',
        },
        {
          type: 'TXT',
          name: 'bounce.acme.example',
          value: 'v=spf1 include:amazonses.com ~all',
          purpose: 'mail_from',
        },
      ]);
    });

    it('points the DKIM CNAMEs into the signing zone SES names, if any', async () => {
      // Arrange
      ses.on(GetEmailIdentityCommand).resolves(
        identity({
          DkimAttributes: {
            Status: 'PENDING',
            Tokens: ['tok1'],
            SigningHostedZone: 'dkim.af-south-1.amazonses.com',
          },
        }),
      );

      // Act
      const domain = await provider().getDomain('acme.example');

      // Assert
      expect(domain?.records[0]?.value).toBe(
        'tok1.dkim.af-south-1.amazonses.com',
      );
    });

    it('has no MAIL FROM records or statuses when none is set', async () => {
      // Arrange
      ses
        .on(GetEmailIdentityCommand)
        .resolves(identity({ MailFromAttributes: undefined }));

      // Act
      const domain = await provider().getDomain('acme.example');

      // Assert
      expect(domain).toMatchObject({
        mailFromDomain: null,
        mailFromStatus: null,
      });
      expect(domain?.records.map((r) => r.type)).toEqual([
        'CNAME',
        'CNAME',
        'CNAME',
      ]);
    });

    it.each([
      ['SUCCESS', 'SUCCESS'],
      ['FAILED', 'FAILED'],
      ['PENDING', 'PENDING'],
      ['TEMPORARY_FAILURE', 'PENDING'],
      ['NOT_STARTED', 'PENDING'],
      [undefined, 'PENDING'],
    ] as const)('maps DKIM status %s to %s', async (status, expected) => {
      // Arrange
      ses
        .on(GetEmailIdentityCommand)
        .resolves(identity({ DkimAttributes: { Status: status, Tokens: [] } }));

      // Act
      const domain = await provider().getDomain('acme.example');

      // Assert
      expect(domain?.dkimStatus).toBe(expected);
    });

    it.each([
      ['SUCCESS', 'SUCCESS'],
      ['FAILED', 'FAILED'],
      ['PENDING', 'PENDING'],
      ['TEMPORARY_FAILURE', 'PENDING'],
    ] as const)('maps MAIL FROM status %s to %s', async (status, expected) => {
      // Arrange
      ses.on(GetEmailIdentityCommand).resolves(
        identity({
          MailFromAttributes: {
            MailFromDomain: 'bounce.acme.example',
            MailFromDomainStatus: status,
            BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
          },
        }),
      );

      // Act
      const domain = await provider().getDomain('acme.example');

      // Assert
      expect(domain?.mailFromStatus).toBe(expected);
    });

    it('answers undefined for an identity SES does not have', async () => {
      // Arrange
      ses.on(GetEmailIdentityCommand).rejects(notFound());

      // Act
      const domain = await provider().getDomain('acme.example');

      // Assert
      expect(domain).toBeUndefined();
    });
  });

  describe('deleteDomain', () => {
    it('deletes the identity', async () => {
      // Arrange
      ses.on(DeleteEmailIdentityCommand).resolves({});

      // Act
      await provider().deleteDomain('acme.example');

      // Assert
      expect(
        ses.commandCalls(DeleteEmailIdentityCommand)[0]?.args[0].input,
      ).toEqual({ EmailIdentity: 'acme.example' });
    });

    it('is done when the identity is gone already', async () => {
      // Arrange
      ses.on(DeleteEmailIdentityCommand).rejects(notFound());

      // Act
      const result = provider().deleteDomain('acme.example');

      // Assert
      await expect(result).resolves.toBeUndefined();
    });
  });

  describe('ensureTenant', () => {
    it('creates the configuration set publishing every event to the default event bus, and the tenant, and associates them', async () => {
      // Arrange
      ses.on(CreateConfigurationSetCommand).resolves({});
      ses.on(CreateConfigurationSetEventDestinationCommand).resolves({});
      ses.on(CreateTenantCommand).resolves({});
      ses.on(CreateTenantResourceAssociationCommand).resolves({});

      // Act
      await provider().ensureTenant('org-1');

      // Assert
      expect(
        ses.commandCalls(CreateConfigurationSetCommand)[0]?.args[0].input,
      ).toEqual({ ConfigurationSetName: 'org-1' });
      expect(
        ses.commandCalls(CreateConfigurationSetEventDestinationCommand)[0]
          ?.args[0].input,
      ).toEqual({
        ConfigurationSetName: 'org-1',
        EventDestinationName: 'events',
        EventDestination: {
          Enabled: true,
          MatchingEventTypes: expect.arrayContaining([
            'BOUNCE',
            'COMPLAINT',
            'DELIVERY',
            'OPEN',
            'CLICK',
          ]),
          EventBridgeDestination: {
            EventBusArn: `${ARN.replace(':ses:', ':events:')}:event-bus/default`,
          },
        },
      });
      expect(ses.commandCalls(CreateTenantCommand)[0]?.args[0].input).toEqual({
        TenantName: 'org-1',
      });
      expect(
        ses.commandCalls(CreateTenantResourceAssociationCommand)[0]?.args[0]
          .input,
      ).toEqual({
        TenantName: 'org-1',
        ResourceArn: `${ARN}:configuration-set/org-1`,
      });
    });

    it('goes through when everything exists already', async () => {
      // Arrange
      ses.on(CreateConfigurationSetCommand).rejects(alreadyExists());
      ses
        .on(CreateConfigurationSetEventDestinationCommand)
        .rejects(alreadyExists());
      ses.on(CreateTenantCommand).rejects(alreadyExists());
      ses.on(CreateTenantResourceAssociationCommand).rejects(alreadyExists());

      // Act
      const result = provider().ensureTenant('org-1');

      // Assert
      await expect(result).resolves.toBeUndefined();
      expect(
        ses.commandCalls(CreateTenantResourceAssociationCommand),
      ).toHaveLength(1);
    });

    it("names the operator's tracking domain on a new set, and puts it on one that exists", async () => {
      // Arrange
      ses
        .on(CreateConfigurationSetCommand)
        .resolvesOnce({})
        .rejects(alreadyExists());
      ses.on(PutConfigurationSetTrackingOptionsCommand).resolves({});
      ses.on(CreateConfigurationSetEventDestinationCommand).resolves({});
      ses.on(CreateTenantCommand).resolves({});
      ses.on(CreateTenantResourceAssociationCommand).resolves({});
      const tracked = new SesEmailProvider(client, {
        region: 'us-east-1',
        accountId: '123456789012',
        tracking: { domain: 'track.example.com', httpsPolicy: 'REQUIRE' },
      });

      // Act
      await tracked.ensureTenant('org-1');
      await tracked.ensureTenant('org-2');

      // Assert
      expect(
        ses.commandCalls(CreateConfigurationSetCommand)[0]?.args[0].input,
      ).toEqual({
        ConfigurationSetName: 'org-1',
        TrackingOptions: {
          CustomRedirectDomain: 'track.example.com',
          HttpsPolicy: 'REQUIRE',
        },
      });
      const puts = ses.commandCalls(PutConfigurationSetTrackingOptionsCommand);
      expect(puts.map((call) => call.args[0].input)).toEqual([
        {
          ConfigurationSetName: 'org-2',
          CustomRedirectDomain: 'track.example.com',
          HttpsPolicy: 'REQUIRE',
        },
      ]);
    });

    it('puts no tracking options without a tracking domain', async () => {
      // Arrange
      ses.on(CreateConfigurationSetCommand).rejects(alreadyExists());
      ses.on(CreateConfigurationSetEventDestinationCommand).resolves({});
      ses.on(CreateTenantCommand).resolves({});
      ses.on(CreateTenantResourceAssociationCommand).resolves({});

      // Act
      await provider().ensureTenant('org-1');

      // Assert
      expect(
        ses.commandCalls(PutConfigurationSetTrackingOptionsCommand),
      ).toHaveLength(0);
    });

    it('builds ARNs in the given partition', async () => {
      // Arrange
      ses.on(CreateConfigurationSetCommand).resolves({});
      ses.on(CreateTenantCommand).resolves({});
      ses.on(CreateTenantResourceAssociationCommand).resolves({});
      const china = new SesEmailProvider(client, {
        region: 'cn-north-1',
        accountId: '123456789012',
        partition: 'aws-cn',
      });

      // Act
      await china.ensureTenant('org-1');

      // Assert
      expect(
        ses.commandCalls(CreateTenantResourceAssociationCommand)[0]?.args[0]
          .input.ResourceArn,
      ).toBe('arn:aws-cn:ses:cn-north-1:123456789012:configuration-set/org-1');
    });
  });

  describe('getTenant', () => {
    it('reads the status and the associated set and domains, page by page', async () => {
      // Arrange
      ses.on(GetTenantCommand).resolves({
        Tenant: { TenantName: 'org-1', SendingStatus: 'ENABLED' },
      });
      ses
        .on(ListTenantResourcesCommand)
        .resolvesOnce({
          TenantResources: [
            {
              ResourceType: 'CONFIGURATION_SET',
              ResourceArn: `${ARN}:configuration-set/org-1`,
            },
            {
              ResourceType: 'EMAIL_IDENTITY',
              ResourceArn: `${ARN}:identity/acme.example`,
            },
          ],
          NextToken: 'page-2',
        })
        .resolvesOnce({
          TenantResources: [
            {
              ResourceType: 'EMAIL_IDENTITY',
              ResourceArn: `${ARN}:identity/mail.acme.example`,
            },
            {
              ResourceType: 'EMAIL_IDENTITY',
              ResourceArn: `${ARN}:identity/someone@acme.example`,
            },
            {
              ResourceType: 'EMAIL_TEMPLATE',
              ResourceArn: `${ARN}:template/welcome`,
            },
          ],
        });

      // Act
      const tenant = await provider().getTenant('org-1');

      // Assert
      expect(tenant).toEqual({
        sendingStatus: 'ENABLED',
        configurationSetAssociated: true,
        domains: ['acme.example', 'mail.acme.example'],
      });
      expect(ses.commandCalls(GetTenantCommand)[0]?.args[0].input).toEqual({
        TenantName: 'org-1',
      });
      const pages = ses
        .commandCalls(ListTenantResourcesCommand)
        .map((call) => call.args[0].input);
      expect(pages).toEqual([
        { TenantName: 'org-1', NextToken: undefined },
        { TenantName: 'org-1', NextToken: 'page-2' },
      ]);
    });

    it('sees a missing configuration set association', async () => {
      // Arrange
      ses.on(GetTenantCommand).resolves({
        Tenant: { TenantName: 'org-1', SendingStatus: 'ENABLED' },
      });
      ses.on(ListTenantResourcesCommand).resolves({
        TenantResources: [
          {
            ResourceType: 'CONFIGURATION_SET',
            ResourceArn: `${ARN}:configuration-set/org-2`,
          },
        ],
      });

      // Act
      const tenant = await provider().getTenant('org-1');

      // Assert
      expect(tenant).toEqual({
        sendingStatus: 'ENABLED',
        configurationSetAssociated: false,
        domains: [],
      });
    });

    it.each([
      ['ENABLED', 'ENABLED'],
      ['REINSTATED', 'ENABLED'],
      ['DISABLED', 'DISABLED'],
    ] as const)('maps sending status %s to %s', async (status, expected) => {
      // Arrange
      ses.on(GetTenantCommand).resolves({
        Tenant: { TenantName: 'org-1', SendingStatus: status },
      });
      ses.on(ListTenantResourcesCommand).resolves({});

      // Act
      const tenant = await provider().getTenant('org-1');

      // Assert
      expect(tenant?.sendingStatus).toBe(expected);
    });

    it('answers undefined for a tenant SES does not have', async () => {
      // Arrange
      ses.on(GetTenantCommand).rejects(notFound());

      // Act
      const tenant = await provider().getTenant('org-1');

      // Assert
      expect(tenant).toBeUndefined();
      expect(ses.commandCalls(ListTenantResourcesCommand)).toHaveLength(0);
    });
  });

  describe('associateDomain and dissociateDomain', () => {
    it("associates the domain's identity ARN with the tenant", async () => {
      // Arrange
      ses.on(CreateTenantResourceAssociationCommand).resolves({});

      // Act
      await provider().associateDomain('org-1', 'acme.example');

      // Assert
      expect(
        ses.commandCalls(CreateTenantResourceAssociationCommand)[0]?.args[0]
          .input,
      ).toEqual({
        TenantName: 'org-1',
        ResourceArn: `${ARN}:identity/acme.example`,
      });
    });

    it('is done when the association exists already', async () => {
      // Arrange
      ses.on(CreateTenantResourceAssociationCommand).rejects(alreadyExists());

      // Act
      const result = provider().associateDomain('org-1', 'acme.example');

      // Assert
      await expect(result).resolves.toBeUndefined();
    });

    it("removes the association of the domain's identity", async () => {
      // Arrange
      ses.on(DeleteTenantResourceAssociationCommand).resolves({});

      // Act
      await provider().dissociateDomain('org-1', 'acme.example');

      // Assert
      expect(
        ses.commandCalls(DeleteTenantResourceAssociationCommand)[0]?.args[0]
          .input,
      ).toEqual({
        TenantName: 'org-1',
        ResourceArn: `${ARN}:identity/acme.example`,
      });
    });

    it('is done when there is no association to remove', async () => {
      // Arrange
      ses.on(DeleteTenantResourceAssociationCommand).rejects(notFound());

      // Act
      const result = provider().dissociateDomain('org-1', 'acme.example');

      // Assert
      await expect(result).resolves.toBeUndefined();
    });
  });

  describe('getAccount', () => {
    it("reads the account's send quota", async () => {
      // Arrange
      ses.on(GetAccountCommand).resolves({
        SendQuota: {
          Max24HourSend: 50_000,
          MaxSendRate: 14,
          SentLast24Hours: 1_234,
        },
      });

      // Act
      const account = await provider().getAccount();

      // Assert
      expect(account).toEqual({
        max24HourSend: 50_000,
        maxSendRate: 14,
        sentLast24Hours: 1_234,
      });
    });
  });

  describe('when SES cannot be reached', () => {
    const networkError = (code: string) =>
      Object.assign(new Error(`connect ${code} 10.0.0.1:443`), {
        code,
        $metadata: { attempts: 3, totalRetryDelay: 300 },
      });
    const timeout = () =>
      Object.assign(new Error('Connection timed out after 1000 ms'), {
        name: 'TimeoutError',
      });
    const serverError = (name: string, status: number) =>
      new SESv2ServiceException({
        name,
        $fault: 'server',
        message: name,
        $metadata: { httpStatusCode: status },
      });

    it.each([
      ['connection refused', () => networkError('ECONNREFUSED')],
      ['DNS failure', () => networkError('ENOTFOUND')],
      ['connection timeout', () => networkError('ETIMEDOUT')],
      ['SDK timeout', timeout],
      ['503 ServiceUnavailable', () => serverError('ServiceUnavailable', 503)],
      ['500 InternalFailure', () => serverError('InternalFailure', 500)],
      [
        '500 InternalServiceErrorException',
        () =>
          new InternalServiceErrorException({
            message: 'internal',
            $metadata: { httpStatusCode: 500 },
          }),
      ],
      [
        'throttling',
        () =>
          new TooManyRequestsException({
            message: 'slow down',
            $metadata: { httpStatusCode: 429 },
          }),
      ],
    ])('throws ServiceUnavailableError on %s', async (_, makeError) => {
      // Arrange
      const cause = makeError();
      ses.on(GetAccountCommand).rejects(cause);
      ses.on(GetEmailIdentityCommand).rejects(cause);

      // Act
      const account = provider().getAccount();
      const domain = provider().getDomain('acme.example');

      // Assert
      for (const result of [account, domain]) {
        const error = await result.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ServiceUnavailableError);
        expect(error).toMatchObject({
          code: 'provider.unavailable',
          message: 'The email provider cannot be reached right now',
          cause,
        });
      }
    });

    it('maps an outage during an idempotent step too', async () => {
      // Arrange
      ses.on(CreateConfigurationSetCommand).rejects(networkError('ECONNRESET'));

      // Act
      const result = provider().ensureTenant('org-1');

      // Assert
      await expect(result).rejects.toBeInstanceOf(ServiceUnavailableError);
      expect(ses.commandCalls(CreateTenantCommand)).toHaveLength(0);
    });

    it('does not map a client error such as BadRequestException', async () => {
      // Arrange
      const invalid = new BadRequestException({
        message: 'bad',
        $metadata: { httpStatusCode: 400 },
      });
      ses.on(GetEmailIdentityCommand).rejects(invalid);

      // Act
      const result = provider().getDomain('acme.example');

      // Assert
      await expect(result).rejects.toBe(invalid);
    });

    it('does not map an error of our own making', async () => {
      // Arrange
      const bug = new TypeError('x is undefined');
      ses.on(GetAccountCommand).rejects(bug);

      // Act
      const result = provider().getAccount();

      // Assert
      await expect(result).rejects.toBe(bug);
    });
  });
});
