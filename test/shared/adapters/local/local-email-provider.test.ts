import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import {
  LocalEmailProvider,
  setOutage,
  setQuota,
  setTenantStatus,
} from '../../../../shared/adapters/local/local-email-provider.ts';
import { NodeDnsResolver } from '../../../../shared/adapters/node-dns-resolver.ts';
import { ServiceUnavailableError } from '../../../../shared/errors.ts';
import type { EmailProvider } from '../../../../shared/sending/provider.ts';
import { publishDns } from '../../../support/dynamo.ts';

/** A domain of this test alone on the shared DNS server. */
const uniqueDomain = () => `d${randomUUID().slice(0, 8)}.example.test`;

describe('LocalEmailProvider', () => {
  let stateFile: string;
  let provider: LocalEmailProvider;

  beforeEach(() => {
    stateFile = join(inject('scratchDir'), `provider-${randomUUID()}.json`);
    provider = new LocalEmailProvider(
      stateFile,
      new NodeDnsResolver([inject('dnsServer')]),
    );
  });

  describe('domain identities', () => {
    it('creates an identity with three DKIM CNAMEs and the MAIL FROM records, pending', async () => {
      // Arrange
      const domain = uniqueDomain();
      // Act
      const created = await provider.createDomain(domain, `bounce.${domain}`);
      // Assert
      const tokens = created.records
        .slice(0, 3)
        .map((r) => r.name.split('.')[0]);
      expect(tokens).toHaveLength(3);
      expect(new Set(tokens).size).toBe(3);
      expect(created).toEqual({
        dkimStatus: 'PENDING',
        mailFromDomain: `bounce.${domain}`,
        mailFromStatus: 'PENDING',
        records: [
          ...tokens.map((token) => ({
            type: 'CNAME',
            name: `${token}._domainkey.${domain}`,
            value: `${token}.dkim.amazonses.com`,
            purpose: 'dkim',
          })),
          {
            type: 'MX',
            name: `bounce.${domain}`,
            value: 'feedback-smtp.local.amazonses.com',
            priority: 10,
            purpose: 'mail_from',
          },
          {
            type: 'TXT',
            name: `bounce.${domain}`,
            value: 'v=spf1 include:amazonses.com ~all',
            purpose: 'mail_from',
          },
        ],
      });
    });

    it('is idempotent, with the same tokens for the same domain', async () => {
      const domain = uniqueDomain();
      const first = await provider.createDomain(domain, `bounce.${domain}`);
      const again = await provider.createDomain(domain, `other.${domain}`);
      const elsewhere = await new LocalEmailProvider(
        join(inject('scratchDir'), `provider-${randomUUID()}.json`),
        new NodeDnsResolver([inject('dnsServer')]),
      ).createDomain(domain, `bounce.${domain}`);
      expect(again).toEqual(first);
      expect(elsewhere.records).toEqual(first.records);
    });

    it('knows no identity it did not create', async () => {
      expect(await provider.getDomain(uniqueDomain())).toBeUndefined();
    });

    it('verifies DKIM once the three CNAMEs are published', async () => {
      // Arrange
      const domain = uniqueDomain();
      const { records } = await provider.createDomain(
        domain,
        `bounce.${domain}`,
      );
      const dkim = records.slice(0, 3);
      // Act
      for (const record of dkim.slice(0, 2)) await publishDns(record);
      const partly = await provider.getDomain(domain);
      for (const record of dkim.slice(2)) await publishDns(record);
      const fully = await provider.getDomain(domain);
      // Assert
      expect(partly?.dkimStatus).toBe('PENDING');
      expect(fully?.dkimStatus).toBe('SUCCESS');
      expect(fully?.mailFromStatus).toBe('PENDING');
    });

    it('keeps DKIM pending while a CNAME points elsewhere', async () => {
      const domain = uniqueDomain();
      const { records } = await provider.createDomain(
        domain,
        `bounce.${domain}`,
      );
      for (const record of records.slice(0, 3)) {
        await publishDns({ ...record, value: 'wrong.dkim.amazonses.com' });
      }
      expect((await provider.getDomain(domain))?.dkimStatus).toBe('PENDING');
    });

    it('verifies the MAIL FROM domain once its MX is published', async () => {
      // Arrange
      const domain = uniqueDomain();
      await provider.createDomain(domain, `bounce.${domain}`);
      // Act
      await publishDns({
        name: `bounce.${domain}`,
        type: 'MX',
        value: 'feedback-smtp.local.amazonses.com',
        priority: 10,
      });
      // Assert
      const identity = await provider.getDomain(domain);
      expect(identity?.mailFromStatus).toBe('SUCCESS');
      expect(identity?.dkimStatus).toBe('PENDING');
    });

    it('matches domains without case', async () => {
      const domain = uniqueDomain();
      await provider.createDomain(domain.toUpperCase(), `BOUNCE.${domain}`);
      expect((await provider.getDomain(domain))?.mailFromDomain).toBe(
        `bounce.${domain}`,
      );
    });

    it('deletes an identity, idempotently, and its tenant associations', async () => {
      // Arrange
      const domain = uniqueDomain();
      await provider.createDomain(domain, `bounce.${domain}`);
      await provider.ensureTenant('org-a');
      await provider.associateDomain('org-a', domain);
      // Act
      await provider.deleteDomain(domain);
      await provider.deleteDomain(domain);
      // Assert
      expect(await provider.getDomain(domain)).toBeUndefined();
      expect((await provider.getTenant('org-a'))?.domains).toEqual([]);
    });
  });

  describe('tenants', () => {
    it('creates a tenant once, enabled and with its configuration set', async () => {
      expect(await provider.getTenant('org-1')).toBeUndefined();
      await provider.ensureTenant('org-1');
      await provider.ensureTenant('org-1');
      expect(await provider.getTenant('org-1')).toEqual({
        sendingStatus: 'ENABLED',
        configurationSetAssociated: true,
        domains: [],
      });
    });

    it('associates and dissociates domains, idempotently', async () => {
      // Arrange
      const [a, b] = [uniqueDomain(), uniqueDomain()];
      await provider.createDomain(a, `bounce.${a}`);
      await provider.createDomain(b, `bounce.${b}`);
      await provider.ensureTenant('org-2');
      // Act
      await provider.associateDomain('org-2', a);
      await provider.associateDomain('org-2', a);
      await provider.associateDomain('org-2', b);
      const both = await provider.getTenant('org-2');
      await provider.dissociateDomain('org-2', a);
      await provider.dissociateDomain('org-2', a);
      await provider.dissociateDomain('org-none', a);
      // Assert
      expect(both?.domains).toEqual([a, b]);
      expect((await provider.getTenant('org-2'))?.domains).toEqual([b]);
    });

    it('refuses, as SES does, to associate with a missing tenant or identity', async () => {
      const domain = uniqueDomain();
      await provider.createDomain(domain, `bounce.${domain}`);
      await provider.ensureTenant('org-3');
      await expect(provider.associateDomain('org-x', domain)).rejects.toThrow(
        'no tenant org-x',
      );
      await expect(
        provider.associateDomain('org-3', uniqueDomain()),
      ).rejects.toThrow('no identity');
    });

    it('shows a suspension and a reinstatement', async () => {
      await provider.ensureTenant('org-4');
      await setTenantStatus(stateFile, 'org-4', 'DISABLED');
      const suspended = await provider.getTenant('org-4');
      await setTenantStatus(stateFile, 'org-4', 'ENABLED');
      expect(suspended?.sendingStatus).toBe('DISABLED');
      expect((await provider.getTenant('org-4'))?.sendingStatus).toBe(
        'ENABLED',
      );
    });

    it('cannot suspend a tenant that does not exist', async () => {
      await expect(
        setTenantStatus(stateFile, 'org-missing', 'DISABLED'),
      ).rejects.toThrow(
        'no tenant for this organization yet: declare a domain first',
      );
    });
  });

  describe('account', () => {
    it('has the default quota, then the one set', async () => {
      const before = await provider.getAccount();
      await setQuota(stateFile, { max24HourSend: 100_000, maxSendRate: 50 });
      expect(before).toEqual({
        max24HourSend: 50_000,
        maxSendRate: 14,
        sentLast24Hours: 0,
      });
      expect(await provider.getAccount()).toEqual({
        max24HourSend: 100_000,
        maxSendRate: 50,
        sentLast24Hours: 0,
      });
    });
  });

  describe('an outage', () => {
    const calls: [string, (p: EmailProvider) => Promise<unknown>][] = [
      ['createDomain', (p) => p.createDomain('o.example.test', 'b.o.test')],
      ['getDomain', (p) => p.getDomain('o.example.test')],
      ['deleteDomain', (p) => p.deleteDomain('o.example.test')],
      ['ensureTenant', (p) => p.ensureTenant('org-o')],
      ['getTenant', (p) => p.getTenant('org-o')],
      ['associateDomain', (p) => p.associateDomain('org-o', 'o.example.test')],
      [
        'dissociateDomain',
        (p) => p.dissociateDomain('org-o', 'o.example.test'),
      ],
      ['getAccount', (p) => p.getAccount()],
    ];

    it.each(calls)('makes %s fail as unavailable', async (_, call) => {
      // Arrange
      await provider.ensureTenant('org-o');
      await setOutage(stateFile, true);
      // Act
      const failure = await call(provider).catch((error: unknown) => error);
      // Assert
      expect(failure).toBeInstanceOf(ServiceUnavailableError);
      expect(failure).toMatchObject({
        code: 'provider.unavailable',
        message: 'The email provider cannot be reached right now',
      });
    });

    it('ends, and nothing changed meanwhile', async () => {
      await setOutage(stateFile, true);
      const before = await readFile(stateFile, 'utf8');
      await provider.ensureTenant('org-p').catch(() => undefined);
      expect(await readFile(stateFile, 'utf8')).toBe(before);
      await setOutage(stateFile, false);
      await provider.ensureTenant('org-p');
      expect(await provider.getTenant('org-p')).toBeDefined();
    });
  });

  it('explains a state file it cannot read', async () => {
    await writeFile(stateFile, JSON.stringify({ outage: 'maybe' }));
    await expect(provider.getAccount()).rejects.toThrow(
      'is not a provider state file',
    );
  });
});
