/**
 * Test support for webhook delivery: a queue and a scheduler that record
 * what is sent to them (with when it falls due, by the test's clock), a
 * receiver on loopback whose inboxes answer as told (a status, a delay),
 * and a runner that hands the due messages to the deliveries consumer's
 * service, as its queue would.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as v from 'valibot';
import type {
  Clock,
  QueueMessage,
  QueueSender,
  SendOptions,
} from '../../shared/ports.ts';
import type {
  ScheduledMessage,
  Scheduler,
} from '../../shared/scheduling/ports.ts';
import { handleDeliveryMessage } from '../../shared/webhooks/attempts.ts';
import type { AttemptDeps } from '../../shared/webhooks/delivery-ports.ts';
import {
  type DeliveryMessage,
  DeliveryMessage as DeliveryMessageSchema,
} from '../../shared/webhooks/queues.ts';

/** A message as a recording queue keeps it. */
export interface Queued {
  message: unknown;
  options?: SendOptions;
  /** When it may be received, by the test's clock. */
  dueAt: number;
}

/** A QueueSender that keeps what it is sent, batches included. */
export const recordingQueue = (clock: Clock) => {
  const queued: Queued[] = [];
  const keep = (message: unknown, options?: SendOptions) => {
    queued.push({
      // As SQS carries it: JSON.
      message: JSON.parse(JSON.stringify(message)),
      ...(options ? { options } : {}),
      dueAt: clock.now().getTime() + (options?.delaySeconds ?? 0) * 1000,
    });
  };
  const queue: QueueSender & { queued: Queued[]; batches: number } = {
    queued,
    batches: 0,
    send: async (message, options) => keep(message, options),
    sendBatch: async (messages: readonly QueueMessage[]) => {
      if (messages.length > 10) throw new Error('more than 10 in a batch');
      queue.batches++;
      for (const { message, options } of messages) keep(message, options);
    },
  };
  return queue;
};

/** A Scheduler that keeps its schedules (the same name replaces). */
export const recordingScheduler = () => {
  const schedules = new Map<string, ScheduledMessage>();
  const scheduler: Scheduler & { schedules: Map<string, ScheduledMessage> } = {
    schedules,
    schedule: async (s) => {
      schedules.set(
        s.name,
        JSON.parse(JSON.stringify(s), (key, value) =>
          key === 'at' ? new Date(value) : value,
        ),
      );
    },
    cancel: async (name) => {
      schedules.delete(name);
    },
  };
  return scheduler;
};

/**
 * Hands every message due by the clock — queued or scheduled — to the
 * deliveries consumer's service, a batch at a time (all of a batch at
 * once, as the consumer does), until none is due. Returns how many ran.
 */
export const runDueDeliveries = async (
  deps: AttemptDeps,
  queue: ReturnType<typeof recordingQueue>,
  scheduler: ReturnType<typeof recordingScheduler>,
  options: { batchSize?: number } = {},
): Promise<number> => {
  let ran = 0;
  for (let round = 0; round < 1000; round++) {
    const now = deps.clock.now().getTime();
    for (const [name, s] of scheduler.schedules) {
      if (s.at.getTime() <= now) {
        scheduler.schedules.delete(name);
        queue.queued.push({ message: s.message, dueAt: now });
      }
    }
    const due = queue.queued.filter((entry) => entry.dueAt <= now);
    if (due.length === 0) return ran;
    const batch = due.slice(0, options.batchSize ?? 10);
    for (const entry of batch)
      queue.queued.splice(queue.queued.indexOf(entry), 1);
    await Promise.all(
      batch.map((entry) =>
        handleDeliveryMessage(
          deps,
          v.parse(DeliveryMessageSchema, entry.message) as DeliveryMessage,
        ),
      ),
    );
    ran += batch.length;
  }
  throw new Error('Deliveries kept coming: a loop?');
};

/** One request an inbox received. */
export interface Received {
  inbox: string;
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How an inbox answers. */
export interface InboxBehaviour {
  status?: number;
  delayMs?: number;
}

/**
 * A receiver on loopback: `POST /<inbox>` is recorded and answered as its
 * behaviour says (default 200 at once).
 */
export const startReceiver = async () => {
  const received: Received[] = [];
  const behaviours = new Map<string, InboxBehaviour>();
  const server: Server = createServer((request, response) => {
    const inbox = (request.url ?? '/').slice(1).split('?')[0] ?? '';
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        inbox,
        at: Date.now(),
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const { status = 200, delayMs = 0 } = behaviours.get(inbox) ?? {};
      setTimeout(() => {
        if (!response.destroyed) response.writeHead(status).end('{"ok":true}');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    received,
    /** The URL of an inbox. */
    url: (inbox: string) => `http://127.0.0.1:${port}/${inbox}`,
    behave: (inbox: string, behaviour: InboxBehaviour) =>
      behaviours.set(inbox, behaviour),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};
