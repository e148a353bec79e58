/**
 * Application logic: hands events found in committed facts to the sink,
 * keeping only the types some enabled endpoint of their organization
 * takes (the sink remembers that per organization for a few seconds).
 */
import type { BatchScope } from '../batch-scope.ts';
import type { WebhookEvent } from './events.ts';
import type { WebhookEmitDeps } from './ports.ts';

/**
 * Publishes the events someone takes, of any organizations, in one call;
 * returns them. Nothing is sent when none is wanted. `keep`, when given,
 * narrows the events taken before they are published (a check that reads,
 * made only for events someone takes).
 */
export const emitEvents = async (
  deps: WebhookEmitDeps,
  events: readonly WebhookEvent[],
  keep?: (taken: WebhookEvent[]) => Promise<WebhookEvent[]>,
): Promise<WebhookEvent[]> => {
  if (events.length === 0) return [];
  const orgIds = [...new Set(events.map((event) => event.orgId))];
  const wanted = new Map(
    await Promise.all(
      orgIds.map(
        async (orgId) =>
          [orgId, await deps.webhookEvents.wanted(orgId)] as const,
      ),
    ),
  );
  const wantedEvents = events.filter((event) =>
    wanted.get(event.orgId)?.has(event.type),
  );
  const taken =
    keep && wantedEvents.length > 0 ? await keep(wantedEvents) : wantedEvents;
  if (taken.length > 0) await deps.webhookEvents.publish(taken);
  return taken;
};

/**
 * Emits a record's events with those of the other records of its batch,
 * in one publish once every record was handled (a batch of 100 contact
 * writes: one call, ten messages to a request); at once when the record
 * came alone. A failed publish retries every record that gave events.
 * `keep`: as for {@link emitEvents} (the same for every record of a batch).
 */
export const emitInBatch = async (
  deps: WebhookEmitDeps,
  events: readonly WebhookEvent[],
  batch: BatchScope | undefined,
  keep?: (taken: WebhookEvent[]) => Promise<WebhookEvent[]>,
): Promise<void> => {
  if (events.length === 0) return;
  if (!batch) {
    await emitEvents(deps, events, keep);
    return;
  }
  batch
    .share(
      'webhookEvents',
      (): WebhookEvent[] => [],
      async (all) => {
        await emitEvents(deps, all, keep);
      },
    )
    .push(...events);
};
