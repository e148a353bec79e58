/**
 * Observability with Powertools, one instance of each per container:
 * structured logs (JSON lines with the service name, the request id and, on
 * errors, the cause), X-Ray traces of every SDK call, and CloudWatch
 * metrics in the embedded metric format (EMF: log lines CloudWatch turns
 * into metrics, no API call on the hot path).
 *
 * Traces and metrics exist only on Lambda. Off Lambda (the local stack,
 * tests, scripts) no X-Ray daemon listens and nothing turns EMF lines into
 * metrics, so the tracer is off (Powertools' own rule: no
 * `AWS_EXECUTION_ENV`, or `POWERTOOLS_TRACE_ENABLED=false`) and metrics are
 * off unless `POWERTOOLS_METRICS_DISABLED` says otherwise.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

/** The service dimension of logs, traces and metrics alike. */
const serviceName = process.env.POWERTOOLS_SERVICE_NAME || 'email-marketing';

/**
 * The CloudWatch namespace of our metrics: alarms and dashboards name it.
 */
export const METRICS_NAMESPACE = 'EmailMarketing';

// Lambda sets AWS_EXECUTION_ENV on every managed runtime; the tracer goes
// by it too. Powertools would publish metrics everywhere unless told, and
// its switch is read once, when `metrics` is built below: an explicit
// POWERTOOLS_METRICS_DISABLED (say `false`, to see the EMF lines on the
// local stack) wins over this default.
if (!process.env.AWS_EXECUTION_ENV) {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

/** The one logger of a container. */
export const logger = new Logger({ serviceName });

/**
 * The one tracer of a container: on Lambda with active tracing it records
 * a subsegment per captured SDK call (see {@link captureClient}) and per
 * outgoing HTTPS request; elsewhere every method is a no-op.
 */
export const tracer = new Tracer({ serviceName });

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

/**
 * Makes the tracer record every call of an AWS SDK v3 client as an X-Ray
 * subsegment (service, operation, status, retries), and returns the same
 * client. Off Lambda it returns the client untouched, so nothing ever tries
 * to reach a daemon. Capture the low-level client before wrapping it (the
 * DynamoDB document client shares its middleware stack).
 */
export const captureClient = <T>(client: T): T =>
  tracer.isTracingEnabled() ? tracer.captureAWSv3Client(client) : client;

/**
 * Runs `work` in its own X-Ray subsegment, `## <name>`, annotated (cold
 * start, service and `annotations`: searchable in X-Ray) and marked with
 * the error it throws, if any. Lambda's own segment cannot take
 * annotations, hence the subsegment. Without tracing it just runs `work`.
 */
export const traced = async <T>(
  name: string,
  annotations: Record<string, string>,
  work: () => Promise<T>,
): Promise<T> => {
  const parent = tracer.isTracingEnabled() ? tracer.getSegment() : undefined;
  if (!parent) return work();
  const subsegment = parent.addNewSubsegment(`## ${name}`);
  tracer.setSegment(subsegment);
  try {
    tracer.annotateColdStart();
    tracer.addServiceNameAnnotation();
    for (const [key, value] of Object.entries(annotations)) {
      tracer.putAnnotation(key, value);
    }
    return await work();
  } catch (error) {
    if (error instanceof Error) tracer.addErrorAsMetadata(error);
    throw error;
  } finally {
    subsegment.close();
    tracer.setSegment(parent);
  }
};
