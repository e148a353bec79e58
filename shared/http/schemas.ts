/**
 * Schemas shared by many routes: ids in paths, page and limit in queries.
 */
import * as v from 'valibot';

/** A resource id (a UUID) in a path or a body. */
export const Id = v.pipe(v.string(), v.uuid('must be a valid id (UUID)'));

/** Builds the schema of path parameters that are all ids. */
export const idParams = <const K extends string>(...names: K[]) =>
  v.object(
    Object.fromEntries(names.map((name) => [name, Id])) as Record<K, typeof Id>,
  );

const positiveInt = (name: string) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `${name} must be a positive integer`),
    v.transform(Number),
    v.minValue(1, `${name} must be at least 1`),
  );

/** Largest page size of any paginated read. */
export const MAX_PAGE_SIZE = 100;

/** `?page=&limit=`: page from 1 (default 1), limit 1–100 (default 20). */
export const PageQuery = v.object({
  page: v.optional(positiveInt('page'), '1'),
  limit: v.optional(
    v.pipe(
      positiveInt('limit'),
      v.maxValue(MAX_PAGE_SIZE, `limit must be at most ${MAX_PAGE_SIZE}`),
    ),
    '20',
  ),
});
