import {
  CloudFormationClient,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  parseInvocation,
  USAGE,
  UsageError,
} from '../../../infra/admin/commands.ts';
import { describeDeployedStack } from '../../../infra/admin/targets.ts';
import type { AdminDeps } from '../../../shared/access/ports.ts';
import { NotFoundError, ValidationError } from '../../../shared/errors.ts';
import { createOrganization } from '../../../shared/organizations/organizations.ts';
import { createTestDeps } from '../../support/dynamo.ts';

describe('admin CLI: command line', () => {
  it('parses a command with its flags and target', () => {
    const invocation = parseInvocation([
      'member',
      'add',
      '--org',
      'o',
      '--email',
      'a@b.c',
      '--role',
      'admin',
      '--stack',
      'EmailMarketingApi',
    ]);
    expect(invocation.command.words).toBe('member add');
    expect(invocation.flags).toEqual({
      org: 'o',
      email: 'a@b.c',
      role: 'admin',
    });
    expect(invocation.stack).toBe('EmailMarketingApi');
  });

  it.each([
    [['frob'], 'Unknown command "frob"'],
    [['key', 'create', '--org', 'o'], 'needs --email'],
    [['sending', 'enable', '--org', 'o'], 'does not take --org'],
    [['org', 'create', '--bogus', 'x'], "Unknown option '--bogus'"],
  ])('refuses %j', (argv, message) => {
    expect(() => parseInvocation(argv)).toThrow(UsageError);
    expect(() => parseInvocation(argv)).toThrow(message);
  });
});

/** Runs a stack command line with the operator's deps. */
const runStackCommand = (admin: AdminDeps, argv: string[]) => {
  const { command, flags } = parseInvocation(argv);
  if (command.local) throw new Error(`"${command.words}" is local-only`);
  return command.run(admin, flags);
};

describe('admin CLI: org quota', () => {
  it('parses "org quota --org <id> --max24h <n>", and lists it in the usage text', () => {
    const invocation = parseInvocation(
      'org quota --org o --max24h 25000 --stack S'.split(' '),
    );
    expect(invocation.command.words).toBe('org quota');
    expect(invocation.command.local).toBeUndefined();
    expect(invocation.flags).toEqual({ org: 'o', max24h: '25000' });
    expect(USAGE).toContain('org quota --org <orgId> --max24h <emailsPer24h>');
  });

  it.each([
    [['org', 'quota', '--org', 'o'], 'needs --max24h'],
    [['org', 'quota', '--max24h', '5'], 'needs --org'],
    [
      ['org', 'quota', '--org', 'o', '--max24h', '5', '--rate', '1'],
      'does not take --rate',
    ],
  ])('refuses %j', (argv, message) => {
    expect(() => parseInvocation(argv)).toThrow(UsageError);
    expect(() => parseInvocation(argv)).toThrow(message);
  });

  it("sets the organization's 24-hour quota and prints it", async () => {
    // Arrange
    const { admin } = await createTestDeps();
    const org = await createOrganization(admin, { name: 'CLI quota' });

    // Act
    const printed = await runStackCommand(
      admin,
      `org quota --org ${org.id} --max24h 25000`.split(' '),
    );

    // Assert
    expect(printed).toEqual({ orgId: org.id, sendQuota24h: 25_000 });
    const stored = await admin.organizations.get(org.id);
    expect(stored?.sendQuota24h).toBe(25_000);
  });

  it('refuses an unknown organization, and a quota that is no positive integer', async () => {
    // Arrange
    const { admin } = await createTestDeps();
    const org = await createOrganization(admin, { name: 'CLI bad quota' });

    // Act
    const unknown = await runStackCommand(
      admin,
      'org quota --org 01a20000-0000-7000-8000-00000000dead --max24h 5'.split(
        ' ',
      ),
    ).catch((e: unknown) => e);
    const zero = await runStackCommand(
      admin,
      `org quota --org ${org.id} --max24h 0`.split(' '),
    ).catch((e: unknown) => e);

    // Assert
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(zero).toBeInstanceOf(ValidationError);
    expect((zero as Error).message).toBe(
      'Invalid request: max24h: must be a whole number from 1 to 10,000,000',
    );
  });
});

describe('admin CLI: keys (issue 32)', () => {
  it('parses "key create" with an optional name and scopes, and "key index", and lists them in the usage text', () => {
    // Act
    const create = parseInvocation(
      'key create --org o --email a@b.c --name CRM --scopes read,audience'.split(
        ' ',
      ),
    );
    const index = parseInvocation('key index --org o'.split(' '));
    // Assert
    expect(create.flags).toEqual({
      org: 'o',
      email: 'a@b.c',
      name: 'CRM',
      scopes: 'read,audience',
    });
    expect(index.command.words).toBe('key index');
    expect(USAGE).toContain(
      'key create --org <orgId> --email <email> [--name <keyName>] [--scopes <read,audience,…>]',
    );
    expect(USAGE).toContain('key index --org <orgId>');
  });

  it('creates a scoped key that GET /api-keys would show with its scopes', async () => {
    // Arrange
    const { admin } = await createTestDeps();
    const org = await createOrganization(admin, { name: 'CLI keys' });
    await runStackCommand(
      admin,
      `member add --org ${org.id} --email k@cli.test --role admin`.split(' '),
    );
    // Act
    const printed = (await runStackCommand(
      admin,
      `key create --org ${org.id} --email k@cli.test --scopes campaigns`.split(
        ' ',
      ),
    )) as { keyId: string; apiKey: string };
    const indexed = await runStackCommand(
      admin,
      `key index --org ${org.id}`.split(' '),
    );
    // Assert
    expect(await admin.access.getKey(printed.keyId)).toMatchObject({
      scopes: ['campaigns'],
      email: 'k@cli.test',
    });
    // Entered by its creation: nothing left to index.
    expect(indexed).toEqual({ indexed: 0, keyIds: [] });
  });
});

describe('admin CLI: local-only commands', () => {
  it('parses local dns set, with and without a priority', () => {
    const txt = parseInvocation([
      'local',
      'dns',
      'set',
      '--name',
      '_dmarc.example.test',
      '--type',
      'TXT',
      '--value',
      'v=DMARC1; p=none',
      '--data-dir',
      '/tmp/x',
    ]);
    const mx = parseInvocation(
      'local dns set --name b.example.test --type MX --value mx.test --priority 5'.split(
        ' ',
      ),
    );
    expect(txt.command).toMatchObject({ words: 'local dns set', local: true });
    expect(txt.flags).toEqual({
      name: '_dmarc.example.test',
      type: 'TXT',
      value: 'v=DMARC1; p=none',
    });
    expect(txt.dataDir).toBe('/tmp/x');
    expect(mx.flags).toEqual({
      name: 'b.example.test',
      type: 'MX',
      value: 'mx.test',
      priority: '5',
    });
  });

  it.each([
    ['local dns clear', {}],
    ['local provider suspend --org o', { org: 'o' }],
    ['local provider reinstate --org o', { org: 'o' }],
    ['local provider outage on', {}],
    ['local provider outage off', {}],
    ['local quota set --max24h 1000 --rate 5', { max24h: '1000', rate: '5' }],
    [
      'local provider simulate --machine-opens 0.3 --scanner-clicks 0.1',
      { 'machine-opens': '0.3', 'scanner-clicks': '0.1' },
    ],
  ])('parses "%s"', (line, flags) => {
    const invocation = parseInvocation(line.split(' '));
    expect(invocation.command.words).toBe(line.split(' --')[0]);
    expect(invocation.command.local).toBe(true);
    expect(invocation.flags).toEqual(flags);
  });

  it.each([
    [['local', 'dns', 'clear', '--stack', 'S'], 'does not take --stack'],
    [
      [
        'local',
        'quota',
        'set',
        '--max24h',
        '1',
        '--rate',
        '1',
        '--region',
        'r',
      ],
      'does not take --stack or --region',
    ],
    [
      ['local', 'provider', 'outage'],
      'Unknown command "local provider outage"',
    ],
    [['local', 'provider', 'outage', 'maybe'], 'Unknown command'],
    [
      ['local', 'dns', 'set', '--name', 'a.test', '--type', 'TXT'],
      'needs --value',
    ],
    [['local', 'quota', 'set', '--max24h', '1'], 'needs --rate'],
    [['local', 'dns', 'clear', '--priority', '1'], 'does not take --priority'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseInvocation(argv)).toThrow(UsageError);
    expect(() => parseInvocation(argv)).toThrow(message);
  });

  it('lists the local commands in the usage text', () => {
    expect(USAGE).toContain(
      'local dns set --name <name> --type <TXT|CNAME|MX> --value <value> [--priority <priority>]',
    );
    expect(USAGE).toContain('local provider outage on');
    expect(USAGE).toContain(
      'local quota set --max24h <emailsPer24h> --rate <emailsPerSecond>',
    );
    expect(USAGE).toContain(
      'local provider simulate [--bounces <share>] [--complaints <share>] [--machine-opens <share>] [--scanner-clicks <share>]',
    );
  });
});

describe('admin CLI: a deployed stack', () => {
  const client = new CloudFormationClient({ region: 'eu-west-1' });
  const cloudFormation = mockClient(client);
  beforeEach(() => cloudFormation.reset());

  it('finds the table and usage plan in the stack outputs', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'EmailMarketingApi',
          CreationTime: new Date(),
          StackStatus: 'CREATE_COMPLETE',
          Outputs: [
            { OutputKey: 'TableName', OutputValue: 'table-1' },
            { OutputKey: 'UsagePlanId', OutputValue: 'plan-1' },
            { OutputKey: 'ApiUrl', OutputValue: 'https://x/api/v1' },
          ],
        },
      ],
    });
    expect(await describeDeployedStack(client, 'EmailMarketingApi')).toEqual({
      tableName: 'table-1',
      usagePlanId: 'plan-1',
    });
  });

  it('explains a stack without the expected outputs', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [] });
    await expect(describeDeployedStack(client, 'Nope')).rejects.toThrow(
      'has no TableName/UsagePlanId outputs',
    );
  });
});
