/**
 * JSON state files shared by local processes (the stack, the admin CLI, test
 * workers): read whole, written atomically (temp file + rename, so a reader
 * never sees half a file), and changed under a lock (proper-lockfile) so two
 * processes updating the same file do not lose each other's change.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { lock } from 'proper-lockfile';

/** The parsed JSON of a file; undefined when the file does not exist. */
export const readJsonFile = async (file: string): Promise<unknown> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not valid JSON`, { cause: error });
  }
};

/** Writes `value` as JSON to `file` at once: a temp file, then a rename. */
export const writeJsonFile = async (
  file: string,
  value: unknown,
): Promise<void> => {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
};

/** A lock older than this belongs to a process that died holding it. */
const STALE_LOCK_MS = 10_000;

/** In-process queues, so calls of one process take turns without polling. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `change` on the current contents of `file` (undefined when missing)
 * and writes what it returns, holding the file's lock meanwhile. Returns the
 * written value.
 */
export const updateJsonFile = <T>(
  file: string,
  change: (current: unknown) => T | Promise<T>,
): Promise<T> => {
  const previous = queues.get(file) ?? Promise.resolve();
  const next = previous
    .catch(() => undefined)
    .then(() =>
      withLock(file, async () => {
        const updated = await change(await readJsonFile(file));
        await writeJsonFile(file, updated);
        return updated;
      }),
    );
  queues.set(file, next);
  // Forget the queue once it drains, so the map does not grow.
  void next
    .catch(() => undefined)
    .then(() => {
      if (queues.get(file) === next) queues.delete(file);
    });
  return next;
};

/**
 * Holds the file's lock (proper-lockfile: an atomic lock directory, kept
 * fresh while held, taken over when stale) while `fn` runs.
 */
const withLock = async <T>(file: string, fn: () => Promise<T>): Promise<T> => {
  await mkdir(dirname(file), { recursive: true });
  const release = await lock(file, {
    // The file itself may not exist yet.
    realpath: false,
    stale: STALE_LOCK_MS,
    retries: { retries: 400, minTimeout: 5, maxTimeout: 50, randomize: true },
  });
  try {
    return await fn();
  } finally {
    await release();
  }
};
