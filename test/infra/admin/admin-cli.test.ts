import {
  CloudFormationClient,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseInvocation, UsageError } from '../../../infra/admin/commands.ts';
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
