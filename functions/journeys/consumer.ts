/**
 * The `journeys` stream consumer: each committed change of a sequence's
 * or series' head, read from the table's change stream, becomes what it
 * means for the journeys in flight. A sequence deleted: its journeys'
 * schedules are cancelled and the journeys removed (by a cleanup message
 * to the steps queue). A sequence active again: the steps that came due
 * while it was paused are sent (a resume message).
 */
import {
  type SequenceImage,
  sequenceImageOf,
} from '../../shared/adapters/aws/dynamo-sequence-repository.ts';
import { type DepsOf, queue, scheduler, table } from '../../shared/bindings.ts';
import { headChanged } from '../../shared/sequences/head-changes.ts';
import { STEPS_QUEUE } from '../../shared/sequences/queue.ts';
import { streamConsumer } from '../../shared/streams/consumer.ts';

/**
 * What the `journeys` consumer may use: a series' published version
 * (reads), its steps' schedules, and the steps queue.
 */
export const journeysBindings = [
  table({
    stores: ['organizations', 'sequences'],
    actions: ['dynamodb:GetItem', 'dynamodb:Query'],
  }),
  scheduler(STEPS_QUEUE),
  queue(STEPS_QUEUE),
] as const;

/** The deps of the `journeys` consumer. */
export type JourneysDeps = DepsOf<typeof journeysBindings>;

/** The `journeys` stream consumer. */
export const journeysConsumer = streamConsumer<JourneysDeps, SequenceImage>({
  name: 'journeys',
  entry: 'functions/journeys/lambda.ts',
  stream: {
    // Heads change by hand, one at a time: no reason to wait for company.
    batchSize: 10,
    retryAttempts: 10,
    bisectOnError: true,
  },
  filter: {
    eventNames: ['INSERT', 'MODIFY', 'REMOVE'],
    entityTypes: ['Sequence'],
  },
  image: sequenceImageOf,
  handle: async (deps, { before, after }) => {
    const orgId = (after ?? before)?.orgId;
    if (!orgId) return;
    await headChanged(deps, orgId, before?.sequence, after?.sequence);
  },
});
