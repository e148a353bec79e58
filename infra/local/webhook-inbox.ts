/**
 * The local webhook inbox, beside the mailbox: a URL to register as an
 * endpoint (`http://127.0.0.1:<port>/inbox/<any-name>`) that takes every
 * delivery, and a page (`/`) and JSON (`/deliveries`) of what arrived —
 * headers, body, and whether the signature verified against the secrets
 * of the endpoints registered with that URL. An inbox can be told to fail
 * or to be slow, to watch retries and the circuit: `?status=503` or
 * `?delayMs=4000` in the registered URL, or at run time
 * `PUT /inboxes/<name>` with `{"status": 503, "delayMs": 4000}` (and
 * `DELETE /inboxes/<name>` to make it answer 200 at once again). Loopback
 * only, in memory (the last 1,000 deliveries).
 */
import { timingSafeEqual } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { signatureOf } from '../../shared/webhooks/signing.ts';

/** How an inbox answers. */
export interface InboxBehaviour {
  /** The status it answers (default 200). */
  status?: number;
  /** How long it waits before answering (default none). */
  delayMs?: number;
}

/** One delivery the inbox took. */
export interface InboxDelivery {
  /** 1 for the first since the start. */
  seq: number;
  inbox: string;
  receivedAt: string;
  /** The path and query it was posted to. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the inbox answered. */
  answered: { status: number; delayMs: number };
  /**
   * Whether a `v1` signature of `webhook-signature` is one of a secret of
   * the endpoints registered with this URL; null when no endpoint has it.
   */
  verified: boolean | null;
}

/** The signing secrets of the endpoints registered with a path (and port). */
export type SecretsFor = (path: string, port: number) => Promise<string[]>;

/** A running inbox. */
export interface WebhookInbox {
  /** `http://127.0.0.1:<port>`: the page; inboxes are below `/inbox/`. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Deliveries kept at most (the oldest forgotten first). */
const KEPT = 1_000;

/** Bytes of a body kept at most (deliveries are at most 256 KB). */
const MAX_BODY_BYTES = 256 * 1024;

/** A status an inbox may be told to answer: 200-599. */
const validStatus = (status: unknown): number | undefined => {
  const n = Number(status);
  return Number.isInteger(n) && n >= 200 && n <= 599 ? n : undefined;
};

/** A delay an inbox may wait: up to a minute. */
const validDelay = (delay: unknown): number | undefined => {
  const n = Number(delay);
  return Number.isFinite(n) && n >= 0 && n <= 60_000 ? n : undefined;
};

/** Whether one of the header's `v1` signatures is a secret's. */
const verifies = (
  secrets: readonly string[],
  headers: IncomingHttpHeaders,
  body: string,
): boolean => {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = Number(headers['webhook-timestamp']);
  const sent = String(headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((signature) => signature.startsWith('v1,'));
  if (!id || !Number.isInteger(timestamp)) return false;
  return secrets.some((secret) => {
    const expected = Buffer.from(signatureOf(secret, id, timestamp, body));
    return sent.some((signature) => {
      const given = Buffer.from(signature);
      return (
        given.length === expected.length && timingSafeEqual(given, expected)
      );
    });
  });
};

const html = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[
        c
      ] ?? c,
  );

const pretty = (body: string) => {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
};

/** The page: every delivery, newest first. */
const page = (
  base: string,
  deliveries: readonly InboxDelivery[],
  behaviours: ReadonlyMap<string, InboxBehaviour>,
) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Webhook inbox</title>
<meta http-equiv="refresh" content="5">
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}pre{background:#f4f4f4;padding:.6em;overflow:auto}
.ok{color:#070}.bad{color:#b00}.unknown{color:#777}details{margin:.4em 0 1.2em}</style></head>
<body><h1>Webhook inbox</h1>
<p>Register <code>${html(base)}/inbox/&lt;any-name&gt;</code> as an endpoint (<code>POST /api/v1/webhooks</code>).
Add <code>?status=503</code> or <code>?delayMs=4000</code> to it, or <code>PUT ${html(base)}/inboxes/&lt;name&gt;</code> with
<code>{"status": 503, "delayMs": 4000}</code>, to watch retries. JSON: <a href="/deliveries">/deliveries</a>. This page refreshes every 5 seconds.</p>
${
  behaviours.size
    ? `<p>Told: ${[...behaviours]
        .map(
          ([name, b]) =>
            `<code>${html(name)}</code> answers ${b.status ?? 200}${b.delayMs ? ` after ${b.delayMs} ms` : ''}`,
        )
        .join('; ')}</p>`
    : ''
}
<h2>${deliveries.length} deliveries, newest first</h2>
${deliveries
  .map((d) => {
    const mark =
      d.verified === true
        ? '<span class="ok">signature verified</span>'
        : d.verified === false
          ? '<span class="bad">signature NOT verified</span>'
          : '<span class="unknown">no endpoint registered with this URL</span>';
    let type = '';
    try {
      type = String((JSON.parse(d.body) as { type?: unknown }).type ?? '');
    } catch {}
    return `<details open><summary><b>#${d.seq}</b> ${html(d.receivedAt)} · inbox <code>${html(d.inbox)}</code> · <code>${html(type)}</code> · ${html(String(d.headers['webhook-id'] ?? ''))} · ${mark} · answered ${d.answered.status}</summary>
<pre>${html(
      Object.entries(d.headers)
        .map(([name, value]) => `${name}: ${value}`)
        .join('\n'),
    )}</pre><pre>${html(pretty(d.body))}</pre></details>`;
  })
  .join('\n')}
</body></html>`;

const sendJson = (response: ServerResponse, status: number, body: unknown) =>
  response
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    .end(JSON.stringify(body, null, 2));

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

/**
 * Starts the inbox on loopback. `port` 0 picks a free one; `secretsFor`
 * finds the secrets of the endpoints registered with a URL.
 */
export const startWebhookInbox = async (options: {
  port: number;
  secretsFor: SecretsFor;
}): Promise<WebhookInbox> => {
  const deliveries: InboxDelivery[] = [];
  const behaviours = new Map<string, InboxBehaviour>();
  let seq = 0;
  let port = options.port;

  /** Verifies the deliveries not verified yet (a secret may come later). */
  const verifyPending = async () => {
    const byPath = new Map<string, string[]>();
    for (const delivery of deliveries) {
      if (delivery.verified === true) continue;
      let secrets = byPath.get(delivery.path);
      if (!secrets) {
        secrets = await options.secretsFor(delivery.path, port);
        byPath.set(delivery.path, secrets);
      }
      delivery.verified = secrets.length
        ? verifies(secrets, delivery.headers, delivery.body)
        : null;
    }
  };

  const receive = async (
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    inbox: string,
  ) => {
    const body = await readBody(request);
    const told = behaviours.get(inbox) ?? {};
    const status =
      told.status ?? validStatus(url.searchParams.get('status')) ?? 200;
    const delayMs =
      told.delayMs ?? validDelay(url.searchParams.get('delayMs')) ?? 0;
    seq++;
    deliveries.unshift({
      seq,
      inbox,
      receivedAt: new Date().toISOString(),
      path: `${url.pathname}${url.search}`,
      headers: request.headers,
      body,
      answered: { status, delayMs },
      verified: null,
    });
    deliveries.splice(KEPT);
    setTimeout(() => {
      if (!response.destroyed) sendJson(response, status, { received: seq });
    }, delayMs);
  };

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const inbox = /^\/inbox\/([^/]+)$/.exec(url.pathname)?.[1];
    const named = /^\/inboxes\/([^/]+)$/.exec(url.pathname)?.[1];
    const handle = async () => {
      if (inbox && request.method === 'POST') {
        return receive(request, response, url, decodeURIComponent(inbox));
      }
      if (named && request.method === 'PUT') {
        const told = JSON.parse((await readBody(request)) || '{}') as Record<
          string,
          unknown
        >;
        const status = validStatus(told.status);
        const delayMs = validDelay(told.delayMs);
        const name = decodeURIComponent(named);
        behaviours.set(name, {
          ...(status ? { status } : {}),
          ...(delayMs !== undefined ? { delayMs } : {}),
        });
        return sendJson(response, 200, {
          inbox: name,
          ...behaviours.get(name),
        });
      }
      if (named && request.method === 'DELETE') {
        behaviours.delete(decodeURIComponent(named));
        return sendJson(response, 200, { inbox: decodeURIComponent(named) });
      }
      if (url.pathname === '/inboxes' && request.method === 'GET') {
        return sendJson(response, 200, Object.fromEntries(behaviours));
      }
      if (url.pathname === '/deliveries' && request.method === 'GET') {
        await verifyPending();
        const only = url.searchParams.get('inbox');
        return sendJson(
          response,
          200,
          only ? deliveries.filter((d) => d.inbox === only) : deliveries,
        );
      }
      if (url.pathname === '/deliveries' && request.method === 'DELETE') {
        deliveries.length = 0;
        return sendJson(response, 200, { cleared: true });
      }
      if (url.pathname === '/' && request.method === 'GET') {
        await verifyPending();
        return response
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(page(`http://127.0.0.1:${port}`, deliveries, behaviours));
      }
      return sendJson(response, 404, {
        error:
          'POST /inbox/<name>, GET /, GET /deliveries, PUT /inboxes/<name>',
      });
    };
    handle().catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, { error: String(error) });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', resolve);
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/**
 * The secrets of the endpoints registered with an inbox's path, read from
 * the local table: every endpoint item (a scan: the local table is small,
 * and this runs only when the page or the JSON is read), those whose URL
 * has this port and path, each secret that still signs.
 */
export const tableSecrets =
  (client: DynamoDBDocumentClient, tableName: string): SecretsFor =>
  async (path, port) => {
    const secrets: string[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: '#type = :type',
          ExpressionAttributeNames: { '#type': '_type' },
          ExpressionAttributeValues: { ':type': 'WebhookEndpoint' },
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        let url: URL;
        try {
          url = new URL(String(item.url));
        } catch {
          continue;
        }
        if (
          Number(url.port) !== port ||
          `${url.pathname}${url.search}` !== path
        ) {
          continue;
        }
        for (const secret of (item.secrets ?? []) as { value: string }[]) {
          secrets.push(secret.value);
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return secrets;
  };
