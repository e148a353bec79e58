import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { mailTo } from '../support/mailbox.ts';

describe('settings, identities, opt-in and readiness through the pipeline (in process)', () => {
  let client: ApiClient;

  beforeAll(async () => {
    // As the local stack runs (PROVIDER_STATUS_TTL_SECONDS 0): every read
    // asks the provider, so an outage or a suspension shows at once.
    client = await createApiClient({ providerStatusTtlSeconds: 0 });
  });

  /** A new allowed organization with an owner key. */
  const newOrg = async (name: string) => {
    const { orgId, ownerKey } = await createOrganizationWithKeys(client, name);
    return { orgId, key: ownerKey };
  };

  it('reports a provider suspension in /me, blocks the opt-in confirmation (no mail), and clears on reinstatement', async () => {
    // The mailbox is shared by the run: an address of this test only.
    const address = `paused-${randomUUID().slice(0, 8)}@e2e.test`;
    const { orgId, key } = await newOrg('Suspended Co');
    await client.post('/domains', {
      key,
      body: { domain: `suspended-${randomUUID().slice(0, 8)}.example.test` },
    });
    await client.admin('local', 'provider', 'suspend', '--org', orgId);
    const me = await client.get('/me', { key });
    const list = await client.post('/lists', { key, body: { name: 'L' } });
    const added = await client.post(`/lists/${list.json.data.id}/contacts`, {
      key,
      body: { email: address, doubleOptIn: true },
    });
    await client.admin('local', 'provider', 'reinstate', '--org', orgId);
    const after = await client.get('/me', { key });
    expect(me.json.data.sending.setup.status).toBe('suspended');
    expect(me.json.data.sending.blockers).toContain('sending_paused');
    expect(added.json.data.confirmation.status).toBe('blocked');
    expect(await mailTo(address)).toEqual([]);
    expect(after.json.data.sending.blockers).not.toContain('sending_paused');
  });

  it('manages identities (the default cannot be unset or deleted), refuses opt-in content without {{confirmationUrl}}, test-sends, and sends from the application address until a domain is verified', async () => {
    const { key } = await newOrg('Settings Co');
    const created = await client.post('/settings/identities', {
      key,
      body: { senderEmail: 'hi@settings.test', senderName: 'Hi' },
    });
    const second = await client.post('/settings/identities', {
      key,
      body: { senderEmail: 'two@settings.test' },
    });
    const unset = await client.patch(
      `/settings/identities/${created.json.data.id}`,
      { key, body: { isDefault: false } },
    );
    const refused = await client.delete(
      `/settings/identities/${created.json.data.id}`,
      { key },
    );
    const optin = await client.patch('/settings/optin', {
      key,
      body: { content: '<p>no link</p>' },
    });
    const test = await client.post('/settings/optin/test-send', {
      key,
      body: { email: 'optin-e2e@settings.test' },
    });
    const settings = await client.get('/settings', { key });
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
  it('PATCH /settings/sending timezone: an IANA name is stored (its case corrected) and shown by GET /settings; an unknown name or an offset is 400 naming timezone and changes nothing', async () => {
    const { key } = await newOrg('Zoned Co');
    const set = await client.patch('/settings/sending', {
      key,
      body: { timezone: 'america/new_york' },
    });
    const unknown = await client.patch('/settings/sending', {
      key,
      body: { timezone: 'Mars/Olympus' },
    });
    const offset = await client.patch('/settings/sending', {
      key,
      body: { timezone: '+02:00' },
    });
    const read = await client.get('/settings', { key });
    expect(set.status).toBe(200);
    expect(set.json.data.sending.timezone).toBe('America/New_York');
    for (const refused of [unknown, offset]) {
      expect(refused.status).toBe(400);
      expect(refused.json.details).toEqual([
        {
          field: 'timezone',
          message: 'must be an IANA time zone name such as Europe/Paris or UTC',
        },
      ]);
    }
    expect(read.json.data.sending.timezone).toBe('America/New_York');
  });
});
