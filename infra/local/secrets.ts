/**
 * Secrets of a local stack (the link signing secret): random on the first
 * start, then kept in `$LOCAL_DATA_DIR/secrets.json` so that links sent
 * before a restart keep working.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writePrivateFile } from './private-file.ts';

/** The named secret of this data dir, created if missing. */
export const localSecret = async (
  dataDir: string,
  name: string,
): Promise<string> => {
  const path = join(dataDir, 'secrets.json');
  const secrets = await readFile(path, 'utf8')
    .then((text) => JSON.parse(text) as Record<string, string>)
    .catch(() => ({}) as Record<string, string>);
  const existing = secrets[name];
  if (existing) return existing;
  const created = randomBytes(48).toString('base64url');
  await writePrivateFile(
    path,
    `${JSON.stringify({ ...secrets, [name]: created }, null, 2)}\n`,
  );
  return created;
};
