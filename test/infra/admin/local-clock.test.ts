import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseInvocation } from '../../../infra/admin/commands.ts';
import {
  advanceLocalClock,
  readLocalClock,
  resetLocalClock,
} from '../../../infra/admin/local-clock.ts';
import type { LocalFiles } from '../../../infra/admin/local-commands.ts';
import { localFilesOf } from '../../../infra/admin/targets.ts';
import { schedulesFileOf } from '../../../infra/local/stack-file.ts';
import { LocalClock } from '../../../shared/adapters/local/local-clock.ts';
import { ValidationError } from '../../../shared/errors.ts';

const run = promisify(execFile);
const MINUTE = 60_000;

/** How far `iso` is ahead of real time, in whole minutes (never -0). */
const minutesAhead = (iso: string) =>
  Math.round((Date.parse(iso) - Date.now()) / MINUTE) + 0;

describe('admin CLI: the local clock', () => {
  let dataDir: string;
  let files: LocalFiles;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'local-clock-cli-'));
    files = localFilesOf(dataDir);
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps the clock and the schedules in the data dir', () => {
    expect(files.clockFile).toBe(join(dataDir, 'clock.json'));
    expect(schedulesFileOf(dataDir)).toBe(join(dataDir, 'schedules.json'));
  });

  it('parses the clock commands', () => {
    // Act
    const advance = parseInvocation(
      'local clock advance --minutes 90'.split(' '),
    );
    const show = parseInvocation(['local', 'clock', 'show']);
    // Assert
    expect(advance.command).toMatchObject({
      words: 'local clock advance',
      local: true,
    });
    expect(advance.flags).toEqual({ minutes: '90' });
    expect(show.command).toMatchObject({ words: 'local clock show' });
    expect(() => parseInvocation(['local', 'clock', 'advance'])).toThrow(
      'needs --minutes',
    );
  });

  it('shows real time, advances, adds up and resets', async () => {
    // Act
    const shown = await readLocalClock(files);
    const advanced = await advanceLocalClock(files, { minutes: '60' });
    const again = await advanceLocalClock(files, { minutes: '4320' });
    const after = await readLocalClock(files);
    const reset = await resetLocalClock(files);
    // Assert
    expect(minutesAhead(shown.now)).toBe(0);
    expect(minutesAhead(advanced.now)).toBe(60);
    expect(minutesAhead(again.now)).toBe(4380);
    expect(minutesAhead(after.now)).toBe(4380);
    expect(minutesAhead(reset.now)).toBe(0);
    expect(Object.keys(reset)).toEqual(['now']);
    expect(reset.now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it.each(['0', '-5', '1.5', 'soon', '', '525601'])(
    'refuses --minutes %j, moving nothing',
    async (minutes) => {
      // Act
      const failure = await advanceLocalClock(files, { minutes }).catch(
        (error: unknown) => error,
      );
      // Assert
      expect(failure).toBeInstanceOf(ValidationError);
      expect((failure as ValidationError).details).toEqual([
        {
          field: 'minutes',
          message: 'must be a whole number of minutes from 1 to 525600',
        },
      ]);
      expect(minutesAhead((await readLocalClock(files)).now)).toBe(0);
    },
  );

  describe('as a process, with no stack running', () => {
    const admin = (...args: string[]) =>
      run('npm', [
        'run',
        '--silent',
        'admin',
        '--',
        ...args,
        '--data-dir',
        dataDir,
      ]);

    it('moves the time of another process at once, printing one JSON object; exits 1 on bad minutes', async () => {
      // Arrange: this process reads the data dir's clock.
      const clock = new LocalClock(files.clockFile);
      expect(minutesAhead(clock.now().toISOString())).toBe(0);
      // Act
      const advanced = await admin(
        'local',
        'clock',
        'advance',
        '--minutes',
        '1440',
      );
      const seenAfter = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const seen = clock.now();
      const shown = await admin('local', 'clock', 'show');
      const invalid = await admin(
        'local',
        'clock',
        'advance',
        '--minutes',
        'lots',
      ).catch((error: { code: number; stderr: string }) => error);
      const reset = await admin('local', 'clock', 'reset');
      // Assert
      expect(minutesAhead(JSON.parse(advanced.stdout).now)).toBe(1440);
      expect(seen.getTime() - seenAfter).toBeGreaterThan(1439 * MINUTE);
      expect(minutesAhead(JSON.parse(shown.stdout).now)).toBe(1440);
      expect(invalid).toMatchObject({ code: 1 });
      expect((invalid as { stderr: string }).stderr).toContain(
        '--minutes: must be a whole number of minutes',
      );
      expect(minutesAhead(JSON.parse(reset.stdout).now)).toBe(0);
      expect(reset.stdout.trim().split('\n')).toHaveLength(1);
    }, 30_000);
  });
});
