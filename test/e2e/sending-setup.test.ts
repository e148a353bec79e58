import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningStack, startStack } from '../support/local-stack.ts';
import { mailTo } from '../support/mailbox.ts';

interface Record {
  type: string;
  name: string;
  value: string;
  priority?: number;
  purpose: string;
}

describe('sending setup over HTTP on the local stack (end to end)', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startStack();
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  /** A new allowed organization with an owner key. */
  const newOrg = async (name: string) => {
    const org = await stack.admin('org', 'create', '--name', name);
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
    const key = await stack.admin(
      'key',
      'create',
      '--org',
      orgId,
      '--email',
      email,
    );
    return { orgId, key: key.apiKey ?? '' };
  };

  /** Publishes records in the local DNS through the admin CLI. */
  const publish = async (records: Record[]) => {
    for (const record of records) {
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
  };

  it('takes a domain from PENDING to verified after `local dns set` of its records and verify', async () => {
    // Arrange
    const { key } = await newOrg('Domain Co');
    const declared = await stack.call('/domains', {
      key,
      method: 'POST',
      body: { domain: 'mail-e2e.example.test' },
    });
    const records: Record[] = declared.json.data.dnsRecords;
    // Act
    const pending = await stack.call(
      `/domains/${declared.json.data.id}/verify`,
      { key, method: 'POST' },
    );
    await publish(
      records.filter(
        (r) =>
          r.purpose !== 'dmarc' &&
          !(r.purpose === 'mail_from' && r.type === 'TXT'),
      ),
    );
    const verified = await stack.call(
      `/domains/${declared.json.data.id}/verify`,
      { key, method: 'POST' },
    );
    await stack.call('/settings/sending', {
      key,
      method: 'PATCH',
      body: {
        senderEmail: 'news@mail-e2e.example.test',
        senderName: 'Domain Co',
      },
    });
    const me = await stack.call('/me', { key });
    const listed = await stack.call('/domains', { key });
    // Assert
    expect(declared.status).toBe(201);
    expect(records.map((r) => r.purpose)).toEqual([
      'ownership',
      'dkim',
      'dkim',
      'dkim',
      'mail_from',
      'mail_from',
      'dmarc',
    ]);
    expect(pending.json.data).toMatchObject({
      dkimStatus: 'PENDING',
      verified: false,
    });
    expect(verified.json.data).toMatchObject({
      dkimStatus: 'SUCCESS',
      ownershipProved: true,
      verified: true,
      providerUnavailable: false,
    });
    expect(me.json.data.sending).toEqual({
      ready: true,
      blockers: [],
      setup: { status: 'active', provisioning: 'provisioned' },
    });
    expect(listed.json.data.map((d: { domain: string }) => d.domain)).toEqual([
      'mail-e2e.example.test',
    ]);
  });

  it('transfers a domain between two organizations', async () => {
    const a = await newOrg('First owner');
    const b = await newOrg('Second owner');
    const ofA = await stack.call('/domains', {
      key: a.key,
      method: 'POST',
      body: { domain: 'shared-e2e.example.test' },
    });
    await publish(
      ofA.json.data.dnsRecords.filter((r: Record) => r.purpose === 'ownership'),
    );
    expect(
      (
        await stack.call(`/domains/${ofA.json.data.id}/verify`, {
          key: a.key,
          method: 'POST',
        })
      ).json.data.ownershipProved,
    ).toBe(true);
    const ofB = await stack.call('/domains', {
      key: b.key,
      method: 'POST',
      body: { domain: 'shared-e2e.example.test' },
    });
    await publish(
      ofB.json.data.dnsRecords.filter((r: Record) => r.purpose === 'ownership'),
    );
    const provedByB = await stack.call(`/domains/${ofB.json.data.id}/verify`, {
      key: b.key,
      method: 'POST',
    });
    const seenByA = await stack.call(`/domains/${ofA.json.data.id}`, {
      key: a.key,
    });
    const peek = await stack.call(`/domains/${ofA.json.data.id}`, {
      key: b.key,
    });
    expect(provedByB.json.data.ownershipProved).toBe(true);
    expect(seenByA.json.data.ownershipProved).toBe(false);
    expect(peek.status).toBe(404);
  });

  it('answers the last known state on reads and 503 on verify during a provider outage', async () => {
    const { key } = await newOrg('Outage Co');
    const declared = await stack.call('/domains', {
      key,
      method: 'POST',
      body: { domain: 'outage-e2e.example.test' },
    });
    await stack.admin('local', 'provider', 'outage', 'on');
    try {
      const read = await stack.call(`/domains/${declared.json.data.id}`, {
        key,
      });
      const verify = await stack.call(
        `/domains/${declared.json.data.id}/verify`,
        { key, method: 'POST' },
      );
      const declare = await stack.call('/domains', {
        key,
        method: 'POST',
        body: { domain: 'other-e2e.example.test' },
      });
      expect(read.status).toBe(200);
      expect(read.json.data).toMatchObject({
        providerUnavailable: true,
        lastCheckedAt: expect.any(String),
      });
      expect(read.json.data.dnsRecords[0].purpose).toBe('ownership');
      expect(verify.status).toBe(503);
      expect(declare.status).toBe(503);
    } finally {
      await stack.admin('local', 'provider', 'outage', 'off');
    }
  });

  it('reports a suspension, refuses the opt-in confirmation, and clears on reinstatement', async () => {
    const { orgId, key } = await newOrg('Suspended Co');
    await stack.call('/domains', {
      key,
      method: 'POST',
      body: { domain: 'suspended-e2e.example.test' },
    });
    await stack.admin('local', 'provider', 'suspend', '--org', orgId);
    const me = await stack.call('/me', { key });
    const list = await stack.call('/lists', {
      key,
      method: 'POST',
      body: { name: 'L' },
    });
    const added = await stack.call(`/lists/${list.json.data.id}/contacts`, {
      key,
      method: 'POST',
      body: { email: 'paused@e2e.test', doubleOptIn: true },
    });
    await stack.admin('local', 'provider', 'reinstate', '--org', orgId);
    const after = await stack.call('/me', { key });
    expect(me.json.data.sending.setup.status).toBe('suspended');
    expect(me.json.data.sending.blockers).toContain('sending_paused');
    expect(added.json.data.confirmation.status).toBe('blocked');
    expect(await mailTo('paused@e2e.test', stack.info.mailbox)).toEqual([]);
    expect(after.json.data.sending.blockers).not.toContain('sending_paused');
  });

  it('manages settings, identities and opt-in over HTTP', async () => {
    const { key } = await newOrg('Settings Co');
    const created = await stack.call('/settings/identities', {
      key,
      method: 'POST',
      body: { senderEmail: 'hi@settings.test', senderName: 'Hi' },
    });
    const second = await stack.call('/settings/identities', {
      key,
      method: 'POST',
      body: { senderEmail: 'two@settings.test' },
    });
    const unset = await stack.call(
      `/settings/identities/${created.json.data.id}`,
      { key, method: 'PATCH', body: { isDefault: false } },
    );
    const refused = await stack.call(
      `/settings/identities/${created.json.data.id}`,
      { key, method: 'DELETE' },
    );
    const optin = await stack.call('/settings/optin', {
      key,
      method: 'PATCH',
      body: { content: '<p>no link</p>' },
    });
    const test = await stack.call('/settings/optin/test-send', {
      key,
      method: 'POST',
      body: { email: 'optin-e2e@settings.test' },
    });
    const settings = await stack.call('/settings', { key });
    expect(created.status).toBe(201);
    expect(second.json.data.isDefault).toBe(false);
    expect(unset.status).toBe(400);
    expect(unset.json.error).toContain('hi@settings.test');
    expect(refused.status).toBe(400);
    expect(optin.status).toBe(400);
    expect(optin.json.details).toEqual([
      { field: 'content', message: 'must contain {{confirmationUrl}}' },
    ]);
    expect(test.json.data).toEqual({
      status: 'sent',
      to: 'optin-e2e@settings.test',
    });
    expect(settings.json.data.sending).toMatchObject({
      senderEmail: 'hi@settings.test',
      effectiveSender: '"Hi" <no-reply@mail.localhost.test>',
      effectiveReplyTo: 'hi@settings.test',
    });
    expect(settings.json.data.optin).toMatchObject({
      required: false,
      customized: false,
    });
    expect(settings.json.data.readiness.setup.status).toBe('dns_pending');
  });
});
