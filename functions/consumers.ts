/**
 * The consumer groups: one Lambda each, fed by its own SQS queue. The CDK
 * stack (queue, DLQ, trigger, alarms, grants), the local stack (queues and
 * pollers) and the tests all read this registry, so a consumer is declared
 * in exactly one place.
 */
import type { Bindings, DepsOf } from '../shared/bindings.ts';
import type { ConsumerGroup } from '../shared/queue/consumer.ts';
import { dispatchBindings, dispatchConsumer } from './dispatcher/consumer.ts';
import {
  eventsBindings,
  eventsConsumer,
  sesEvents,
} from './events/consumer.ts';
import { sendBindings, sendConsumer } from './sender/consumer.ts';
import { stepsBindings, stepsConsumer } from './steps/consumer.ts';
import {
  webhookDeliveriesBindings,
  webhookDeliveriesConsumer,
} from './webhook-deliveries/consumer.ts';
import {
  webhookFanoutBindings,
  webhookFanoutConsumer,
} from './webhook-fanout/consumer.ts';
import {
  webhookSlowDeliveriesBindings,
  webhookSlowDeliveriesConsumer,
} from './webhook-slow-deliveries/consumer.ts';

/** Events of an EventBridge bus this group's queue receives. */
export interface EventSubscription {
  /** The rule's `source` (e.g. `aws.ses`). */
  source: readonly string[];
  /** The rule's `detail-type`s. */
  detailTypes: readonly string[];
}

/** One consumer group and what its function may use. */
export interface ConsumerFunction<B extends Bindings = Bindings> {
  /** What the group does, for a reader of the stack. */
  description: string;
  /**
   * What the function may use; its message handler is typed with the deps
   * those bindings give, like an endpoint group's routes.
   */
  bindings: B;
  group: ConsumerGroup<DepsOf<B>>;
  /**
   * Events a rule sends to the queue, each message being the event's
   * `detail` (SES's event publishing, for the events consumer).
   */
  events?: EventSubscription;
  /**
   * The function's memory in MB (default 512); the operator may change it
   * with the `<group>MemoryMB` context (`-c sendMemoryMB=512`).
   */
  memoryMB?: number;
}

/** Declares a consumer function, checking its handler against its bindings. */
export const consumerFunction = <const B extends Bindings>(
  declaration: Omit<ConsumerFunction<B>, 'group'> & {
    group: ConsumerGroup<DepsOf<NoInfer<B>>>;
  },
): ConsumerFunction<B> => declaration;

/** Every consumer group of the service. */
export const consumerFunctions: readonly ConsumerFunction[] = [
  consumerFunction({
    description:
      "SES's email events: recorded once each; a permanent bounce or a complaint suppresses the address for the organization at once.",
    bindings: eventsBindings,
    group: eventsConsumer,
    events: sesEvents,
  }),
  consumerFunction({
    description:
      'Campaign sends: starts them (now, or when a schedule fires), walks the audience by cursor and hands out batches, a few at a time per send.',
    bindings: dispatchBindings,
    group: dispatchConsumer,
  }),
  consumerFunction({
    description:
      'Campaign batches: each recipient claimed before SES is called, every send paced to the account rate, the batch counted once.',
    bindings: sendBindings,
    group: sendConsumer,
    // A sender lives as long as its batch takes at the account's rate, so
    // its memory is most of what a mail costs in Lambda (a tenth of a cent
    // per 1,000 mails at 25/s). Composing a mail takes about a millisecond
    // of a whole vCPU: 256 MB (a seventh of one) keeps a sender near 100
    // mails a second, and two of a send overlap when it falls behind. Raise
    // it for accounts sending above about 150 a second (README, deploy).
    memoryMB: 256,
  }),
  consumerFunction({
    description:
      "Journeys: each step of a contact's sequence sent once when it falls due, the next one scheduled; resumes and clean-ups after a delete.",
    bindings: stepsBindings,
    group: stepsConsumer,
  }),
  consumerFunction({
    description:
      'Webhook events: each becomes one delivery per enabled endpoint of its organization that takes its type, the first attempt queued.',
    bindings: webhookFanoutBindings,
    group: webhookFanoutConsumer,
  }),
  consumerFunction({
    description:
      'Webhook attempts: each a signed POST with its own 5 s, a batch at once; failures retried with back-off for 77 hours, a failing endpoint probed by one delivery while the others wait; a slow endpoint’s attempts passed on to the slow lane.',
    bindings: webhookDeliveriesBindings,
    group: webhookDeliveriesConsumer,
  }),
  consumerFunction({
    description:
      'The slow lane of webhook attempts: those to endpoints that take a second or more, one per batch, so that none holds another delivery.',
    bindings: webhookSlowDeliveriesBindings,
    group: webhookSlowDeliveriesConsumer,
  }),
];
