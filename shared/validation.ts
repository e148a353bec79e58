/**
 * Validation at the edge: valibot schemas in, typed values or a
 * `ValidationError` naming each offending field out.
 */
import * as v from 'valibot';
import { type FieldIssue, ValidationError } from './errors.ts';

/** Turns valibot issues into `{field, message}` pairs, prefixed by `location`. */
export const fieldIssues = (
  issues: readonly v.BaseIssue<unknown>[],
  location?: string,
): FieldIssue[] =>
  issues.map((issue) => {
    const path = v.getDotPath(issue);
    const field = [location, path].filter(Boolean).join('.') || 'body';
    // valibot words a missing key as "Invalid key: Expected …": say it plainly.
    const missing = issue.kind === 'schema' && issue.received === 'undefined';
    return { field, message: missing ? 'is required' : issue.message };
  });

/**
 * Parses `input` with `schema`; throws a `ValidationError` naming every bad
 * field. `location` prefixes field names when it helps (`query`, `path`).
 */
export const parse = <S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  location?: string,
): v.InferOutput<S> => {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const details = fieldIssues(result.issues, location);
  const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
  throw new ValidationError(`Invalid request: ${summary}`, details);
};

/** An email address: trimmed, lower-cased, at most 254 characters. */
export const EmailAddress = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(254, 'must be at most 254 characters'),
  v.email('must be an email address'),
);
