import { spawn } from 'node:child_process';
import {
  mkdir,
  mkdtemp,
  readdir,
  rm,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  readJsonFile,
  updateJsonFile,
  writeJsonFile,
} from '../../../../shared/adapters/local/json-file.ts';

describe('local JSON state files', () => {
  let dir: string;
  let file: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'json-file-'));
    file = join(dir, 'state.json');
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads undefined from a missing file and what was written otherwise', async () => {
    expect(await readJsonFile(file)).toBeUndefined();
    await writeJsonFile(file, { a: 1 });
    expect(await readJsonFile(file)).toEqual({ a: 1 });
  });

  it('applies concurrent updates one after the other', async () => {
    await Promise.all(
      Array.from({ length: 20 }, () =>
        updateJsonFile(file, (current) => ({
          n: ((current as { n?: number } | undefined)?.n ?? 0) + 1,
        })),
      ),
    );
    expect(await readJsonFile(file)).toEqual({ n: 20 });
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('applies concurrent updates of several processes one after the other', async () => {
    // Arrange: a script incrementing the counter 100 times at once.
    const module = new URL(
      '../../../../shared/adapters/local/json-file.ts',
      import.meta.url,
    ).pathname;
    const script = join(dir, 'increment.mts');
    await writeFile(
      script,
      `import { updateJsonFile } from ${JSON.stringify(module)};
      await Promise.all(Array.from({ length: 100 }, () =>
        updateJsonFile(process.argv[2], (c) => ({ n: (c?.n ?? 0) + 1 }))));`,
    );
    const increment = () =>
      new Promise<number | null>((resolve, reject) =>
        spawn('node_modules/.bin/tsx', [script, file], { stdio: 'inherit' })
          .once('error', reject)
          .once('exit', resolve),
      );
    // Act: three processes.
    const codes = await Promise.all([increment(), increment(), increment()]);
    // Assert
    expect(codes).toEqual([0, 0, 0]);
    expect(await readJsonFile(file)).toEqual({ n: 300 });
  }, 30_000);

  it('takes over a lock left behind by a dead process', async () => {
    // Arrange: a lock directory 20 s old.
    const lock = `${file}.lock`;
    await mkdir(lock);
    const past = new Date(Date.now() - 20_000);
    await utimes(lock, past, past);
    // Act
    await updateJsonFile(file, () => ({ ok: true }));
    // Assert
    expect(await readJsonFile(file)).toEqual({ ok: true });
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});
