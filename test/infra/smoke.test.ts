/**
 * The smoke journey (`npm run smoke`) in process: its HTTP goes to the real
 * handlers through the in-process client, with the asynchronous half
 * running as the local stack runs it (dispatcher, senders, the simulated
 * SES events and their consumer), so a pass here is the journey passing
 * on a working stack; broken organizations show how it fails and cleans up.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type LocalAsync, prepareLocalAsync } from '../../infra/local/async.ts';
import {
  type FetchLike,
  main,
  parseArgs,
  runSmoke,
  USAGE,
} from '../../infra/smoke/smoke.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { TEST_PUBLIC_API_URL } from '../support/dynamo.ts';

let client: ApiClient;
let asyncHalf: LocalAsync;

beforeAll(async () => {
  const scratch = inject('scratchDir');
  const id = randomUUID().slice(0, 8);
  const sentLogFile = join(scratch, `sent-smoke-${id}.jsonl`);
  asyncHalf = await prepareLocalAsync({
    sqsEndpoint: inject('sqsEndpoint'),
    sentLogFile,
    schedulesFile: join(scratch, `schedules-smoke-${id}.json`),
    clock: { now: () => new Date() },
    queuePrefix: `s${id}-`,
  });
  client = await createApiClient({ asyncHalf: { ...asyncHalf, sentLogFile } });
  asyncHalf.start(client.deps);
});

afterAll(async () => {
  await asyncHalf?.stop();
});

/**
 * A fetch that serves the API base URL in process; `before` runs ahead of
 * each request (to break the stack mid-journey).
 */
const inProcessFetch =
  (before?: (method: string, url: string) => Promise<void>): FetchLike =>
  async (url, init) => {
    await before?.(init.method, url);
    const target = new URL(url);
    const base = new URL(TEST_PUBLIC_API_URL).pathname;
    const answer = await client.call(
      init.method,
      target.pathname.slice(base.length),
      {
        ...(init.headers['x-api-key']
          ? { key: init.headers['x-api-key'] }
          : {}),
        ...(init.body === undefined ? {} : { rawBody: init.body }),
        ...(target.search
          ? { query: Object.fromEntries(target.searchParams) }
          : {}),
      },
    );
    return new Response(answer.body, {
      status: answer.status,
      headers: answer.headers,
    });
  };

/** An owner key of a new organization allowed to send. */
const organization = async () => {
  const org = await createOrganizationWithKeys(client, 'Smoke Co');
  return { orgId: org.orgId, key: org.ownerKey, memberKey: org.memberKey };
};

/** Runs the journey in process; its lines and result. */
const smoke = async (
  key: string,
  before?: (method: string, url: string) => Promise<void>,
) => {
  const lines: string[] = [];
  const result = await runSmoke(
    { api: TEST_PUBLIC_API_URL, key, timeoutMs: 20_000 },
    { fetch: inProcessFetch(before), print: (l) => lines.push(l), pollMs: 100 },
  );
  return { lines, result };
};

/** `mark step` of each line: `ok create list`, `FAIL send campaign`… */
const marksOf = (lines: string[]) =>
  lines.flatMap((l) => {
    const match = /^(ok|FAIL|keep) +(cleanup: [a-z ]+|[a-z ]+)/.exec(l);
    return match ? [`${match[1]} ${match[2]?.trim()}`] : [];
  });

describe('smoke journey', () => {
  it('passes on a working stack: every step ok; the template is deleted, the sent campaign and the list kept, no contact left subscribed', async () => {
    // Arrange
    const org = await organization();

    // Act
    const { lines, result } = await smoke(org.key);

    // Assert
    expect(lines.join('\n')).not.toContain('FAIL');
    expect(result.passed).toBe(true);
    expect(result.cleanupFailures).toEqual([]);
    expect(marksOf(lines)).toEqual([
      'ok check key',
      'ok create list',
      'ok import contacts',
      'ok create template',
      'ok create campaign',
      'ok send campaign',
      'ok wait until sent',
      'ok wait for stats',
      'ok check suppressed contacts',
      'keep campaign',
      'ok cleanup: delete template',
      'ok cleanup: unsubscribe contacts',
      'keep list',
    ]);
    expect(lines.at(-1)).toMatch(/^passed: 9 steps in /);
    const { listId, templateId, campaignId } = result.created;
    const template = await client.get(`/templates/${templateId}`, {
      key: org.key,
    });
    const campaign = await client.get(`/campaigns/${campaignId}`, {
      key: org.key,
    });
    const subscribed = await client.get('/contacts', {
      key: org.key,
      query: { listId: String(listId), status: 'subscribed' },
    });
    const unsubscribed = await client.get('/contacts', {
      key: org.key,
      query: { listId: String(listId), status: 'unsubscribed' },
    });
    expect(template.status).toBe(404);
    expect(campaign.json.data.status).toBe('sent');
    expect(subscribed.json.pagination.total).toBe(0);
    expect(
      unsubscribed.json.data.map((c: { email: string }) => c.email),
    ).toEqual([result.names.success]);
  });

  it('a wrong key fails the first step with 401, exits 1 and creates nothing', async () => {
    // Arrange
    const lines: string[] = [];
    const io = {
      fetch: inProcessFetch(),
      print: (l: string) => lines.push(l),
      printError: (l: string) => lines.push(l),
    };

    // Act
    const code = await main(
      ['--api', TEST_PUBLIC_API_URL, '--key', 'emk_wrong'],
      io,
    );

    // Assert
    expect(code).toBe(1);
    expect(lines[1]).toMatch(/^FAIL check key: 401 auth\.invalidKey — /);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/^failed at "check key"/);
  });

  it('a member key fails the first step: the journey needs an owner or admin', async () => {
    // Arrange
    const org = await organization();

    // Act
    const { lines, result } = await smoke(org.memberKey);

    // Assert
    expect(result.failedStep).toBe('check key');
    expect(lines[1]).toMatch(/^FAIL check key: .*\(member\).*owner or admin/);
    expect(result.created).toEqual({});
  });

  it('an organization not ready to send fails at "check key" naming its blockers, before creating anything', async () => {
    // Arrange
    const org = await organization();
    await client.admin('org', 'disallow', '--org', org.orgId);

    // Act
    const { lines, result } = await smoke(org.key);

    // Assert
    expect(result.passed).toBe(false);
    expect(lines[1]).toBe(
      'FAIL check key: Smoke Co (owner) is not ready to send; blockers: organization_not_allowed, no_sender_identity (see the README\'s "Sending setup"); nothing was created',
    );
    expect(result.created).toEqual({});
    const lists = await client.get('/lists', { key: org.key });
    expect(lists.json.pagination.total).toBe(0);
  });

  it('409 sending.blocked at the send fails "send campaign" naming the blockers; the draft and the template are deleted', async () => {
    // Arrange: the organization leaves the allowlist just before the send.
    const org = await organization();
    const disallowFirst = async (method: string, url: string) => {
      if (method === 'POST' && url.endsWith('/send')) {
        await client.admin('org', 'disallow', '--org', org.orgId);
      }
    };

    // Act
    const { lines, result } = await smoke(org.key, disallowFirst);

    // Assert
    expect(result.failedStep).toBe('send campaign');
    expect(lines).toContain(
      'FAIL send campaign: 409 sending.blocked — the organization is not ready to send; blockers: organization_not_allowed, no_sender_identity (GET /me lists them; see the README\'s "Sending setup")',
    );
    expect(marksOf(lines).slice(-4)).toEqual([
      'ok cleanup: delete campaign',
      'ok cleanup: delete template',
      'ok cleanup: unsubscribe contacts',
      'keep list',
    ]);
    const campaign = await client.get(
      `/campaigns/${result.created.campaignId}`,
      {
        key: org.key,
      },
    );
    const template = await client.get(
      `/templates/${result.created.templateId}`,
      { key: org.key },
    );
    expect(campaign.status).toBe(404);
    expect(template.status).toBe(404);
  });

  it('a held send (the 24-hour quota below the audience) fails "send campaign" naming quota_exceeded; the draft is deleted', async () => {
    // Arrange
    const org = await organization();
    await client.admin('org', 'quota', '--org', org.orgId, '--max24h', '2');

    // Act
    const { lines, result } = await smoke(org.key);

    // Assert
    expect(result.failedStep).toBe('send campaign');
    const failure = lines.find((l) => l.startsWith('FAIL'));
    expect(failure).toMatch(
      /^FAIL send campaign: 202 send_requested, but the send was held and the campaign is still a draft — quota_exceeded: .* below the 3 recipients/,
    );
    const campaign = await client.get(
      `/campaigns/${result.created.campaignId}`,
      {
        key: org.key,
      },
    );
    expect(campaign.status).toBe(404);
  });
});

describe('smoke command line', () => {
  it('missing --api or --key prints the usage on stderr and exits 2; --help prints it and exits 0', async () => {
    // Arrange
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      fetch: inProcessFetch(),
      print: (l: string) => out.push(l),
      printError: (l: string) => err.push(l),
    };

    // Act
    const noKey = await main(['--api', TEST_PUBLIC_API_URL], io);
    const nothing = await main([], io);
    const help = await main(['--help'], io);

    // Assert
    expect(noKey).toBe(2);
    expect(nothing).toBe(2);
    expect(err[0]).toBe(`Missing --key\n\n${USAGE}`);
    expect(err[1]).toBe(`Missing --api and --key\n\n${USAGE}`);
    expect(help).toBe(0);
    expect(out).toEqual([USAGE]);
  });

  it('takes the base URL with or without a trailing slash, and --timeout in seconds', () => {
    // Act
    const plain = parseArgs([
      '--api',
      'https://x.test/prod/api/v1',
      '--key',
      'k',
    ]);
    const slash = parseArgs([
      '--api=https://x.test/prod/api/v1/',
      '--key=k',
      '--timeout',
      '30',
    ]);

    // Assert
    expect(plain).toEqual({
      help: false,
      options: {
        api: 'https://x.test/prod/api/v1',
        key: 'k',
        timeoutMs: 180_000,
      },
    });
    expect(slash).toEqual({
      help: false,
      options: {
        api: 'https://x.test/prod/api/v1',
        key: 'k',
        timeoutMs: 30_000,
      },
    });
  });

  it('refuses an --api that does not end in /api/v1, a bad --timeout and an unknown flag', () => {
    // Act
    const attempts = [
      ['--api', 'https://x.test/prod', '--key', 'k'],
      ['--api', 'not a url', '--key', 'k'],
      ['--api', 'https://x.test/api/v1', '--key', 'k', '--timeout', '0'],
      ['--api', 'https://x.test/api/v1', '--key', 'k', '--verbose'],
      ['--api', 'https://x.test/api/v1', '--key'],
    ].map((argv) => {
      try {
        parseArgs(argv);
        return 'accepted';
      } catch (error) {
        return (error as Error).message;
      }
    });

    // Assert
    expect(attempts).toEqual([
      "--api must be the API's http(s) base URL, ending in /api/v1: https://x.test/prod",
      '--api is not a URL: not a url',
      '--timeout must be a positive number of seconds',
      'Unknown argument: --verbose',
      '--key needs a value',
    ]);
  });
});
