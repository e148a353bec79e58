/**
 * Driven adapter: the HTTP client of webhook deliveries, guarded against
 * server-side request forgery. One attempt is one POST:
 * - the host is resolved once, and EVERY address it resolves to is checked
 *   (`addressRefusal`: public unicast only, loopback where the local stack
 *   allows it); one refused address refuses the attempt;
 * - the connection goes to an address checked, never to a fresh lookup:
 *   the request's `lookup` answers the checked addresses, so a DNS answer
 *   that changes between the check and the connection (rebinding) cannot
 *   slip past; TLS still names and verifies the host name (SNI, the
 *   certificate), as the URL says;
 * - no redirect is followed (a 3xx is an answer, which the domain counts
 *   as a failure), no proxy, no pooled connection;
 * - the whole attempt — lookup, connection, TLS, request, answer — has 5 s;
 *   at most 4 KB of the answer is read, the rest dropped unread.
 * It never throws for what the endpoint does: every failure is an answer
 * with an `error`.
 */
import { lookup as systemLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressRefusal } from '../webhooks/addresses.ts';
import type {
  WebhookRequest,
  WebhookResponse,
  WebhookSender,
  WebhookUrlRules,
} from '../webhooks/delivery-ports.ts';
import { ATTEMPT_TIMEOUT_MS, MAX_RESPONSE_BYTES } from '../webhooks/model.ts';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system's resolver (getaddrinfo), every address, in its order. */
export const systemResolveHost: ResolveHost = async (hostname) =>
  (await systemLookup(hostname, { all: true, verbatim: true })).map(
    ({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }),
  );

/** Options of a {@link GuardedWebhookSender}. */
export interface GuardedWebhookSenderOptions {
  rules: Pick<WebhookUrlRules, 'allowLoopback'>;
  /** Default: the system's resolver; tests give their own. */
  resolveHost?: ResolveHost;
  /** The whole attempt; default 5 s. */
  timeoutMs?: number;
  /** Bytes of the answer read at most; default 4 KB. */
  maxResponseBytes?: number;
}

/** A failure of the attempt, said in a line for the delivery log. */
class AttemptError extends Error {}

const elapsed = (start: number) => performance.now() - start;

/** A host in a URL, unbracketed (`[::1]` is `::1`). */
const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** Node's words for a failed connection, in the log's. */
const describe = (error: unknown, timeoutMs: number): string => {
  if (error instanceof AttemptError) return error.message;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const name = (error as Error | undefined)?.name;
  if (
    name === 'AbortError' ||
    name === 'TimeoutError' ||
    code === 'ABORT_ERR'
  ) {
    return `Timed out: no complete answer within ${timeoutMs / 1000} s`;
  }
  switch (code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
      return 'Connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'The host name does not resolve';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'The host is unreachable';
    default:
      return error instanceof Error
        ? `${code ? `${code}: ` : ''}${error.message}`
        : String(error);
  }
};

/** The lookup of a connection: the checked addresses, and no other. */
const lookupOf =
  (addresses: readonly ResolvedAddress[]): LookupFunction =>
  (_hostname, options, callback) => {
    const [first] = addresses;
    if (!first) {
      callback(new AttemptError('No address to connect to'), '', 4);
      return;
    }
    if (options.all) {
      (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [
        ...addresses,
      ]);
      return;
    }
    callback(null, first.address, first.family);
  };

/** The WebhookSender port over node:http(s), guarded. */
export class GuardedWebhookSender implements WebhookSender {
  private readonly resolveHost: ResolveHost;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;

  constructor(private readonly options: GuardedWebhookSenderOptions) {
    this.resolveHost = options.resolveHost ?? systemResolveHost;
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  }

  async post(request: WebhookRequest): Promise<WebhookResponse> {
    const start = performance.now();
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const url = new URL(request.url);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw new AttemptError(`Refused: ${url.protocol} is not http(s)`);
      }
      const addresses = await this.checkedAddresses(url, signal);
      const answer = await this.send(url, request, addresses, signal);
      return { ...answer, latencyMs: elapsed(start) };
    } catch (error) {
      return {
        error: describe(error, this.timeoutMs),
        latencyMs: elapsed(start),
      };
    }
  }

  /**
   * Every address of the URL's host, each allowed by the rules; a refusal
   * names the address. A host written as an address is that address.
   */
  private async checkedAddresses(
    url: URL,
    signal: AbortSignal,
  ): Promise<ResolvedAddress[]> {
    const host = bareHost(url.hostname);
    const family = isIP(host);
    const literal = family !== 0;
    const addresses: ResolvedAddress[] = literal
      ? [{ address: host, family: family === 6 ? 6 : 4 }]
      : await new Promise<ResolvedAddress[]>((resolve, reject) => {
          // A lookup cannot be cancelled: the attempt stops waiting for it.
          const abort = () => reject(signal.reason);
          signal.addEventListener('abort', abort, { once: true });
          this.resolveHost(host).then(
            (found) => {
              signal.removeEventListener('abort', abort);
              resolve(found);
            },
            (error: unknown) => {
              signal.removeEventListener('abort', abort);
              reject(error);
            },
          );
        });
    if (addresses.length === 0) {
      throw new AttemptError('The host name does not resolve');
    }
    for (const { address } of addresses) {
      const refusal = addressRefusal(address, this.options.rules);
      if (refusal) {
        throw new AttemptError(
          literal
            ? `Refused: ${refusal}`
            : `Refused: ${url.hostname} resolves to ${address}, which ${refusal.replace(`${address} is`, 'is')}`,
        );
      }
    }
    return addresses;
  }

  /** The POST itself, connected to the checked addresses. */
  private send(
    url: URL,
    request: WebhookRequest,
    addresses: readonly ResolvedAddress[],
    signal: AbortSignal,
  ): Promise<Omit<WebhookResponse, 'latencyMs'>> {
    const body = Buffer.from(request.body, 'utf8');
    const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const outgoing = make(url, {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(body.length) },
        lookup: lookupOf(addresses),
        // A connection of its own: none pooled from another attempt.
        agent: false,
        signal,
      });
      outgoing.on('error', reject);
      outgoing.on('response', (response: IncomingMessage) => {
        this.readAnswer(response).then(resolve, reject);
      });
      outgoing.end(body);
    });
  }

  /** The status and the first bytes of the answer; the rest dropped. */
  private readAnswer(
    response: IncomingMessage,
  ): Promise<Omit<WebhookResponse, 'latencyMs'>> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const done = () => {
        response.removeAllListeners('data');
        const text = Buffer.concat(chunks)
          .subarray(0, this.maxResponseBytes)
          .toString('utf8');
        resolve({
          ...(response.statusCode !== undefined
            ? { statusCode: response.statusCode }
            : {}),
          ...(text ? { body: text } : {}),
        });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes >= this.maxResponseBytes) {
          // Enough for the log: the rest is never read.
          done();
          response.destroy();
        }
      });
      response.on('end', done);
      response.on('error', (error) => {
        if (bytes >= this.maxResponseBytes) return;
        reject(error);
      });
    });
  }
}
