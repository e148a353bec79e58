/**
 * The stream consumers: one Lambda each, fed by the table's change stream
 * through a filtered event source mapping. The CDK stack (mapping, filter,
 * on-failure queue, alarms), the local stack (a stream poller each) and the
 * tests all read this registry, so a stream consumer is declared in exactly
 * one place.
 */
import type { Bindings, DepsOf } from '../shared/bindings.ts';
import type { StreamConsumerGroup } from '../shared/streams/consumer.ts';
import { factsBindings, factsConsumer } from './facts/consumer.ts';
import { journeysBindings, journeysConsumer } from './journeys/consumer.ts';
import { tagIndexBindings, tagIndexConsumer } from './tag-index/consumer.ts';

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
): StreamConsumerFunction => declaration as unknown as StreamConsumerFunction;

/** Every stream consumer of the service. */
export const streamConsumerFunctions: readonly StreamConsumerFunction[] = [
  streamConsumerFunction({
    description:
      'Audience facts: each committed contact write becomes the events it implies (a first join, a new tag), none for a bulk import.',
    bindings: factsBindings,
    group: factsConsumer,
  }),
  streamConsumerFunction({
    description:
      "The tag index: each committed contact write adds an entry per tag gained and removes one per tag lost, so a tag filter reads only the tag's contacts.",
    bindings: tagIndexBindings,
    group: tagIndexConsumer,
  }),
  streamConsumerFunction({
    description:
      'Journeys in flight: a deleted sequence has its schedules cancelled and its journeys removed; a resumed one sends the steps that came due while it was paused.',
    bindings: journeysBindings,
    group: journeysConsumer,
  }),
];
