/**
 * The local DNS server: answers TXT, CNAME and MX queries from a records file
 * (see dns-records.ts), on 127.0.0.1 over UDP and TCP (for answers too big
 * for a datagram), so the sending-setup checks of the local stack and the
 * tests resolve what the developer "published". Built on dns2's packet codec
 * and servers.
 */
import { stat } from 'node:fs/promises';
import type { Socket } from 'node:net';
import {
  createTCPServer,
  createUDPServer,
  type DnsHandler,
  Packet,
  type Question,
  type Resource,
  type TCPServer,
  type UDPServer,
} from 'dns2';
import getPort from 'get-port';
import {
  type LocalDnsRecord,
  normalizeDnsName,
  readDnsRecords,
} from './dns-records.ts';

/** A running DNS server. */
export interface LocalDnsServer {
  /** `127.0.0.1:PORT`, as `NodeDnsResolver` and `dig -p` take it. */
  address: string;
  port: number;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

/** Response codes (RFC 1035 §4.1.1); dns2 has them, its types do not. */
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;

/** A TXT character-string holds at most 255 bytes: longer values are split. */
const txtChunks = (value: string): string[] => {
  const chunks: string[] = [];
  let current = '';
  for (const char of value) {
    if (Buffer.byteLength(current + char) > 255) {
      chunks.push(current);
      current = '';
    }
    current += char;
  }
  chunks.push(current);
  return chunks;
};

/** The records file, re-read when it changed (another inode, mtime or size). */
const recordsSource = (file: string) => {
  let version = '';
  let records: LocalDnsRecord[] = [];
  return async (): Promise<LocalDnsRecord[]> => {
    const stats = await stat(file).catch(() => undefined);
    const current = stats
      ? `${stats.ino}:${stats.mtimeMs}:${stats.size}`
      : 'missing';
    if (current !== version) {
      records = stats ? await readDnsRecords(file) : [];
      version = current;
    }
    return records;
  };
};

const answerOf = (question: Question, record: LocalDnsRecord): Resource => {
  // TTL 0: resolvers must not cache what the developer may change any time.
  const base = { class: Packet.CLASS.IN, ttl: 0 };
  switch (record.type) {
    case 'TXT':
      return Packet.createResourceFromQuestion(question, {
        ...base,
        data: txtChunks(record.value),
      });
    case 'CNAME':
      return Packet.createResourceFromQuestion(question, {
        ...base,
        domain: normalizeDnsName(record.value),
      });
    case 'MX':
      return Packet.createResourceFromQuestion(question, {
        ...base,
        exchange: normalizeDnsName(record.value),
        priority: record.priority ?? 10,
      });
  }
};

const TYPE_NAMES: Record<number, LocalDnsRecord['type']> = {
  [Packet.TYPE.TXT]: 'TXT',
  [Packet.TYPE.CNAME]: 'CNAME',
  [Packet.TYPE.MX]: 'MX',
};

/** Answers one query from the current records. */
const answer = async (
  request: Packet,
  records: () => Promise<LocalDnsRecord[]>,
): Promise<Packet> => {
  const response = Packet.createResponseFromRequest(request);
  response.header.aa = 1;
  try {
    const all = await records();
    for (const question of request.questions) {
      const name = normalizeDnsName(question.name);
      const type = TYPE_NAMES[question.type];
      // A name exists when it holds records or has names below it.
      const exists = all.some((r) => {
        const owner = normalizeDnsName(r.name);
        return owner === name || owner.endsWith(`.${name}`);
      });
      if (!exists) {
        response.header.rcode = RCODE.NXDOMAIN;
        continue;
      }
      for (const record of all) {
        if (record.type === type && normalizeDnsName(record.name) === name) {
          response.answers.push(answerOf(question, record));
        }
      }
    }
  } catch {
    // An unreadable records file: the resolver reports the failure.
    response.header.rcode = RCODE.SERVFAIL;
  }
  return response;
};

/** Binds a UDP and a TCP server on `port`; rejects when either is taken. */
const listenBoth = async (
  udp: UDPServer,
  tcp: TCPServer,
  port: number,
): Promise<void> => {
  const bound = <T>(emitter: NodeJS.EventEmitter, start: () => T) =>
    new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => {
        emitter.off('listening', onListening);
        reject(error);
      };
      const onListening = () => {
        emitter.off('error', onError);
        resolve();
      };
      emitter.once('error', onError);
      emitter.once('listening', onListening);
      start();
    });
  try {
    await bound(udp, () => udp.bind(port, HOST));
  } catch (error) {
    udp.close();
    throw error;
  }
  try {
    await bound(tcp, () => tcp.listen(port, HOST));
  } catch (error) {
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    throw error;
  }
};

/**
 * Starts the DNS server on `port`, or on a free port (free for UDP and TCP
 * alike, which get-port alone cannot promise).
 */
export const startDnsServer = async (options: {
  recordsFile: string;
  port?: number;
}): Promise<LocalDnsServer> => {
  const records = recordsSource(options.recordsFile);
  const handle: DnsHandler = (request, send) => {
    void answer(request, records).then(send, () => undefined);
  };
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await getPort({ host: HOST }));
    const udp = createUDPServer(handle);
    const tcp = createTCPServer(handle);
    const connections = new Set<Socket>();
    tcp.on('connection', (socket: Socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
    });
    try {
      await listenBoth(udp, tcp, port);
    } catch (error) {
      udp.removeAllListeners();
      tcp.removeAllListeners();
      const taken = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (options.port !== undefined || !taken || attempt >= 10) throw error;
      continue;
    }
    // A malformed query must not bring the server down.
    udp.on('requestError', () => undefined);
    tcp.on('requestError', () => undefined);
    udp.on('error', () => undefined);
    tcp.on('error', () => undefined);
    let stopped: Promise<void> | undefined;
    return {
      address: `${HOST}:${port}`,
      port,
      stop: () => {
        stopped ??= Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => {
            tcp.close(() => resolve());
            for (const socket of connections) socket.destroy();
          }),
        ]).then(() => undefined);
        return stopped;
      },
    };
  }
};
