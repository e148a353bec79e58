import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalDnsRecord } from '../../infra/local/dns-records.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { publishDns } from '../support/dynamo.ts';

interface Record {
  type: LocalDnsRecord['type'];
  name: string;
  value: string;
  priority?: number;
  purpose: string;
}

/** Publishes records on the DNS server shared by the run. */
const publish = async (records: Record[]) => {
  for (const record of records) {
    await publishDns({
      name: record.name,
      type: record.type,
      value: record.value,
      ...(record.priority ? { priority: record.priority } : {}),
    });
  }
};

/** A domain of this test only (the DNS server is shared by the run). */
const newDomain = (label: string) =>
  `${label}-${randomUUID().slice(0, 8)}.example.test`;

describe('sending domains through the pipeline (in process)', () => {
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

  it('takes a domain from PENDING to verified once its records are published and verify runs (Domain states)', async () => {
    // Arrange
    const { key } = await newOrg('Domain Co');
    const domain = newDomain('mail');
    const declared = await client.post('/domains', {
      key,
      body: { domain },
    });
    const records: Record[] = declared.json.data.dnsRecords;
    // Act
    const pending = await client.post(
      `/domains/${declared.json.data.id}/verify`,
      { key },
    );
    await publish(
      records.filter(
        (r) =>
          r.purpose !== 'dmarc' &&
          !(r.purpose === 'mail_from' && r.type === 'TXT'),
      ),
    );
    const verified = await client.post(
      `/domains/${declared.json.data.id}/verify`,
      { key },
    );
    await client.patch('/settings/sending', {
      key,
      body: { senderEmail: `news@${domain}`, senderName: 'Domain Co' },
    });
    const me = await client.get('/me', { key });
    const listed = await client.get('/domains', { key });
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
      domain,
    ]);
  });

  it('moves a domain to the organization that proves it last: the former owner sees it unproved, and the other’s id answers 404', async () => {
    const a = await newOrg('First owner');
    const b = await newOrg('Second owner');
    const domain = newDomain('shared');
    const ofA = await client.post('/domains', {
      key: a.key,
      body: { domain },
    });
    await publish(
      ofA.json.data.dnsRecords.filter((r: Record) => r.purpose === 'ownership'),
    );
    expect(
      (
        await client.post(`/domains/${ofA.json.data.id}/verify`, {
          key: a.key,
        })
      ).json.data.ownershipProved,
    ).toBe(true);
    const ofB = await client.post('/domains', {
      key: b.key,
      body: { domain },
    });
    await publish(
      ofB.json.data.dnsRecords.filter((r: Record) => r.purpose === 'ownership'),
    );
    const provedByB = await client.post(`/domains/${ofB.json.data.id}/verify`, {
      key: b.key,
    });
    const seenByA = await client.get(`/domains/${ofA.json.data.id}`, {
      key: a.key,
    });
    const peek = await client.get(`/domains/${ofA.json.data.id}`, {
      key: b.key,
    });
    expect(provedByB.json.data.ownershipProved).toBe(true);
    expect(seenByA.json.data.ownershipProved).toBe(false);
    expect(peek.status).toBe(404);
  });

  it('answers the last known state on reads, and 503 on verify and on a declaration, during a provider outage', async () => {
    const { key } = await newOrg('Outage Co');
    const declared = await client.post('/domains', {
      key,
      body: { domain: newDomain('outage') },
    });
    await client.admin('local', 'provider', 'outage', 'on');
    try {
      const read = await client.get(`/domains/${declared.json.data.id}`, {
        key,
      });
      const verify = await client.post(
        `/domains/${declared.json.data.id}/verify`,
        { key },
      );
      const declare = await client.post('/domains', {
        key,
        body: { domain: newDomain('other') },
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
      await client.admin('local', 'provider', 'outage', 'off');
    }
  });
});
