/**
 * The `journeys` stream consumer: each committed change of a sequence's
 * or series' head, read from the table's change stream, becomes what it
 * means for the journeys in flight. A sequence deleted: its journeys'
 * schedules are cancelled and the journeys removed (by a cleanup message
 * to the steps queue). A sequence active again: the steps that came due
 * while it was paused are sent (a resume message).
 *
 * It also finds the webhook events of the organization's other rarely
 * changing items, so that the table's stream keeps two readers per shard
 * (decision 0053): a campaign's status entered (`campaign.*`), a journey's
 * start and end (`sequence.*`), an erasure's record (`contact.erased`).
 */
import {
  type SequenceImage,
  sequenceImageOf,
} from '../../shared/adapters/aws/dynamo-sequence-repository.ts';
import {
  ORGANIZATION_IMAGE_TYPES,
  type OrganizationImage,
  organizationImageOf,
} from '../../shared/adapters/aws/stream-images.ts';
import {
  type DepsOf,
  queue,
  scheduler,
  table,
  webhookEvents,
} from '../../shared/bindings.ts';
import { ENTITY_TYPE } from '../../shared/db/items.ts';
import { headChanged } from '../../shared/sequences/head-changes.ts';
import { STEPS_QUEUE } from '../../shared/sequences/queue.ts';
import {
  type StreamChange,
  streamConsumer,
} from '../../shared/streams/consumer.ts';
import { emitInBatch } from '../../shared/webhooks/emit.ts';
import type { WebhookEvent } from '../../shared/webhooks/events.ts';
import {
  campaignEventsOf,
  erasureEventsOf,
  journeyEventsOf,
} from '../../shared/webhooks/organization-events.ts';

/**
 * What the `journeys` consumer may use: a series' published version
 * (reads), its steps' schedules, and the steps queue; the webhook events'
 * sink.
 */
export const journeysBindings = [
  table({
    stores: ['organizations', 'sequences'],
    actions: ['dynamodb:GetItem', 'dynamodb:Query'],
  }),
  scheduler(STEPS_QUEUE),
  queue(STEPS_QUEUE),
  webhookEvents,
] as const;

/** The deps of the `journeys` consumer. */
export type JourneysDeps = DepsOf<typeof journeysBindings>;

/** One item the consumer reads: a head, or an item with webhook events. */
export type JourneysImage =
  | ({ kind: 'sequence' } & SequenceImage)
  | OrganizationImage;

/** Reads a head, a campaign, a journey or an erasure. */
export const journeysImageOf = (
  item: Record<string, unknown>,
): JourneysImage =>
  item[ENTITY_TYPE] === 'Sequence'
    ? { kind: 'sequence', ...sequenceImageOf(item) }
    : organizationImageOf(item);

/** The webhook events of a change of an item other than a head. */
export const webhookEventsOf = ({
  before,
  after,
}: StreamChange<JourneysImage>): WebhookEvent[] => {
  const image = after ?? before;
  if (!image) return [];
  const { orgId } = image;
  switch (image.kind) {
    case 'campaign':
      return campaignEventsOf({
        orgId,
        ...(before?.kind === 'campaign' ? { before: before.campaign } : {}),
        ...(after?.kind === 'campaign' ? { after: after.campaign } : {}),
      });
    case 'enrolment':
      return journeyEventsOf({
        orgId,
        ...(before?.kind === 'enrolment' ? { before: before.enrolment } : {}),
        ...(after?.kind === 'enrolment' ? { after: after.enrolment } : {}),
      });
    case 'erasure':
      return erasureEventsOf({
        orgId,
        ...(before?.kind === 'erasure' ? { before: before.erasure } : {}),
        ...(after?.kind === 'erasure' ? { after: after.erasure } : {}),
      });
    default:
      return [];
  }
};

/** The `journeys` stream consumer. */
export const journeysConsumer = streamConsumer<JourneysDeps, JourneysImage>({
  name: 'journeys',
  entry: 'functions/journeys/lambda.ts',
  stream: {
    // Heads, campaigns and erasures change by hand, one at a time; a
    // journey a few times in its life: no reason to wait for company.
    batchSize: 10,
    retryAttempts: 10,
    bisectOnError: true,
  },
  filter: {
    eventNames: ['INSERT', 'MODIFY', 'REMOVE'],
    entityTypes: ['Sequence', ...ORGANIZATION_IMAGE_TYPES],
  },
  image: journeysImageOf,
  handle: async (deps, change) => {
    const { before, after } = change;
    const image = after ?? before;
    if (image?.kind === 'sequence') {
      await headChanged(
        deps,
        image.orgId,
        before?.kind === 'sequence' ? before.sequence : undefined,
        after?.kind === 'sequence' ? after.sequence : undefined,
      );
      return;
    }
    await emitInBatch(deps, webhookEventsOf(change), change.batch);
  },
});
