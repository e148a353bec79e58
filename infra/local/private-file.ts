/**
 * Files of a local stack that hold secrets (API keys, signing secrets):
 * readable by their owner only, whatever mode the file had before.
 */
import { chmod, writeFile } from 'node:fs/promises';

/** Writes `text` to `path` with mode 0600 (also when the file existed). */
export const writePrivateFile = async (
  path: string,
  text: string,
): Promise<void> => {
  await writeFile(path, text, { mode: 0o600 });
  // `mode` applies only when the file is created: narrow an older one too.
  await chmod(path, 0o600);
};
