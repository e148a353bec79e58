import { describe, expect, it } from 'vitest';
import {
  type Engine,
  engine,
  startEngines,
} from '../../../infra/local/engines.ts';

/** A fake engine that records its starts and stops in `log`. */
const fake = <const Name extends string>(
  name: Name,
  log: string[],
  behaviour: { failStart?: boolean; failStop?: boolean } = {},
): Engine<Name, { url: string }> =>
  engine({
    name,
    start: async () => {
      log.push(`start ${name}`);
      if (behaviour.failStart) throw new Error(`${name} is broken`);
      return { url: `fake://${name}` };
    },
    stop: async (running) => {
      log.push(`stop ${running.url}`);
      if (behaviour.failStop) throw new Error(`${name} hangs`);
    },
  });

describe('startEngines', () => {
  it('starts the engines in list order and returns what each exposes, by name', async () => {
    // Arrange
    const log: string[] = [];
    // Act
    const running = await startEngines([
      fake('db', log),
      fake('mailbox', log),
      fake('queue', log),
    ]);
    // Assert
    expect(log).toEqual(['start db', 'start mailbox', 'start queue']);
    expect(running.engines.db.url).toBe('fake://db');
    expect(running.engines.queue.url).toBe('fake://queue');
    await running.stop();
  });

  it('stops the started engines in reverse order when a later one fails to start', async () => {
    // Arrange
    const log: string[] = [];
    const list = [
      fake('db', log),
      fake('mailbox', log),
      fake('dns', log, { failStart: true }),
      fake('queue', log),
    ];
    // Act
    const failure = await startEngines(list).catch((error: Error) => error);
    // Assert
    expect(log).toEqual([
      'start db',
      'start mailbox',
      'start dns',
      'stop fake://mailbox',
      'stop fake://db',
    ]);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('The dns engine did not start');
    expect(((failure as Error).cause as Error).message).toBe('dns is broken');
  });

  it('stops every started engine when one fails to stop while unwinding, and reports both', async () => {
    // Arrange
    const log: string[] = [];
    const list = [
      fake('db', log),
      fake('mailbox', log, { failStop: true }),
      fake('dns', log, { failStart: true }),
    ];
    // Act
    const failure = await startEngines(list).catch((error: unknown) => error);
    // Assert
    expect(log.slice(-2)).toEqual(['stop fake://mailbox', 'stop fake://db']);
    expect(failure).toBeInstanceOf(AggregateError);
    expect(
      (failure as AggregateError).errors.map((e: Error) => e.message),
    ).toEqual([
      'The dns engine did not start',
      'The mailbox engine did not stop',
    ]);
  });

  it('stops in reverse order of start, once however often it is asked', async () => {
    // Arrange
    const log: string[] = [];
    const running = await startEngines([
      fake('db', log),
      fake('mailbox', log),
      fake('queue', log),
    ]);
    log.length = 0;
    // Act
    await Promise.all([running.stop(), running.stop()]);
    await running.stop();
    // Assert
    expect(log).toEqual([
      'stop fake://queue',
      'stop fake://mailbox',
      'stop fake://db',
    ]);
  });

  it('keeps stopping the others when one fails to stop, then rejects', async () => {
    // Arrange
    const log: string[] = [];
    const running = await startEngines([
      fake('db', log),
      fake('mailbox', log, { failStop: true }),
      fake('queue', log),
    ]);
    log.length = 0;
    // Act
    const failure = await running.stop().catch((error: Error) => error);
    // Assert
    expect(log).toEqual([
      'stop fake://queue',
      'stop fake://mailbox',
      'stop fake://db',
    ]);
    expect((failure as Error).message).toBe('The mailbox engine did not stop');
  });

  it('stops what started and starts no more when aborted during start-up', async () => {
    // Arrange: Ctrl-C arrives while the second engine starts.
    const log: string[] = [];
    const aborted = new AbortController();
    const list = [
      fake('db', log),
      engine({
        name: 'mailbox',
        start: async () => {
          log.push('start mailbox');
          aborted.abort(new Error('SIGINT'));
          return { url: 'fake://mailbox' };
        },
        stop: async (running) => {
          log.push(`stop ${running.url}`);
        },
      }),
      fake('queue', log),
    ];
    // Act
    const failure = await startEngines(list, {
      signal: aborted.signal,
    }).catch((error: Error) => error);
    // Assert
    expect(log).toEqual([
      'start db',
      'start mailbox',
      'stop fake://mailbox',
      'stop fake://db',
    ]);
    expect((failure as Error).message).toBe('SIGINT');
  });
});
