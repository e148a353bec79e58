/**
 * The published versions journeys read. A version never changes once
 * published, so a container keeps the ones it read (a few hundred at
 * most): an enrolment or a step costs no reads of its content.
 */
import type { SequencesDeps, VersionWithNodes } from './ports.ts';

/** The versions kept, the oldest read first (a Map keeps that order). */
const versionCache = new Map<string, VersionWithNodes>();
const VERSION_CACHE_SIZE = 200;

/** A published version with its nodes, read once per container. */
export const publishedVersion = async (
  deps: Pick<SequencesDeps, 'sequences'>,
  orgId: string,
  sequenceId: string,
  versionId: string,
): Promise<VersionWithNodes | undefined> => {
  const key = `${orgId}/${sequenceId}/${versionId}`;
  const cached = versionCache.get(key);
  if (cached) return cached;
  const found = await deps.sequences.getVersionWithNodes(
    orgId,
    sequenceId,
    versionId,
  );
  // Only what can no longer change is kept (a draft can).
  if (found && found.version.status !== 'draft') {
    if (versionCache.size >= VERSION_CACHE_SIZE) {
      const oldest = versionCache.keys().next().value;
      if (oldest !== undefined) versionCache.delete(oldest);
    }
    versionCache.set(key, found);
  }
  return found;
};
