import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describeCaller } from '../../../shared/access/caller.ts';
import { DynamoDomainRepository } from '../../../shared/adapters/aws/dynamo-domain-repository.ts';
import { DynamoOrganizationRepository } from '../../../shared/adapters/aws/dynamo-organization-repository.ts';
import {
  LocalEmailProvider,
  setOutage,
  setTenantStatus,
} from '../../../shared/adapters/local/local-email-provider.ts';
import { keys } from '../../../shared/db/keys.ts';
import type { Deps } from '../../../shared/deps.ts';
import {
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../../../shared/errors.ts';
import {
  createOrganization,
  setSendingAllowed,
} from '../../../shared/organizations/organizations.ts';
import {
  declareDomain,
  deleteDomain,
  getDomain,
  listDomains,
  verifyDomain,
} from '../../../shared/sending/domains.ts';
import { tenantNameOf } from '../../../shared/sending/isolation.ts';
import type {
  DnsRecord,
  EmailProvider,
} from '../../../shared/sending/provider.ts';
import { RecentDomainAnswers } from '../../../shared/sending/recent-domain-answers.ts';
import {
  createTestDeps,
  fixedClock,
  publishDns,
  testEngineClient,
} from '../../support/dynamo.ts';

const newOrg = async (deps: Deps) => {
  const org = await createOrganization(deps, { name: `Org ${randomUUID()}` });
  await setSendingAllowed(deps, { orgId: org.id }, true);
  return org.id;
};

const caller = (orgId: string) => ({
  orgId,
  keyId: 'k',
  userId: 'u',
  role: 'owner' as const,
});

/** Publishes every record but the challenge (DKIM, MAIL FROM). */
const publishProviderRecords = async (records: DnsRecord[]) => {
  for (const record of records.filter(
    (r) =>
      r.purpose === 'dkim' || (r.purpose === 'mail_from' && r.type === 'MX'),
  )) {
    await publishDns({
      name: record.name,
      type: record.type,
      value: record.value,
      ...(record.priority ? { priority: record.priority } : {}),
    });
  }
};

const challengeOf = (records: DnsRecord[]) => {
  const [challenge] = records;
  if (challenge?.purpose !== 'ownership') throw new Error('challenge first');
  return challenge;
};

const setup = async () => {
  const test = await createTestDeps({ providerStatusTtlSeconds: 0 });
  return {
    ...test,
    orgId: await newOrg(test.deps),
    domain: `${randomUUID().slice(0, 8)}.example.test`,
  };
};

describe('sending domains (Sending domains; Domain states)', () => {
  it('declares a domain with its seven records, challenge first, and provisions the isolation', async () => {
    // Arrange
    const { deps, orgId, domain } = await setup();
    // Act
    const declared = await declareDomain(deps, orgId, { domain });
    // Assert
    expect(declared).toMatchObject({
      domain,
      dkimStatus: 'PENDING',
      verified: false,
      ownershipProved: false,
      providerUnavailable: false,
      mailFromDomain: `bounce.${domain}`,
    });
    expect(declared.dnsRecords.map((r) => [r.type, r.purpose])).toEqual([
      ['TXT', 'ownership'],
      ['CNAME', 'dkim'],
      ['CNAME', 'dkim'],
      ['CNAME', 'dkim'],
      ['MX', 'mail_from'],
      ['TXT', 'mail_from'],
      ['TXT', 'dmarc'],
    ]);
    expect(declared.dnsRecords[0]?.name).toBe(`_service-challenge.${domain}`);
    expect(declared.dnsRecords[4]?.priority).toBe(10);
    expect(declared.dnsRecords[6]?.name).toBe(`_dmarc.${domain}`);
    const { sending } = await describeCaller(deps, caller(orgId));
    expect(sending).toMatchObject({
      ready: false,
      blockers: ['domain_not_verified', 'no_sender_identity'],
      setup: { status: 'dns_pending', provisioning: 'provisioned' },
    });
  });

  it('goes from PENDING to verified once DKIM and the challenge are published and verify runs', async () => {
    const { deps, orgId, domain } = await setup();
    const declared = await declareDomain(deps, orgId, { domain });
    const early = await verifyDomain(deps, orgId, declared.id);
    await publishProviderRecords(declared.dnsRecords);
    const dkimOnly = await verifyDomain(deps, orgId, declared.id);
    const statusWithDkimOnly = (await describeCaller(deps, caller(orgId)))
      .sending.setup.status;
    const challenge = challengeOf(declared.dnsRecords);
    await publishDns({
      name: challenge.name,
      type: 'TXT',
      value: challenge.value,
    });
    const proved = await verifyDomain(deps, orgId, declared.id);
    expect(early).toMatchObject({ dkimStatus: 'PENDING', verified: false });
    expect(dkimOnly).toMatchObject({
      dkimStatus: 'SUCCESS',
      ownershipProved: false,
      verified: false,
    });
    expect(statusWithDkimOnly).toBe('ownership_pending');
    expect(proved).toMatchObject({
      dkimStatus: 'SUCCESS',
      mailFromStatus: 'SUCCESS',
      ownershipProved: true,
      verified: true,
    });
    expect((await describeCaller(deps, caller(orgId))).sending).toMatchObject({
      ready: true,
      blockers: [],
      setup: { status: 'active', provisioning: 'provisioned' },
    });
  });

  it('never revokes a proved ownership, even when the TXT is removed', async () => {
    const { deps, orgId, domain } = await setup();
    const declared = await declareDomain(deps, orgId, { domain });
    const challenge = challengeOf(declared.dnsRecords);
    await publishDns({
      name: challenge.name,
      type: 'TXT',
      value: challenge.value,
    });
    await verifyDomain(deps, orgId, declared.id);
    await publishDns({
      name: challenge.name,
      type: 'TXT',
      value: 'something else',
    });
    expect((await verifyDomain(deps, orgId, declared.id)).ownershipProved).toBe(
      true,
    );
  });

  it('transfers the domain when another organization proves it: the previous owner loses it', async () => {
    // Arrange: A proves the domain.
    const { deps, orgId: a, domain } = await setup();
    const b = await newOrg(deps);
    const ofA = await declareDomain(deps, a, { domain });
    await publishProviderRecords(ofA.dnsRecords);
    await publishDns({
      name: challengeOf(ofA.dnsRecords).name,
      type: 'TXT',
      value: challengeOf(ofA.dnsRecords).value,
    });
    expect((await verifyDomain(deps, a, ofA.id)).verified).toBe(true);
    // Act: B declares it and publishes its own challenge.
    const ofB = await declareDomain(deps, b, { domain });
    expect(challengeOf(ofB.dnsRecords).value).not.toBe(
      challengeOf(ofA.dnsRecords).value,
    );
    await publishDns({
      name: challengeOf(ofB.dnsRecords).name,
      type: 'TXT',
      value: challengeOf(ofB.dnsRecords).value,
    });
    const provedByB = await verifyDomain(deps, b, ofB.id);
    // Assert
    expect(provedByB).toMatchObject({ ownershipProved: true, verified: true });
    expect(await getDomain(deps, a, ofA.id)).toMatchObject({
      ownershipProved: false,
      verified: false,
    });
    const tenantA = await deps.provider.getTenant(tenantNameOf(a));
    const tenantB = await deps.provider.getTenant(tenantNameOf(b));
    expect(tenantA?.domains).not.toContain(domain);
    expect(tenantB?.domains).toContain(domain);
  });

  it('on a provider outage: reads answer the last known state, verify and declare answer 503', async () => {
    // Arrange
    const { deps, orgId, domain, providerStateFile } = await setup();
    const declared = await declareDomain(deps, orgId, { domain });
    const before = await getDomain(deps, orgId, declared.id);
    // Act
    await setOutage(providerStateFile, true);
    const read = await getDomain(deps, orgId, declared.id);
    const listed = await listDomains(deps, orgId);
    const verify = await verifyDomain(deps, orgId, declared.id).catch(
      (e: unknown) => e,
    );
    const declare = await declareDomain(deps, orgId, {
      domain: `x.${domain}`,
    }).catch((e: unknown) => e);
    await setOutage(providerStateFile, false);
    // Assert
    expect(read).toMatchObject({
      providerUnavailable: true,
      lastCheckedAt: before.lastCheckedAt,
      dkimStatus: 'PENDING',
    });
    expect(read.dnsRecords.map((r) => r.purpose)).toEqual([
      'ownership',
      'dmarc',
    ]);
    expect(read.dnsRecords[0]).toEqual(before.dnsRecords[0]);
    expect(listed[0]?.providerUnavailable).toBe(true);
    expect(verify).toBeInstanceOf(ServiceUnavailableError);
    expect(declare).toBeInstanceOf(ServiceUnavailableError);
    expect((await listDomains(deps, orgId)).map((d) => d.domain)).toEqual([
      domain,
    ]);
  });

  it('refuses a second declaration by the same organization, and 404s another organization’s domain', async () => {
    const { deps, orgId, domain } = await setup();
    const other = await newOrg(deps);
    const declared = await declareDomain(deps, orgId, { domain });
    await expect(declareDomain(deps, orgId, { domain })).rejects.toThrow(
      ConflictError,
    );
    await expect(getDomain(deps, other, declared.id)).rejects.toThrow(
      NotFoundError,
    );
    await expect(verifyDomain(deps, other, declared.id)).rejects.toThrow(
      NotFoundError,
    );
    await expect(deleteDomain(deps, other, declared.id)).rejects.toThrow(
      NotFoundError,
    );
  });

  it('deletes a declaration, and the provider identity once nobody declares the domain', async () => {
    const { deps, orgId, domain } = await setup();
    const other = await newOrg(deps);
    const mine = await declareDomain(deps, orgId, { domain });
    const theirs = await declareDomain(deps, other, { domain });
    await deleteDomain(deps, orgId, mine.id);
    expect(await deps.provider.getDomain(domain)).toBeDefined();
    await deleteDomain(deps, other, theirs.id);
    expect(await deps.provider.getDomain(domain)).toBeUndefined();
    expect(await listDomains(deps, orgId)).toEqual([]);
  });

  it('reports a provider suspension: sending_paused and setup.status suspended', async () => {
    const { deps, orgId, domain, providerStateFile } = await setup();
    await declareDomain(deps, orgId, { domain });
    await setTenantStatus(providerStateFile, tenantNameOf(orgId), 'DISABLED');
    const suspended = await describeCaller(deps, caller(orgId));
    await setTenantStatus(providerStateFile, tenantNameOf(orgId), 'ENABLED');
    const reinstated = await describeCaller(deps, caller(orgId));
    expect(suspended.sending.blockers).toContain('sending_paused');
    expect(suspended.sending.setup.status).toBe('suspended');
    expect(reinstated.sending.blockers).not.toContain('sending_paused');
  });
});

/** Publishes the challenge of a declaration. */
const publishChallenge = async (records: DnsRecord[]) => {
  const challenge = challengeOf(records);
  await publishDns({
    name: challenge.name,
    type: 'TXT',
    value: challenge.value,
  });
};

describe('A8: declaring a domain reveals nothing about other tenants', () => {
  it('A8: a domain another organization verified shows the declarer its own pending state, and stays off its tenant until it proves ownership', async () => {
    // Arrange: A verifies the domain.
    const { deps, orgId: a, domain } = await setup();
    const b = await newOrg(deps);
    const ofA = await declareDomain(deps, a, { domain });
    await publishProviderRecords(ofA.dnsRecords);
    await publishChallenge(ofA.dnsRecords);
    expect((await verifyDomain(deps, a, ofA.id)).verified).toBe(true);
    // Act: B declares it, reads it, verifies it without its challenge.
    const declared = await declareDomain(deps, b, { domain });
    const read = await getDomain(deps, b, declared.id);
    const listed = await listDomains(deps, b);
    const verified = await verifyDomain(deps, b, declared.id);
    const tenantB = await deps.provider.getTenant(tenantNameOf(b));
    const { sending } = await describeCaller(deps, caller(b));
    // Assert
    const pending = {
      dkimStatus: 'PENDING',
      mailFromStatus: 'PENDING',
      ownershipProved: false,
      verified: false,
    };
    for (const view of [declared, read, listed[0], verified]) {
      expect(view).toMatchObject(pending);
    }
    expect(tenantB?.domains).toEqual([]);
    expect(sending.blockers).toContain('domain_not_verified');
    expect(sending.setup.status).toBe('dns_pending');
  });

  it('A8: once the declarer proves ownership, it sees the provider’s state and the domain moves to its tenant', async () => {
    // Arrange
    const { deps, orgId: a, domain } = await setup();
    const b = await newOrg(deps);
    const ofA = await declareDomain(deps, a, { domain });
    await publishProviderRecords(ofA.dnsRecords);
    await publishChallenge(ofA.dnsRecords);
    await verifyDomain(deps, a, ofA.id);
    const ofB = await declareDomain(deps, b, { domain });
    // Act
    await publishChallenge(ofB.dnsRecords);
    const proved = await verifyDomain(deps, b, ofB.id);
    // Assert
    expect(proved).toMatchObject({
      dkimStatus: 'SUCCESS',
      mailFromStatus: 'SUCCESS',
      verified: true,
    });
    expect((await deps.provider.getTenant(tenantNameOf(b)))?.domains).toEqual([
      domain,
    ]);
    expect(
      (await deps.provider.getTenant(tenantNameOf(a)))?.domains,
    ).not.toContain(domain);
  });

  it('A8: a domain stays off every tenant until its declarer proves ownership', async () => {
    const { deps, orgId, domain } = await setup();
    const declared = await declareDomain(deps, orgId, { domain });
    await publishProviderRecords(declared.dnsRecords);
    await verifyDomain(deps, orgId, declared.id);
    expect(
      (await deps.provider.getTenant(tenantNameOf(orgId)))?.domains,
    ).toEqual([]);
    await publishChallenge(declared.dnsRecords);
    await verifyDomain(deps, orgId, declared.id);
    expect(
      (await deps.provider.getTenant(tenantNameOf(orgId)))?.domains,
    ).toEqual([domain]);
  });
});

describe('A8: an identity made outside the service is nobody’s until proved', () => {
  it('A8: an identity the provider had before any declaration shows the declarer its own pending state, and removing the declaration keeps it', async () => {
    // Arrange: an identity made outside the service, DKIM and MAIL FROM SUCCESS.
    const { deps, orgId, domain } = await setup();
    const outside = await deps.provider.createDomain(
      domain,
      `bounce.${domain}`,
    );
    await publishProviderRecords(outside.records);
    // Act
    const declared = await declareDomain(deps, orgId, { domain });
    const listed = await listDomains(deps, orgId);
    await deleteDomain(deps, orgId, declared.id);
    // Assert
    for (const view of [declared, listed[0]]) {
      expect(view).toMatchObject({
        dkimStatus: 'PENDING',
        mailFromStatus: 'PENDING',
        verified: false,
      });
    }
    expect(await deps.provider.getDomain(domain)).toMatchObject({
      dkimStatus: 'SUCCESS',
    });
  });

  it('A8: once the declarer proves the domain of a found identity, it sees its state, and removing its declaration deletes the identity', async () => {
    // Arrange
    const { deps, orgId, domain } = await setup();
    const outside = await deps.provider.createDomain(
      domain,
      `bounce.${domain}`,
    );
    await publishProviderRecords(outside.records);
    const declared = await declareDomain(deps, orgId, { domain });
    await publishChallenge(declared.dnsRecords);
    // Act
    const proved = await verifyDomain(deps, orgId, declared.id);
    await deleteDomain(deps, orgId, declared.id);
    // Assert
    expect(proved).toMatchObject({ dkimStatus: 'SUCCESS', verified: true });
    expect(await deps.provider.getDomain(domain)).toBeUndefined();
  });
});

describe('A8: no tenant holds an identity its organization has not proved', () => {
  it('A8: the application’s own domain, its subdomains and parents cannot be declared: 400 naming the field, nothing written', async () => {
    // Arrange: the application sends from no-reply@mail.localhost.test.
    const { deps, orgId } = await setup();
    const names = [
      'mail.localhost.test',
      'eu.mail.localhost.test',
      'localhost.test',
    ];
    // Act
    const errors = await Promise.all(
      names.map((domain) =>
        declareDomain(deps, orgId, { domain }).catch((e: unknown) => e),
      ),
    );
    // Assert
    for (const [i, error] of errors.entries()) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toContain(names[i]);
      expect((error as ValidationError).details[0]?.field).toBe('domain');
      expect(await deps.provider.getDomain(names[i] ?? '')).toBeUndefined();
    }
    expect(await deps.domains.list(orgId)).toEqual([]);
  });

  it('A8: a domain transferred while the provider could not dissociate it leaves the previous owner’s tenant at its next provisioning', async () => {
    // Arrange: A proves the domain; B proves it while dissociating fails.
    const { deps: base, orgId: a, domain } = await setup();
    let failDissociate = true;
    const provider = new Proxy(base.provider, {
      get(target, name, receiver) {
        if (name === 'dissociateDomain' && failDissociate) {
          return async () => {
            throw new ServiceUnavailableError('provider.unavailable', 'down');
          };
        }
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const deps: Deps = { ...base, provider };
    const b = await newOrg(deps);
    const ofA = await declareDomain(deps, a, { domain });
    await publishProviderRecords(ofA.dnsRecords);
    await publishChallenge(ofA.dnsRecords);
    await verifyDomain(deps, a, ofA.id);
    const ofB = await declareDomain(deps, b, { domain });
    await publishChallenge(ofB.dnsRecords);
    await verifyDomain(deps, b, ofB.id);
    const stale = await deps.provider.getTenant(tenantNameOf(a));
    // Act: the provider answers again; A declares another domain.
    failDissociate = false;
    await declareDomain(deps, a, { domain: `other-${domain}` });
    // Assert
    expect(stale?.domains).toEqual([domain]);
    expect((await deps.provider.getTenant(tenantNameOf(a)))?.domains).toEqual(
      [],
    );
    expect((await deps.provider.getTenant(tenantNameOf(b)))?.domains).toEqual([
      domain,
    ]);
  });
});

/** Counts the calls of each method of a provider. */
const countingProvider = (provider: EmailProvider) => {
  const calls: string[] = [];
  const counted = new Proxy(provider, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return value.apply(target, args);
      };
    },
  });
  return { counted, calls };
};

/** A document client that records the key of every write it sends. */
const countingDynamo = () => {
  const client = testEngineClient();
  const writes: { command: string; key: unknown }[] = [];
  const send = client.send.bind(client);
  client.send = ((command: {
    constructor: { name: string };
    input: object;
  }) => {
    const name = command.constructor.name;
    if (/^(Put|Update|Delete|TransactWrite|BatchWrite)/.test(name)) {
      const input = command.input as { Key?: unknown; Item?: unknown };
      writes.push({ command: name, key: input.Key ?? input.Item ?? null });
    }
    return send(command as never);
  }) as typeof client.send;
  return { client, writes };
};

describe('A13: GET /domains writes only when a status really changed', () => {
  it('A13: GET /domains of an organization that declared no domain writes nothing', async () => {
    // Arrange: a fresh organization (no challenge token yet), counted writes.
    const test = await createTestDeps({ providerStatusTtlSeconds: 60 });
    const orgId = await newOrg(test.deps);
    const { client, writes } = countingDynamo();
    const table = { client, tableName: test.tableName };
    const deps: Deps = {
      ...test.deps,
      domains: new DynamoDomainRepository(table),
      organizations: new DynamoOrganizationRepository(table),
    };
    // Act
    const listed = await listDomains(deps, orgId);
    // Assert
    expect(listed).toEqual([]);
    expect(writes).toEqual([]);
  });

  it('A13: GET /domains reuses the provider’s answer within the freshness and writes only a domain whose status changed', async () => {
    // Arrange: two domains, counted provider calls and table writes.
    const clock = fixedClock();
    const test = await createTestDeps({ clock, providerStatusTtlSeconds: 60 });
    const { counted, calls } = countingProvider(
      new LocalEmailProvider(test.providerStateFile, test.deps.dns),
    );
    const { client, writes } = countingDynamo();
    const table = { client, tableName: test.tableName };
    const deps: Deps = {
      ...test.deps,
      provider: new RecentDomainAnswers(counted, clock),
      domains: new DynamoDomainRepository(table),
      organizations: new DynamoOrganizationRepository(table),
    };
    const orgId = await newOrg(deps);
    const label = randomUUID().slice(0, 8);
    const first = await declareDomain(deps, orgId, {
      domain: `${label}-1.example.test`,
    });
    await declareDomain(deps, orgId, { domain: `${label}-2.example.test` });
    await listDomains(deps, orgId);
    calls.length = 0;
    writes.length = 0;

    // Act 1: a second read within the freshness.
    clock.advance(30_000);
    const again = await listDomains(deps, orgId);
    const callsWithin = [...calls];
    const writesWithin = [...writes];

    // Act 2: a real change, read after the freshness.
    await publishProviderRecords(first.dnsRecords);
    clock.advance(31_000);
    const after = await listDomains(deps, orgId);

    // Assert
    expect(again.map((d) => d.dnsRecords.length)).toEqual([7, 7]);
    expect(callsWithin).toEqual([]);
    expect(writesWithin).toEqual([]);
    expect(calls).toEqual(['getDomain', 'getDomain']);
    expect(writes).toEqual([
      { command: 'UpdateCommand', key: keys.domain(orgId, first.id) },
    ]);
    expect(after.map((d) => d.dkimStatus)).toEqual(['SUCCESS', 'PENDING']);
  });
});

describe('a read never writes to the provider (issue 29, defect 4)', () => {
  it('an identity deleted outside the service reads as missing (FAILED, not verified, sending blocked) and is not recreated by reads; an admin’s verify recreates it', async () => {
    // Arrange: a verified domain whose identity is then deleted at the provider.
    const { deps, orgId, domain } = await setup();
    const declared = await declareDomain(deps, orgId, { domain });
    await publishProviderRecords(declared.dnsRecords);
    const challenge = challengeOf(declared.dnsRecords);
    await publishDns({
      name: challenge.name,
      type: 'TXT',
      value: challenge.value,
    });
    expect(await verifyDomain(deps, orgId, declared.id)).toMatchObject({
      verified: true,
    });
    await deps.provider.deleteDomain(domain);

    // Act
    const read = await getDomain(deps, orgId, declared.id);
    const [listed] = await listDomains(deps, orgId);
    const afterReads = await deps.provider.getDomain(domain);
    const { sending } = await describeCaller(deps, caller(orgId));
    const verified = await verifyDomain(deps, orgId, declared.id);

    // Assert
    expect(read).toMatchObject({
      dkimStatus: 'FAILED',
      mailFromStatus: 'FAILED',
      verified: false,
      ownershipProved: true,
      providerIdentityMissing: true,
      providerUnavailable: false,
    });
    expect(read.dnsRecords.map((r) => r.purpose)).toEqual([
      'ownership',
      'dmarc',
    ]);
    expect(listed).toEqual(read);
    expect(afterReads).toBeUndefined();
    expect(sending.ready).toBe(false);
    expect(sending.blockers).toContain('domain_not_verified');
    expect(verified).toMatchObject({
      providerIdentityMissing: false,
      ownershipProved: true,
    });
    expect(verified.dnsRecords.map((r) => r.purpose)).toContain('dkim');
    expect(await deps.provider.getDomain(domain)).toBeDefined();
  });
});
