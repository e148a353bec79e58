import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningStack, startStack } from '../support/local-stack.ts';

interface Record {
  type: string;
  name: string;
  value: string;
  priority?: number;
  purpose: string;
}

/**
 * The wiring of a running stack to the files of its data dir: its DNS server
 * answers what `local dns set` publishes, and its email provider reads the
 * state `local provider …` writes. The routes' behaviour is tested in process
 * (test/functions/domains.test.ts, settings.test.ts).
 */
describe('sending setup on a running local stack (end to end)', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startStack();
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

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
    for (const record of declared.json.data.dnsRecords as Record[]) {
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
