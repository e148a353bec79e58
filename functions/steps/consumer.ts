/**
 * The `steps` consumer: moves journeys. A step of a contact's journey
 * through a sequence falls due (its schedule fired): it is sent once, and
 * the next one scheduled; a resumed sequence sends the steps that came due
 * while it was paused; a deleted one has its journeys' schedules
 * cancelled and its journeys removed. A series step's schedule fired: the
 * step becomes its one campaign, sent the campaign way.
 */
import * as v from 'valibot';
import {
  addressKey,
  type DepsOf,
  endpoints,
  linkSecret,
  mail,
  PIPELINE_ACTIONS,
  queue,
  scheduler,
  sendingQuota,
  sendingStatus,
  table,
} from '../../shared/bindings.ts';
import { DISPATCH_QUEUE } from '../../shared/campaigns/send.ts';
import { consumer } from '../../shared/queue/consumer.ts';
import { STEPS_QUEUE } from '../../shared/sequences/queue.ts';
import {
  CleanupMessage,
  cleanupSequence,
  ResumeMessage,
  resumeSequence,
} from '../../shared/sequences/resume-and-cleanup.ts';
import { runStep } from '../../shared/sequences/run-step.ts';
import { SeriesStepMessage } from '../../shared/sequences/series-schedule.ts';
import { fireSeriesStep } from '../../shared/sequences/series-steps.ts';
import { StepMessage } from '../../shared/sequences/step-schedule.ts';

/** What the `steps` consumer may use. */
export const stepsBindings = [
  table({
    stores: [
      'organizations',
      'appSettings',
      'identities',
      'domains',
      'sequences',
      'enrolments',
      'lists',
      'contacts',
      'segments',
      'campaigns',
      'audience',
      'sendWindows',
      'topics',
      'sends',
      'pacer',
      'delivery',
      'tags',
      // What a step merges (and a series step's first render).
      'fields',
    ],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      // A deleted sequence's journeys, removed by the cleanup.
      'dynamodb:BatchWriteItem',
    ],
  }),
  // A series step's campaign and its send (the dispatcher walks it).
  endpoints,
  mail,
  // Per-contact unsubscribe and topic links.
  linkSecret,
  sendingStatus,
  sendingQuota,
  scheduler(STEPS_QUEUE),
  queue(STEPS_QUEUE),
  queue(DISPATCH_QUEUE),
  // Suppressions are keyed by address key.
  addressKey,
] as const;

/** The deps of the `steps` consumer. */
export type StepsConsumerDeps = DepsOf<typeof stepsBindings>;

/** Every message of the steps queue. */
export const JourneyMessage = v.variant('kind', [
  StepMessage,
  ResumeMessage,
  CleanupMessage,
  SeriesStepMessage,
]);

/** The `steps` consumer group. */
export const stepsConsumer = consumer<StepsConsumerDeps, typeof JourneyMessage>(
  {
    name: STEPS_QUEUE,
    entry: 'functions/steps/lambda.ts',
    queue: {
      // Six times the function's timeout: one step is one send.
      visibilityTimeoutSeconds: 300,
      batchSize: 10,
      maxConcurrency: 10,
      // A step held by a dead consumer waits out its claim (15 minutes).
      maxReceiveCount: 20,
    },
    message: JourneyMessage,
    handle: async (deps, message) => {
      switch (message.kind) {
        case 'step':
          return runStep(deps, message);
        case 'resume':
          return resumeSequence(deps, message);
        case 'cleanup':
          return cleanupSequence(deps, message);
        case 'seriesStep':
          await fireSeriesStep(deps, message);
          return;
      }
    },
  },
);
