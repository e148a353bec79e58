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
