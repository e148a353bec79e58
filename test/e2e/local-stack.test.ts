import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetAccountCommand } from '@aws-sdk/client-sesv2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../functions/groups.ts';
import { NodeDnsResolver } from '../../shared/adapters/node-dns-resolver.ts';
import { localSes } from '../../shared/runtime/local.ts';
import { type RunningStack, startStack } from '../support/local-stack.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A DNS record of a declared domain, as the API answers it. */
interface DeclaredRecord {
  type: string;
  name: string;
  value: string;
  priority?: number;
  purpose: string;
}

/** Keys are cached for 1 s in these stacks, so revocations show quickly. */
const CACHE_SECONDS = 1;

describe('the local stack, over HTTP (end to end)', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startStack({
      env: { API_KEY_CACHE_TTL_SECONDS: String(CACHE_SECONDS) },
    });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  /** A new organization with a member of `role` and that member's key. */
  const newOrgWithKey = async (role: 'owner' | 'admin' | 'member') => {
    const org = await stack.admin('org', 'create', '--name', `Org ${role}`);
    const email = `${role}-${Date.now()}@example.test`;
    await stack.admin(
      'member',
      'add',
      '--org',
      org.id ?? '',
      '--email',
      email,
      '--role',
      role,
    );
    const key = await stack.admin(
      'key',
      'create',
      '--org',
      org.id ?? '',
      '--email',
      email,
    );
    return { orgId: org.id ?? '', email, ...key } as {
      orgId: string;
      email: string;
      keyId: string;
      apiKey: string;
    };
  };

  describe('start-up', () => {
    it('writes stack.json with the API, DynamoDB, mailbox and SQS addresses', () => {
      expect(stack.info.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
      expect(stack.info.dynamodb).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(stack.info.mailbox).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(stack.info.sqs).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(stack.output()).toContain(`SQS:          ${stack.info.sqs}`);
      expect(stack.output()).toContain(stack.demoKey);
    });

    it('runs the mailbox: a page at its root and JSON at /store', async () => {
      const page = await fetch(stack.info.mailbox);
      const store = await fetch(`${stack.info.mailbox}/store`);
      expect(page.status).toBe(200);
      expect(await store.json()).toMatchObject({ emails: [] });
    });
  });

  describe('GET /me (Discovery)', () => {
    it('describes the demo owner key, its organization and readiness', async () => {
      const { status, json } = await stack.call('/me', { key: stack.demoKey });
      expect(status).toBe(200);
      expect(json).toEqual({
        success: true,
        data: {
          organization: {
            id: expect.any(String),
            name: 'Demo Organization',
            slug: 'demo-organization',
          },
          organizationRole: 'owner',
          keyId: expect.any(String),
          // A key made without scopes: full access (issue 32).
          scopes: null,
          sending: {
            ready: true,
            blockers: [],
            // No domain declared yet: ready (the application address), DNS pending.
            setup: { status: 'dns_pending', provisioning: 'none' },
          },
          // The reputation guardrail's state: none holds (issue 33).
          guardrail: null,
        },
      });
      expect(JSON.stringify(json)).not.toContain(stack.demoKey);
    });
  });

  // A request without a key, or with a malformed or unknown one: in process
  // (test/functions/authentication.test.ts). Here, keys changed by the CLI
  // while the process runs, past its key cache.
  describe('every endpoint group (smoke)', () => {
    it.each(
      endpointGroups.map((group) => {
        // Its first route without a path parameter (every group has one).
        const route = group.routes.find((r) => !r.path.includes('{'));
        if (!route) throw new Error(`group ${group.name} has no such route`);
        return [group.name, route] as const;
      }),
    )('serves the %s group through the running gateway', async (_, route) => {
      // Act
      const response = await fetch(`${stack.info.api}${route.path}`, {
        method: route.method,
        headers: {
          'x-api-key': stack.demoKey,
          ...(route.method === 'GET'
            ? {}
            : { 'content-type': 'application/json' }),
        },
        ...(route.method === 'GET' ? {} : { body: '{}' }),
      });
      const text = await response.text();
      // Assert: the group's function answered (its pipeline, not the
      // gateway's 404): a page or the JSON envelope, never a 5xx.
      expect(response.status, text).toBeLessThan(500);
      if (route.role === 'public') {
        // A page, or the file it declares (the docs' document).
        const declared = route.responses?.[200];
        expect(response.headers.get('content-type')).toContain(
          declared?.kind === 'file' ? declared.contentType : 'text/html',
        );
      } else {
        expect(response.headers.get('ratelimit-limit')).toBe('120');
        expect(JSON.parse(text)).toHaveProperty(
          response.ok ? 'success' : 'code',
        );
      }
    });
  });

  describe('401 (Authentication 1 and 3)', () => {
    it('refuses a key once it is revoked', async () => {
      const { keyId, apiKey } = await newOrgWithKey('admin');
      expect((await stack.call('/me', { key: apiKey })).status).toBe(200);
      // The CLI itself, as an operator runs it against a running stack.
      expect(await stack.adminCli('key', 'revoke', '--key', keyId)).toEqual({
        revoked: true,
      });
      await sleep(CACHE_SECONDS * 1000 + 200);
      expect((await stack.call('/me', { key: apiKey })).status).toBe(401);
    });

    it('lets an owner rotate its key through the API (issue 32): the new key works, and revokes the old one', async () => {
      // Arrange
      const { apiKey: old, keyId: oldId } = await newOrgWithKey('owner');
      // Act
      const made = await stack.call('/api-keys', {
        key: old,
        method: 'POST',
        body: { name: 'Rotated', scopes: ['read', 'settings'] },
      });
      const fresh: string = made.json.data.apiKey;
      const revoked = await stack.call(`/api-keys/${oldId}`, {
        key: fresh,
        method: 'DELETE',
      });
      await sleep(CACHE_SECONDS * 1000 + 200);
      // Assert
      expect(made.status).toBe(201);
      expect(revoked.json.data.revokedAt).not.toBeNull();
      expect((await stack.call('/me', { key: old })).status).toBe(401);
      const me = await stack.call('/me', { key: fresh });
      expect(me.json.data.scopes).toEqual(['read', 'settings']);
      const listed = await stack.call('/api-keys', { key: fresh });
      expect(listed.json.data.map((k: { name: string }) => k.name)).toEqual([
        'Rotated',
        null,
      ]);
    });

    it('refuses the key of a member who left the organization', async () => {
      const { orgId, email, apiKey } = await newOrgWithKey('owner');
      expect((await stack.call('/me', { key: apiKey })).status).toBe(200);
      expect(
        await stack.adminCli(
          'member',
          'remove',
          '--org',
          orgId,
          '--email',
          email,
        ),
      ).toEqual({ removed: true });
      await sleep(CACHE_SECONDS * 1000 + 200);
      expect((await stack.call('/me', { key: apiKey })).status).toBe(401);
    });
  });

  describe('404 (Authentication 5)', () => {
    it('answers 400, not 500, to a path with a malformed encoding', async () => {
      const { status, json } = await stack.call('/lists/%E0%A4%A', {
        key: stack.demoKey,
      });
      expect(status).toBe(400);
      expect(json.details).toEqual([
        { field: 'path', message: 'malformed percent-encoding' },
      ]);
    });

    // The local gateway once answered 500 here: its maps had a prototype.
    it('passes a query parameter or header named constructor or __proto__ like any other', async () => {
      const byQuery = await fetch(
        `${stack.info.api}/lists?constructor=1&__proto__=2`,
        { headers: { 'x-api-key': stack.demoKey } },
      );
      const byHeader = await fetch(`${stack.info.api}/lists`, {
        headers: { 'x-api-key': stack.demoKey, constructor: 'x' },
      });
      expect([byQuery.status, byHeader.status]).toEqual([200, 200]);
    });

    it('answers 404 for a path that is not a route', async () => {
      const { status } = await stack.call('/nothing-here', {
        key: stack.demoKey,
      });
      expect(status).toBe(404);
    });
  });

  describe('local-only admin commands (DNS records, quota)', () => {
    it('publishes a DNS record the stack’s DNS server answers', async () => {
      // Arrange
      const name = `_dmarc.d${Date.now()}.example.test`;
      const value = 'v=DMARC1; p=none';
      // Act
      const set = await stack.admin(
        'local',
        'dns',
        'set',
        '--name',
        name,
        '--type',
        'TXT',
        '--value',
        value,
      );
      // Assert
      expect(stack.info.dns).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(set).toEqual({ name, type: 'TXT', value });
      const resolver = new NodeDnsResolver([stack.info.dns]);
      expect(await resolver.resolveTxt(name)).toEqual([value]);
    });

    it('sets the quota the SES emulator’s GetAccount reports', async () => {
      // Act
      const set = await stack.admin(
        'local',
        'quota',
        'set',
        '--max24h',
        '123456',
        '--rate',
        '25',
      );
      const account = await localSes(stack.info.mailbox).send(
        new GetAccountCommand({}),
      );
      // Assert
      expect(set).toEqual({ max24HourSend: 123456, maxSendRate: 25 });
      expect(account.SendingEnabled).toBe(true);
      expect(account.SendQuota).toEqual({
        Max24HourSend: 123456,
        MaxSendRate: 25,
        SentLast24Hours: 0,
      });
    });
  });

  /**
   * The wiring of a running stack to the files of its data dir: its DNS
   * server answers what `local dns set` publishes, and its email provider
   * reads the state `local provider …` writes. The routes' behaviour is
   * tested in process (test/functions/domains.test.ts, settings.test.ts).
   */
  describe('sending setup (the data dir’s DNS records and provider state)', () => {
    it('verifies a domain from the records `local dns set` publishes, and shows `local provider suspend` until reinstatement', async () => {
      // Arrange: an allowed organization with an owner key.
      const org = await stack.admin('org', 'create', '--name', 'Domain Co');
      const orgId = org.id ?? '';
      await stack.admin('org', 'allow', '--org', orgId);
      const email = `owner@${orgId.slice(-6)}.test`;
      await stack.admin(
        'member',
        'add',
        '--org',
        orgId,
        '--email',
        email,
        '--role',
        'owner',
      );
      const key = (
        await stack.admin('key', 'create', '--org', orgId, '--email', email)
      ).apiKey;
      const declared = await stack.call('/domains', {
        key,
        method: 'POST',
        body: { domain: 'mail-e2e.example.test' },
      });
      // Act: publish the records in the stack's DNS, verify, then suspend.
      for (const record of declared.json.data.dnsRecords as DeclaredRecord[]) {
        if (record.purpose === 'dmarc') continue;
        if (record.purpose === 'mail_from' && record.type === 'TXT') continue;
        await stack.admin(
          'local',
          'dns',
          'set',
          '--name',
          record.name,
          '--type',
          record.type,
          '--value',
          record.value,
          ...(record.priority ? ['--priority', String(record.priority)] : []),
        );
      }
      const verified = await stack.call(
        `/domains/${declared.json.data.id}/verify`,
        { key, method: 'POST' },
      );
      await stack.admin('local', 'provider', 'suspend', '--org', orgId);
      const suspended = await stack.call('/me', { key });
      await stack.admin('local', 'provider', 'reinstate', '--org', orgId);
      const reinstated = await stack.call('/me', { key });
      // Assert
      expect(declared.status).toBe(201);
      expect(verified.json.data).toMatchObject({
        dkimStatus: 'SUCCESS',
        ownershipProved: true,
        verified: true,
      });
      expect(suspended.json.data.sending.setup.status).toBe('suspended');
      expect(suspended.json.data.sending.blockers).toContain('sending_paused');
      expect(reinstated.json.data.sending.blockers).not.toContain(
        'sending_paused',
      );
    });
  });

  describe('admin CLI', () => {
    it('prints one JSON object per command and fails with a message on stderr', async () => {
      const failure = await stack.adminFailure(
        'key',
        'create',
        '--org',
        '01a20000-0000-7000-8000-00000000dead',
        '--email',
        'nobody@example.test',
      );
      expect(failure.code).toBe(1);
      expect(failure.stderr).toContain('is not a member');
      const usage = await stack.adminFailure('org', 'explode');
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('Usage:');
    });
  });
});

describe('local stacks side by side, restarts and shutdown', () => {
  it('runs two stacks at once, keeps data across a restart, and leaves no process behind', async () => {
    // Arrange: two stacks with their own ports and data dirs.
    const [a, b] = await Promise.all([startStack(), startStack()]);
    try {
      expect(a.info.dynamodb).not.toBe(b.info.dynamodb);
      expect(a.info.mailbox).not.toBe(b.info.mailbox);
      expect(a.info.sqs).not.toBe(b.info.sqs);
      expect(a.demoKey).not.toBe(b.demoKey);
      const created = await a.call('/lists', {
        key: a.demoKey,
        method: 'POST',
        body: { name: 'Survives restarts' },
      });
      expect(created.status).toBe(201);
      expect((await b.call('/me', { key: b.demoKey })).status).toBe(200);

      // Act: stop a, and start it again on the same data dir.
      expect(await a.stop()).toBe(0);
      expect(existsSync(join(a.dataDir, 'stack.json'))).toBe(false);
      const { stdout } = await run('ps', ['-eo', 'args']);
      expect(stdout).not.toContain(join(a.dataDir, 'dynamodb'));
      const again = await startStack({ dataDir: a.dataDir });
      try {
        const lists = await again.call('/lists', { key: again.demoKey });
        // Assert: same demo key, same data, no second demo organization.
        expect(again.demoKey).toBe(a.demoKey);
        expect(lists.json.data.map((l: { name: string }) => l.name)).toEqual([
          'Survives restarts',
        ]);
        expect(again.output()).not.toContain('Created the demo organization');
      } finally {
        await again.stop();
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 120_000);
});
