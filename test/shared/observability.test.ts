/**
 * Observability (shared/observability.ts): SDK clients are traced only when
 * tracing is on, subsegments open and close around a piece of work, and
 * metrics stay silent off Lambda unless asked.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  captureClient,
  currentTracer,
  startTracing,
  stopTracing,
  traced,
} from '../../shared/observability.ts';

type MetricsModule = typeof import('../../shared/metrics.ts');

/**
 * A fresh instance of the metrics module, built under the environment of
 * the test (Powertools reads its switches when `metrics` is built): a query
 * string makes it a module of its own, leaving the shared one alone.
 */
const freshMetrics = async (tag: string): Promise<MetricsModule> => {
  const module = new URL('../../shared/metrics.ts', import.meta.url);
  module.search = tag;
  return (await import(/* @vite-ignore */ module.href)) as MetricsModule;
};

/** Stands in for Lambda's segment and the subsegment it opens. */
const fakeSegment = () => {
  const subsegment = { close: vi.fn() };
  const segment = { addNewSubsegment: vi.fn(() => subsegment) };
  return { segment, subsegment };
};

/** Loads the tracer as on Lambda with SDK calls traced. */
const loadTracer = async (): Promise<Tracer> => {
  vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs22.x');
  vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'true');
  await startTracing();
  const tracer = currentTracer();
  if (!tracer) throw new Error('startTracing loaded no tracer');
  return tracer;
};

/** Turns the tracer on, with stand-ins for everything that reaches X-Ray. */
const traceOn = async () => {
  const tracer = await loadTracer();
  const { segment, subsegment } = fakeSegment();
  vi.spyOn(tracer, 'isTracingEnabled').mockReturnValue(true);
  vi.spyOn(tracer, 'getSegment').mockReturnValue(
    segment as unknown as ReturnType<typeof tracer.getSegment>,
  );
  const setSegment = vi
    .spyOn(tracer, 'setSegment')
    .mockImplementation(() => {});
  vi.spyOn(tracer, 'annotateColdStart').mockImplementation(() => {});
  vi.spyOn(tracer, 'addServiceNameAnnotation').mockImplementation(() => {});
  const annotate = vi
    .spyOn(tracer, 'putAnnotation')
    .mockImplementation(() => {});
  const markError = vi
    .spyOn(tracer, 'addErrorAsMetadata')
    .mockImplementation(() => {});
  return { segment, subsegment, setSegment, annotate, markError };
};

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  stopTracing();
});

describe('startTracing', () => {
  it('loads no tracer off Lambda (no AWS_EXECUTION_ENV), even when asked', async () => {
    // Arrange
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'true');
    // Act
    await startTracing();
    // Assert
    expect(currentTracer()).toBeUndefined();
  });

  it('loads no tracer on Lambda unless POWERTOOLS_TRACE_ENABLED is true (the stack sets it from traceAwsCalls)', async () => {
    // Arrange
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs22.x');
    for (const value of [undefined, 'false', '1']) {
      vi.stubEnv('POWERTOOLS_TRACE_ENABLED', value);
      // Act
      await startTracing();
      // Assert
      expect(currentTracer()).toBeUndefined();
    }
  });

  it('loads the Powertools tracer on Lambda with POWERTOOLS_TRACE_ENABLED=true, enabled', async () => {
    // Act
    const tracer = await loadTracer();
    // Assert
    expect(tracer.isTracingEnabled()).toBe(true);
  });
});

describe('captureClient', () => {
  it('returns the same client untouched when no tracer was loaded', () => {
    // Arrange
    const client = { middlewareStack: { add: vi.fn() } };
    // Act
    const captured = captureClient(client);
    // Assert
    expect(captured).toBe(client);
    expect(client.middlewareStack.add).not.toHaveBeenCalled();
  });

  it('has the tracer capture the client when tracing is on', async () => {
    // Arrange
    const tracer = await loadTracer();
    vi.spyOn(tracer, 'isTracingEnabled').mockReturnValue(true);
    const capture = vi
      .spyOn(tracer, 'captureAWSv3Client')
      .mockImplementation((client) => client);
    const client = { send: vi.fn() };
    // Act
    const captured = captureClient(client);
    // Assert
    expect(capture).toHaveBeenCalledWith(client);
    expect(captured).toBe(client);
  });
});

describe('traced', () => {
  it('only runs the work when no tracer was loaded', async () => {
    // Act
    const result = await traced('job', { consumer: 'things' }, async () => 7);
    // Assert
    expect(result).toBe(7);
  });

  it('only runs the work when the loaded tracer is disabled', async () => {
    // Arrange
    const tracer = await loadTracer();
    vi.spyOn(tracer, 'isTracingEnabled').mockReturnValue(false);
    const getSegment = vi.spyOn(tracer, 'getSegment');
    // Act
    const result = await traced('job', { consumer: 'things' }, async () => 7);
    // Assert
    expect(result).toBe(7);
    expect(getSegment).not.toHaveBeenCalled();
  });

  it('runs the work in an annotated subsegment, then closes it and restores the parent', async () => {
    // Arrange
    const { segment, subsegment, setSegment, annotate } = await traceOn();
    // Act
    const result = await traced('consumer things', { consumer: 'things' }, () =>
      Promise.resolve('done'),
    );
    // Assert
    expect(result).toBe('done');
    expect(segment.addNewSubsegment).toHaveBeenCalledWith('## consumer things');
    expect(setSegment.mock.calls).toEqual([[subsegment], [segment]]);
    expect(annotate).toHaveBeenCalledWith('consumer', 'things');
    expect(subsegment.close).toHaveBeenCalledOnce();
  });

  it('marks the subsegment with the error the work throws, and throws it on', async () => {
    // Arrange
    const { segment, subsegment, setSegment, markError } = await traceOn();
    const failure = new Error('down');
    // Act
    const run = traced('job', {}, () => Promise.reject(failure));
    // Assert
    await expect(run).rejects.toBe(failure);
    expect(markError).toHaveBeenCalledWith(failure);
    expect(subsegment.close).toHaveBeenCalledOnce();
    expect(setSegment).toHaveBeenLastCalledWith(segment);
  });
});

describe('metrics', () => {
  /** What the metrics print to standard output while `act` runs. */
  const printed = (act: () => void): string => {
    let out = '';
    const write = vi
      .spyOn(process.stdout, 'write')
      .mockImplementation((chunk: string | Uint8Array) => {
        out += String(chunk);
        return true;
      });
    try {
      act();
    } finally {
      write.mockRestore();
    }
    return out;
  };

  it('print nothing off Lambda when POWERTOOLS_METRICS_DISABLED is not set', async () => {
    // Arrange
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', undefined);
    vi.stubEnv('AWS_EXECUTION_ENV', undefined);
    const { metrics } = await freshMetrics('off-lambda');
    // Act
    const out = printed(() => {
      metrics.addMetric('processed', MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    });
    // Assert
    expect(out).toBe('');
  });

  it('print one EMF line in our namespace when POWERTOOLS_METRICS_DISABLED=false', async () => {
    // Arrange
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    const { metrics, METRICS_NAMESPACE } = await freshMetrics('asked-for');
    // Act
    const out = printed(() => {
      metrics.addDimension('consumer', 'things');
      metrics.addMetric('processed', MetricUnit.Count, 2);
      metrics.publishStoredMetrics();
    });
    // Assert
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: METRICS_NAMESPACE,
            Dimensions: [['service', 'consumer']],
          },
        ],
      },
      consumer: 'things',
      processed: 2,
    });
  });
});
