/**
 * Observability with Powertools, one instance of each per container:
 * structured logs (JSON lines with the service name, the request id and, on
 * errors, the cause), X-Ray traces of every SDK call when the operator asks
 * for them, and CloudWatch metrics in the embedded metric format (EMF: log
 * lines CloudWatch turns into metrics, no API call on the hot path).
 *
 * Traces and metrics exist only on Lambda. Off Lambda (the local stack,
 * tests, scripts) no X-Ray daemon listens and nothing turns EMF lines into
 * metrics, so the tracer is never loaded (no `AWS_EXECUTION_ENV`) and
 * metrics are off unless `POWERTOOLS_METRICS_DISABLED` says otherwise.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Tracer } from '@aws-lambda-powertools/tracer';

/** The service dimension of logs, traces and metrics alike. */
export const serviceName =
  process.env.POWERTOOLS_SERVICE_NAME || 'email-marketing';

/** The one logger of a container. */
export const logger = new Logger({ serviceName });

/**
 * The one tracer of a container, when SDK calls are traced: it records a
 * subsegment per captured SDK call (see {@link captureClient}) and per
 * outgoing HTTPS request. Lambda's active tracing records the function's
 * own segments (init, invocation) without it.
 */
let tracer: Tracer | undefined;

/**
 * Loads the tracer (the Powertools Tracer and the X-Ray SDK under it,
 * about 115 KB of code at a cold start) when SDK calls are to be traced:
 * on Lambda, with `POWERTOOLS_TRACE_ENABLED=true` (the stack sets it from
 * the `traceAwsCalls` context; absent, nothing is loaded). Call it before
 * making the clients.
 */
export const startTracing = async (): Promise<void> => {
  if (tracer) return;
  if (!process.env.AWS_EXECUTION_ENV) return;
  if (process.env.POWERTOOLS_TRACE_ENABLED !== 'true') return;
  const { Tracer } = await import('@aws-lambda-powertools/tracer');
  tracer = new Tracer({ serviceName });
};

/** The tracer, once {@link startTracing} has loaded it. */
export const currentTracer = (): Tracer | undefined => tracer;

/** Forgets the tracer (tests: each starts from a container without one). */
export const stopTracing = (): void => {
  tracer = undefined;
};

/**
 * Makes the tracer record every call of an AWS SDK v3 client as an X-Ray
 * subsegment (service, operation, status, retries), and returns the same
 * client. Off Lambda it returns the client untouched, so nothing ever tries
 * to reach a daemon. Capture the low-level client before wrapping it (the
 * DynamoDB document client shares its middleware stack).
 */
export const captureClient = <T>(client: T): T =>
  tracer?.isTracingEnabled() ? tracer.captureAWSv3Client(client) : client;

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
  const parent = tracer?.isTracingEnabled() ? tracer.getSegment() : undefined;
  if (!tracer || !parent) return work();
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
