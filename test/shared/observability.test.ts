/**
 * Observability (shared/observability.ts): SDK clients are traced only when
 * tracing is on, subsegments open and close around a piece of work, and
 * metrics stay silent off Lambda unless asked.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  captureClient,
  METRICS_NAMESPACE,
  traced,
  tracer,
} from '../../shared/observability.ts';

type Observability = typeof import('../../shared/observability.ts');

/**
 * A fresh instance of the module, built under the environment of the test
 * (Powertools reads its switches when `metrics` is built): a query string
 * makes it a module of its own, leaving the shared one alone.
 */
const freshObservability = async (tag: string): Promise<Observability> => {
  const module = new URL('../../shared/observability.ts', import.meta.url);
  module.search = tag;
  return (await import(/* @vite-ignore */ module.href)) as Observability;
};

/** Stands in for Lambda's segment and the subsegment it opens. */
const fakeSegment = () => {
  const subsegment = { close: vi.fn() };
  const segment = { addNewSubsegment: vi.fn(() => subsegment) };
  return { segment, subsegment };
};

/** Turns the tracer on, with stand-ins for everything that reaches X-Ray. */
const traceOn = () => {
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
});

describe('captureClient', () => {
  it('is off in tests: Powertools sees no Lambda execution environment', () => {
    expect(tracer.isTracingEnabled()).toBe(false);
  });

  it('returns the same client untouched when tracing is off', () => {
    // Arrange
    const capture = vi.spyOn(tracer, 'captureAWSv3Client');
    const client = { middlewareStack: { add: vi.fn() } };
    // Act
    const captured = captureClient(client);
    // Assert
    expect(captured).toBe(client);
    expect(capture).not.toHaveBeenCalled();
    expect(client.middlewareStack.add).not.toHaveBeenCalled();
  });

  it('has the tracer capture the client when tracing is on', () => {
    // Arrange
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
  it('only runs the work when tracing is off', async () => {
    // Arrange
    const getSegment = vi.spyOn(tracer, 'getSegment');
    // Act
    const result = await traced('job', { consumer: 'things' }, async () => 7);
    // Assert
    expect(result).toBe(7);
    expect(getSegment).not.toHaveBeenCalled();
  });

  it('runs the work in an annotated subsegment, then closes it and restores the parent', async () => {
    // Arrange
    const { segment, subsegment, setSegment, annotate } = traceOn();
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
    const { segment, subsegment, setSegment, markError } = traceOn();
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
    const { metrics } = await freshObservability('off-lambda');
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
    const { metrics } = await freshObservability('asked-for');
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
