/**
 * The price table of the benchmarks that put a cost on what they measured
 * (`bench:campaign`, `bench:webhooks`), and each function's memory as the
 * stack gives it, for Lambda's GB-seconds.
 */
import { consumerFunctions } from '../../functions/consumers.ts';
import { streamConsumerFunctions } from '../../functions/stream-consumers.ts';
import { DEFAULT_MEMORY_MB } from '../../infra/constructs/app-function.ts';

/**
 * Prices (us-east-1, on demand, as listed in November 2026): what a send
 * costs is compared with what SES charges for it.
 */
export const PRICE = {
  sesPer1000: 0.1,
  dynamoPerWriteUnit: 0.625 / 1e6,
  dynamoPerReadUnit: 0.125 / 1e6,
  sqsPerRequest: 0.4 / 1e6,
  lambdaPerInvocation: 0.2 / 1e6,
  /** arm64, per GB-second. */
  lambdaPerGbSecond: 0.0000133334,
  /** EventBridge Scheduler, per schedule fired (creating one is free). */
  schedulerPerInvocation: 1 / 1e6,
};

/**
 * A consumer's (or stream consumer's) memory in GB, as the stack gives it
 * (no context set).
 */
export const memoryGbOf = (group: string): number =>
  ([...consumerFunctions, ...streamConsumerFunctions].find(
    (c) => c.group.name === group,
  )?.memoryMB ?? DEFAULT_MEMORY_MB) / 1024;
