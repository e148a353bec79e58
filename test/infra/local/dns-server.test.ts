import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TCPClient } from 'dns2';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setDnsRecord } from '../../../infra/local/dns-records.ts';
import {
  type LocalDnsServer,
  startDnsServer,
} from '../../../infra/local/dns-server.ts';
import { writeJsonFile } from '../../../shared/adapters/local/json-file.ts';
import { NodeDnsResolver } from '../../../shared/adapters/node-dns-resolver.ts';
import { logger } from '../../../shared/observability.ts';

describe('the local DNS server, through NodeDnsResolver', () => {
  let dir: string;
  let file: string;
  let server: LocalDnsServer;
  let resolver: NodeDnsResolver;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dns-server-'));
    file = join(dir, 'dns.json');
    server = await startDnsServer({ recordsFile: file });
    resolver = new NodeDnsResolver([server.address]);
  });

  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('listens on a loopback address and port', () => {
    expect(server.address).toBe(`127.0.0.1:${server.port}`);
  });

  it('answers a TXT record longer than 255 bytes, split and joined back', async () => {
    // Arrange: longer than a TXT string and than a 512-byte datagram.
    const value = `v=DKIM1; p=${'A'.repeat(700)}`;
    await setDnsRecord(file, { name: 'long.txt.test', type: 'TXT', value });
    // Act
    const answer = await resolver.resolveTxt('long.txt.test');
    // Assert
    expect(answer).toEqual([value]);
  });

  it('answers several TXT records of one name', async () => {
    await writeJsonFile(file, {
      records: [
        { name: 'many.txt.test', type: 'TXT', value: 'one' },
        { name: 'many.txt.test', type: 'TXT', value: 'two' },
      ],
    });
    expect((await resolver.resolveTxt('many.txt.test')).sort()).toEqual([
      'one',
      'two',
    ]);
  });

  it('answers CNAME and MX records', async () => {
    await setDnsRecord(file, {
      name: 'tok._domainkey.cname.test',
      type: 'CNAME',
      value: 'tok.dkim.amazonses.com.',
    });
    await setDnsRecord(file, {
      name: 'bounce.mx.test',
      type: 'MX',
      value: 'feedback-smtp.local.amazonses.com',
      priority: 10,
    });
    expect(await resolver.resolveCname('tok._domainkey.cname.test')).toEqual([
      'tok.dkim.amazonses.com',
    ]);
    expect(await resolver.resolveMx('bounce.mx.test')).toEqual([
      { exchange: 'feedback-smtp.local.amazonses.com', priority: 10 },
    ]);
  });

  it('matches names without case and with a trailing dot', async () => {
    await setDnsRecord(file, {
      name: 'Mixed.Case.test.',
      type: 'TXT',
      value: 'Keeps Its Case',
    });
    expect(await resolver.resolveTxt('mixed.CASE.test')).toEqual([
      'Keeps Its Case',
    ]);
    expect(await resolver.resolveTxt('mixed.case.test.')).toEqual([
      'Keeps Its Case',
    ]);
  });

  it('answers nothing for a missing name or a missing type', async () => {
    await setDnsRecord(file, {
      name: 'only-txt.test',
      type: 'TXT',
      value: 'x',
    });
    expect(await resolver.resolveTxt('nowhere.test')).toEqual([]);
    expect(await resolver.resolveMx('only-txt.test')).toEqual([]);
    expect(await resolver.resolveCname('only-txt.test')).toEqual([]);
  });

  it('sees a change of the records file at once', async () => {
    await setDnsRecord(file, { name: 'change.test', type: 'TXT', value: 'a' });
    expect(await resolver.resolveTxt('change.test')).toEqual(['a']);
    await setDnsRecord(file, { name: 'change.test', type: 'TXT', value: 'b' });
    expect(await resolver.resolveTxt('change.test')).toEqual(['b']);
  });

  it('answers over TCP too', async () => {
    await setDnsRecord(file, { name: 'tcp.test', type: 'TXT', value: 'tcp' });
    const query = TCPClient({ dns: '127.0.0.1', port: server.port });
    const response = await query('tcp.test', 'TXT');
    expect(response.answers.map((a) => a.data)).toEqual(['tcp']);
  });

  it('refuses a port already taken', async () => {
    await expect(
      startDnsServer({ recordsFile: file, port: server.port }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('answers nothing, after a warning, when the server is unreachable', async () => {
    // Arrange: a port where no server listens any more.
    const gone = await startDnsServer({ recordsFile: file });
    await gone.stop();
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => {});
    const unreachable = new NodeDnsResolver([gone.address]);
    try {
      // Act
      const answers = await Promise.all([
        unreachable.resolveTxt('change.test'),
        unreachable.resolveCname('change.test'),
        unreachable.resolveMx('change.test'),
      ]);
      // Assert
      expect(answers).toEqual([[], [], []]);
      expect(warn).toHaveBeenCalledTimes(3);
      expect(warn).toHaveBeenCalledWith(
        'DNS lookup failed',
        expect.objectContaining({ name: 'change.test', type: 'TXT' }),
      );
    } finally {
      warn.mockRestore();
    }
  });
});
