/**
 * Validation: `parse` (valibot schemas in, typed values or a
 * `ValidationError` naming each offending field out) and the primitives
 * every schema is built from — ids, page queries, emails, one-line and
 * multi-line texts, names, subjects and HTML contents with their byte
 * limits. The HTTP edge and the domain schemas both import them from here.
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

/** Normalizes an email for storage and comparison. */
export const normalizeEmail = (email: string): string =>
  email.trim().toLowerCase();

/** The UTF-8 size of a string, in bytes: what a stored item really costs. */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text);

/** True when the string holds a UTF-16 surrogate without its pair. */
export const hasLoneSurrogate = (text: string): boolean =>
  LONE_SURROGATE.test(text);

const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// C0 controls, DEL, C1 controls (NEL U+0085 among them), and the Unicode
// line and paragraph separators: none belongs in a one-line value.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this regex exists to find them
const LINE_BREAKING_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// In multi-line text, tab, LF and CR are fine; other controls are not.
const CONTROL_BUT_LINE_BREAKS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: this regex exists to find them
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

// The texts that hold none of them, whole.
const ONE_LINE = new RegExp(
  `^[^${LINE_BREAKING_OR_CONTROL.source.slice(1, -1)}]*$`,
);
const NO_CONTROL_BUT_LINE_BREAKS = new RegExp(
  `^[^${CONTROL_BUT_LINE_BREAKS.source.slice(1, -1)}]*$`,
);

/**
 * A one-line text a person typed (a name, a subject): no control character,
 * no line break of any kind, no lone surrogate, at most `maxBytes` bytes of
 * UTF-8. Such values reach mail headers, so CR/LF/NUL must never get in.
 */
export const lineText = (maxBytes: number) =>
  v.pipe(
    v.string('must be a string'),
    // A regex, not a check: the OpenAPI document states it as a `pattern`.
    v.regex(ONE_LINE, 'must not contain control characters or line breaks'),
    v.check(
      (text) => !hasLoneSurrogate(text),
      'must be valid Unicode (no lone surrogate)',
    ),
    v.maxBytes(maxBytes, `must be at most ${maxBytes} bytes of UTF-8`),
  );

/**
 * A multi-line text (HTML, a description): tabs and line breaks allowed,
 * the other C0 controls, DEL and lone surrogates refused (C1 controls are
 * left to the HTML: they never reach a header from here), at most `maxBytes`
 * bytes of UTF-8 (limits are in bytes: a DynamoDB item holds 400 KB).
 */
export const multilineText = (maxBytes: number) =>
  v.pipe(
    v.string('must be a string'),
    v.regex(NO_CONTROL_BUT_LINE_BREAKS, 'must not contain control characters'),
    v.check(
      (text) => !hasLoneSurrogate(text),
      'must be valid Unicode (no lone surrogate)',
    ),
    v.maxBytes(maxBytes, `must be at most ${maxBytes} bytes of UTF-8`),
  );

/**
 * A required name (of a list, tag, topic, organization): one line, trimmed,
 * 1 to `maxChars` characters and at most 4 bytes of UTF-8 a character.
 */
export const requiredName = (maxChars: number) =>
  v.pipe(
    lineText(maxChars * 4),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(maxChars, `must be at most ${maxChars} characters`),
  );

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

/**
 * Highest page number: a page number is an offset that is read through, so
 * a deeper page is the cursor's job (and DynamoDB's `Limit` is an int32).
 */
export const MAX_PAGE = 100_000;

/** `?page=&limit=`: page 1–100,000 (default 1), limit 1–100 (default 20). */
export const PageQuery = v.object({
  page: v.optional(
    v.pipe(
      positiveInt('page'),
      v.maxValue(MAX_PAGE, `page must be at most ${MAX_PAGE}`),
    ),
    '1',
  ),
  limit: v.optional(
    v.pipe(
      positiveInt('limit'),
      v.maxValue(MAX_PAGE_SIZE, `limit must be at most ${MAX_PAGE_SIZE}`),
    ),
    '20',
  ),
});

// The texts a message is made of — a subject and an HTML content — shared
// by templates and the opt-in email. Limits are in UTF-8 bytes, so that
// what is accepted always fits its DynamoDB item (400 KB for all of an
// item's attributes together).

/** Largest subject: one line, in UTF-8 bytes. */
export const MAX_SUBJECT_BYTES = 400;

/** Largest HTML content, in UTF-8 bytes: room is left for the other fields. */
export const MAX_CONTENT_BYTES = 300_000;

/**
 * A subject (Liquid): one line — no CR, LF, NUL or other control character,
 * since it becomes a mail header — trimmed, not empty.
 */
export const Subject = v.pipe(
  lineText(MAX_SUBJECT_BYTES),
  v.trim(),
  v.minLength(1, 'must not be empty'),
);

/** An HTML content (Liquid): line breaks allowed, other controls refused. */
export const HtmlContent = v.pipe(
  multilineText(MAX_CONTENT_BYTES),
  v.minLength(1, 'must not be empty'),
);

/**
 * An ISO 8601 instant with an explicit offset (`Z` or `±hh:mm`): a date
 * without one is refused, never read as UTC.
 */
export const InstantWithOffset = v.pipe(
  v.string(),
  v.regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/,
    'must be an ISO 8601 instant with an explicit offset (Z or +hh:mm), e.g. 2026-12-01T09:30:00+01:00',
  ),
  v.check(
    (value) => !Number.isNaN(Date.parse(value)),
    'must be a real date and time',
  ),
);

/**
 * Schemas of what the API answers (views). They only describe: views carry
 * no transforms, so a view's input and output types are the same.
 */

/** An instant in an answer: ISO 8601 in UTC, e.g. `2026-11-23T08:00:00.000Z`. */
export const Timestamp = v.pipe(
  v.string(),
  v.isoTimestamp(),
  v.description('An instant, ISO 8601 in UTC'),
);

/**
 * The IANA name a time zone is known by where the runtime's time zone data
 * knows it: `Europe/Paris`, `America/New_York`, `UTC`; an alias (`US/Eastern`)
 * is kept as given. Case is corrected when the runtime gives the same name
 * (`europe/paris` → `Europe/Paris`).
 */
export const timeZoneName = (name: string): string | undefined => {
  // Names only: offsets (`+02:00`) and abbreviations with digits first are
  // not zones (a fixed offset knows no daylight saving).
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) {
    return undefined;
  }
  try {
    const resolved = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
    }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
  } catch {
    return undefined;
  }
};

/** An IANA time zone in a request, normalized by {@link timeZoneName}. */
export const TimeZone = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(64, 'must be an IANA time zone name such as Europe/Paris'),
  v.check(
    (name) => timeZoneName(name) !== undefined,
    'must be an IANA time zone name such as Europe/Paris or UTC',
  ),
  v.transform((name) => timeZoneName(name) as string),
);

/** An id in an answer (a UUID). */
export const ViewId = v.pipe(v.string(), v.uuid());

/** A count of things: a whole number, 0 or more. */
export const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
