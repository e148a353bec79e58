import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  clearLocalDns,
  isFqdn,
  type LocalFiles,
  setLocalDnsRecord,
  setLocalOutage,
  setLocalQuota,
  setLocalSimulation,
  setLocalTenantStatus,
} from '../../../infra/admin/local-commands.ts';
import { localFilesOf } from '../../../infra/admin/targets.ts';
import { readDnsRecords } from '../../../infra/local/dns-records.ts';
import {
  LocalEmailProvider,
  readProviderState,
} from '../../../shared/adapters/local/local-email-provider.ts';
import { ValidationError } from '../../../shared/errors.ts';

const run = promisify(execFile);
const ORG_ID = '01a20000-0000-7000-8000-000000000001';

describe('admin CLI: local-only operations', () => {
  let dataDir: string;
  let files: LocalFiles;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'local-commands-'));
    files = localFilesOf(dataDir);
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finds dns.json, provider.json, sent.jsonl and clock.json in the data dir', () => {
    expect(files).toEqual({
      dnsRecordsFile: join(dataDir, 'dns.json'),
      providerStateFile: join(dataDir, 'provider.json'),
      sentLogFile: join(dataDir, 'sent.jsonl'),
      dataDir,
      clockFile: join(dataDir, 'clock.json'),
    });
  });

  describe('local dns set / clear', () => {
    it('publishes a record, normalizing the name', async () => {
      // Act
      const result = await setLocalDnsRecord(files, {
        name: 'Bounce.Example.Test.',
        type: 'mx',
        value: 'Feedback-SMTP.local.amazonses.com',
        priority: '10',
      });
      // Assert
      expect(result).toEqual({
        name: 'bounce.example.test',
        type: 'MX',
        value: 'feedback-smtp.local.amazonses.com',
      });
      expect(await readDnsRecords(files.dnsRecordsFile)).toEqual([
        {
          name: 'bounce.example.test',
          type: 'MX',
          value: 'feedback-smtp.local.amazonses.com',
          priority: 10,
        },
      ]);
    });

    it('keeps a TXT value as given', async () => {
      const value = 'v=DMARC1; p=none; rua=mailto:Dmarc@Example.test';
      await setLocalDnsRecord(files, {
        name: '_dmarc.example.test',
        type: 'TXT',
        value,
      });
      expect(await readDnsRecords(files.dnsRecordsFile)).toEqual([
        { name: '_dmarc.example.test', type: 'TXT', value },
      ]);
    });

    it.each([
      [{ name: 'localhost', type: 'TXT', value: 'x' }, 'name'],
      [{ name: 'a..test', type: 'TXT', value: 'x' }, 'name'],
      [{ name: '-a.test', type: 'TXT', value: 'x' }, 'name'],
      [{ name: 'a.test', type: 'A', value: '1.2.3.4' }, 'type'],
      [{ name: 'a.test', type: 'TXT', value: '' }, 'value'],
      [{ name: 'a.test', type: 'CNAME', value: 'not a name' }, 'value'],
      [
        { name: 'a.test', type: 'MX', value: 'mx.test', priority: '-1' },
        'priority',
      ],
      [
        { name: 'a.test', type: 'MX', value: 'mx.test', priority: '70000' },
        'priority',
      ],
      [{ name: 'a.test', type: 'TXT', value: 'x', priority: '1' }, 'priority'],
    ])('refuses %j, naming --%s', async (input, field) => {
      const failure = await setLocalDnsRecord(files, input).catch(
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ValidationError);
      expect((failure as ValidationError).details.map((d) => d.field)).toEqual([
        field,
      ]);
    });

    it('clears the records', async () => {
      await setLocalDnsRecord(files, {
        name: 'a.example.test',
        type: 'TXT',
        value: 'x',
      });
      expect(await clearLocalDns(files)).toEqual({ cleared: true });
      expect(await readDnsRecords(files.dnsRecordsFile)).toEqual([]);
    });

    it('knows a fully qualified domain name', () => {
      expect(isFqdn('a.example.test')).toBe(true);
      expect(isFqdn('tok._domainkey.example.test.')).toBe(true);
      expect(isFqdn('example')).toBe(false);
      expect(isFqdn('a.b.123')).toBe(false);
      expect(isFqdn(`${'a'.repeat(64)}.test`)).toBe(false);
    });
  });

  describe('local provider', () => {
    it('suspends and reinstates the tenant of an organization', async () => {
      // Arrange: the tenant the sending setup would have created.
      const provider = new LocalEmailProvider(files.providerStateFile, {
        resolveTxt: async () => [],
        resolveCname: async () => [],
        resolveMx: async () => [],
      });
      await provider.ensureTenant(`org-${ORG_ID}`);
      // Act
      const suspended = await setLocalTenantStatus(
        files,
        { orgId: ORG_ID },
        'DISABLED',
      );
      const tenant = await provider.getTenant(`org-${ORG_ID}`);
      // Assert
      expect(suspended).toEqual({ orgId: ORG_ID, sendingStatus: 'DISABLED' });
      expect(tenant?.sendingStatus).toBe('DISABLED');
    });

    it('explains that an organization without a tenant cannot be suspended', async () => {
      await expect(
        setLocalTenantStatus(files, { orgId: ORG_ID }, 'DISABLED'),
      ).rejects.toThrow('declare a domain first');
      await expect(
        setLocalTenantStatus(files, { orgId: 'nope' }, 'DISABLED'),
      ).rejects.toThrow(ValidationError);
    });

    it('switches an outage on and off', async () => {
      expect(await setLocalOutage(files, true)).toEqual({ outage: true });
      expect((await readProviderState(files.providerStateFile)).outage).toBe(
        true,
      );
      expect(await setLocalOutage(files, false)).toEqual({ outage: false });
      expect((await readProviderState(files.providerStateFile)).outage).toBe(
        false,
      );
    });
  });

  describe('local quota set', () => {
    it('sets the quota', async () => {
      expect(
        await setLocalQuota(files, { max24h: '200000', rate: '40' }),
      ).toEqual({ max24HourSend: 200_000, maxSendRate: 40 });
      expect((await readProviderState(files.providerStateFile)).quota).toEqual({
        max24HourSend: 200_000,
        maxSendRate: 40,
        sentLast24Hours: 0,
      });
    });

    it.each([
      [{ max24h: '0', rate: '1' }, 'max24h'],
      [{ max24h: '1.5', rate: '1' }, 'max24h'],
      [{ max24h: '10', rate: 'fast' }, 'rate'],
    ])('refuses %j, naming --%s', async (input, field) => {
      const failure = await setLocalQuota(files, input).catch(
        (error: unknown) => error,
      );
      expect((failure as ValidationError).details?.[0]?.field).toBe(field);
    });
  });

  describe('local provider simulate', () => {
    it('sets the shares given, keeps the others, and answers them all', async () => {
      // Act
      const first = await setLocalSimulation(files, {
        'machine-opens': '0.35',
        'scanner-clicks': '0.1',
      });
      const second = await setLocalSimulation(files, {
        bounces: '0.05',
        complaints: '0',
        'scanner-clicks': '1',
      });

      // Assert
      expect(first).toEqual({
        bounces: 0,
        complaints: 0,
        machineOpens: 0.35,
        scannerClicks: 0.1,
      });
      expect(second).toEqual({
        bounces: 0.05,
        complaints: 0,
        machineOpens: 0.35,
        scannerClicks: 1,
      });
      expect(
        (await readProviderState(files.providerStateFile)).simulation,
      ).toEqual(second);
    });

    it.each([
      [{ bounces: '1.5' }, 'bounces'],
      [{ 'machine-opens': '-0.1' }, 'machine-opens'],
      [{ 'scanner-clicks': 'half' }, 'scanner-clicks'],
    ])('refuses %j, naming --%s, and changes nothing', async (input, field) => {
      const failure = await setLocalSimulation(files, input).catch(
        (error: unknown) => error,
      );
      expect((failure as ValidationError).details?.[0]?.field).toBe(field);
      expect(
        (await readProviderState(files.providerStateFile)).simulation,
      ).toEqual({
        bounces: 0,
        complaints: 0,
        machineOpens: 0,
        scannerClicks: 0,
      });
    });
  });

  describe('as a process, with no stack running', () => {
    const admin = (...args: string[]) =>
      run('npm', [
        'run',
        '--silent',
        'admin',
        '--',
        ...args,
        '--data-dir',
        dataDir,
      ]);

    it('prints one JSON object and exits 0; exits 1 on invalid input, 2 on misuse', async () => {
      // Act
      const ok = await admin(
        'local',
        'dns',
        'set',
        '--name',
        'x.example.test',
        '--type',
        'TXT',
        '--value',
        'hello world',
      );
      const invalid = await admin(
        'local',
        'quota',
        'set',
        '--max24h',
        '0',
        '--rate',
        '1',
      ).catch((error: { code: number; stderr: string }) => error);
      const misuse = await admin('local', 'dns', 'clear', '--stack', 'S').catch(
        (error: { code: number; stderr: string }) => error,
      );
      // Assert
      expect(JSON.parse(ok.stdout)).toEqual({
        name: 'x.example.test',
        type: 'TXT',
        value: 'hello world',
      });
      expect(invalid).toMatchObject({ code: 1 });
      expect((invalid as { stderr: string }).stderr).toContain(
        '--max24h: must be a positive integer',
      );
      expect(misuse).toMatchObject({ code: 2 });
      expect((misuse as { stderr: string }).stderr).toContain('Usage:');
    }, 30_000);
  });
});
