import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  clearDnsRecords,
  ensureDnsRecordsFile,
  readDnsRecords,
  setDnsRecord,
} from '../../../infra/local/dns-records.ts';

describe('the local DNS records file', () => {
  let dir: string;
  let file: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dns-records-'));
    file = join(dir, 'dns.json');
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads no records from a missing file, and creates an empty one', async () => {
    expect(await readDnsRecords(file)).toEqual([]);
    await ensureDnsRecordsFile(file);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ records: [] });
  });

  it('keeps an existing file when asked to ensure one', async () => {
    await setDnsRecord(file, { name: 'a.test', type: 'TXT', value: 'x' });
    await ensureDnsRecordsFile(file);
    expect(await readDnsRecords(file)).toHaveLength(1);
  });

  it('replaces the records of the same name and type, and keeps the others', async () => {
    // Arrange
    await writeFile(
      file,
      JSON.stringify({
        records: [
          { name: 'a.test', type: 'TXT', value: 'old 1' },
          { name: 'A.test.', type: 'TXT', value: 'old 2' },
          { name: 'a.test', type: 'MX', value: 'mx.test', priority: 5 },
        ],
      }),
    );
    // Act
    await setDnsRecord(file, { name: 'A.TEST', type: 'TXT', value: 'new' });
    // Assert
    expect(await readDnsRecords(file)).toEqual([
      { name: 'a.test', type: 'MX', value: 'mx.test', priority: 5 },
      { name: 'a.test', type: 'TXT', value: 'new' },
    ]);
  });

  it('gives an MX record priority 10 unless told', async () => {
    await setDnsRecord(file, { name: 'm.test', type: 'MX', value: 'mx.test' });
    expect(await readDnsRecords(file)).toEqual([
      { name: 'm.test', type: 'MX', value: 'mx.test', priority: 10 },
    ]);
  });

  it('clears every record', async () => {
    await setDnsRecord(file, { name: 'a.test', type: 'TXT', value: 'x' });
    await clearDnsRecords(file);
    expect(await readDnsRecords(file)).toEqual([]);
  });

  it('loses no record when many writers publish at once, and leaves no temp file', async () => {
    // Act
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        setDnsRecord(file, { name: `n${i}.test`, type: 'TXT', value: `${i}` }),
      ),
    );
    // Assert
    expect(await readDnsRecords(file)).toHaveLength(25);
    expect(await readdir(dir)).toEqual(['dns.json']);
  });

  it('explains a file that is not a records file', async () => {
    await writeFile(file, JSON.stringify({ records: [{ name: 'a.test' }] }));
    await expect(readDnsRecords(file)).rejects.toThrow(
      'is not a DNS records file',
    );
    await writeFile(file, '{ not json');
    await expect(readDnsRecords(file)).rejects.toThrow('is not valid JSON');
  });
});
