/**
 * The stream consumers: one Lambda each, fed by the table's change stream
 * through a filtered event source mapping. The CDK stack (mapping, filter,
 * on-failure queue, alarms), the local stack (a stream poller each) and the
 * tests all read this registry, so a stream consumer is declared in exactly
 * one place.
 *
 * At most {@link MAX_STREAM_READERS} of them: each reads every shard of the
 * stream, and DynamoDB Streams throttles past two readers per shard. A new
 * reader of the table's changes joins one of these (as the tag index and
 * the audience facts share `contacts`), or reads an outbox instead.
 */
import type { Bindings, DepsOf } from '../shared/bindings.ts';
import type { StreamConsumerGroup } from '../shared/streams/consumer.ts';
import {
  contactChangesBindings,
  contactChangesConsumer,
} from './contact-changes/consumer.ts';
import { journeysBindings, journeysConsumer } from './journeys/consumer.ts';

/** Readers of one stream shard AWS serves without throttling. */
export const MAX_STREAM_READERS = 2;

/** One stream consumer and what its function may use. */
export interface StreamConsumerFunction<B extends Bindings = Bindings> {
  /** What the consumer does, for a reader of the stack. */
  description: string;
  /** What the function may use; its call is typed with the deps they give. */
  bindings: B;
  group: StreamConsumerGroup<DepsOf<B>>;
  /** The function's memory in MB (default 512; `<name>MemoryMB` context). */
  memoryMB?: number;
}

/** Declares a stream consumer function, checking its call against its bindings. */
export const streamConsumerFunction = <const B extends Bindings, T>(
  declaration: Omit<StreamConsumerFunction<B>, 'group'> & {
    group: StreamConsumerGroup<DepsOf<NoInfer<B>>, T>;
  },
): StreamConsumerFunction<B> => declaration;

/** Every stream consumer of the service. */
export const streamConsumerFunctions: readonly StreamConsumerFunction[] = [
  streamConsumerFunction({
    description:
      "Contact writes: the tag index gets an entry per tag gained and loses one per tag lost (a tag filter reads only the tag's contacts); the audience facts each write implies (a first join, a new tag; none for a bulk import) enrol contacts in sequences; the contact's activity; its webhook events.",
    bindings: contactChangesBindings,
    group: contactChangesConsumer,
  }),
  streamConsumerFunction({
    description:
      "Journeys in flight: a deleted sequence has its schedules cancelled and its journeys removed; a resumed one sends the steps that came due while it was paused. Also the webhook events of campaigns' statuses, journeys' starts and ends, and erasures.",
    bindings: journeysBindings,
    group: journeysConsumer,
  }),
];
