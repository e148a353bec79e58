/**
 * CloudWatch metrics with Powertools, in the embedded metric format (EMF:
 * log lines CloudWatch turns into metrics, no API call on the hot path).
 * Only the consumers publish metrics, so only they load this module.
 *
 * Off Lambda (the local stack, tests, scripts) nothing turns EMF lines into
 * metrics, so they are off unless `POWERTOOLS_METRICS_DISABLED` says
 * otherwise.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logger, serviceName } from './observability.ts';

/**
 * The CloudWatch namespace of our metrics: alarms and dashboards name it.
 */
export const METRICS_NAMESPACE = 'EmailMarketing';

// Lambda sets AWS_EXECUTION_ENV on every managed runtime. Powertools would
// publish metrics everywhere unless told, and its switch is read once, when
// `metrics` is built below: an explicit POWERTOOLS_METRICS_DISABLED (say
// `false`, to see the EMF lines on the local stack) wins over this default.
if (!process.env.AWS_EXECUTION_ENV) {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

/**
 * The one metrics buffer of a container. Add a dimension and metrics, then
 * publish, without an `await` in between: consumers of the local poller
 * share this process, and a buffer filled across an `await` could mix
 * their dimensions.
 */
export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName,
  // Powertools' own warnings go through our logger, silenced in tests.
  logger,
});
