/**
 * Validation: `parse` (valibot schemas in, typed values or a
 * `ValidationError` naming each offending field out) and the primitives
 * every schema is built from — ids, page queries, emails, one-line and
 * multi-line texts, names, subjects and HTML contents with their byte
 * limits. The HTTP edge and the domain schemas both import them from here.
 */
import * as v from 'valibot';
import { type FieldIssue, ValidationError } from './errors.ts';
import { inJsonSchema } from './schema-notes.ts';

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
 * Names a JSON object may carry as its own keys but a schema never sees:
 * valibot (rightly) skips them when it copies a record or an object, so a
 * value under one would be dropped without a word.
 */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The first own key of `value`, at any depth, that is a reserved name, as
 * an issue naming its dotted path (`fields.constructor`): a request naming
 * one is refused rather than quietly losing it. Iterative, so no nesting
 * depth can overflow the stack.
 */
export const reservedKeyIssue = (value: unknown): FieldIssue | undefined => {
  const pending: { value: unknown; path: string }[] = [{ value, path: '' }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    for (const [key, inner] of Object.entries(next.value)) {
      const path = next.path ? `${next.path}.${key}` : key;
      if (!Array.isArray(next.value) && RESERVED_KEYS.has(key)) {
        return {
          field: path,
          message: 'is a reserved name, not allowed as a key',
        };
      }
      pending.push({ value: inner, path });
    }
  }
  return undefined;
};

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

/**
 * The check of a list that names each item once (`uniqueItems` in the
 * document): a repeat answers 400 naming the list, never merged silently.
 * `what` names one item: `a scope`, `an event type`.
 */
export const eachOnce = <T>(what: string) =>
  v.check<T[], string>(
    (items) => new Set(items).size === items.length,
    `must not name ${what} twice`,
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

// Dates. `Date.parse` rolls impossible fields over (`2027-02-30` is
// 2 March, `T24:00` the next day): every date the API takes is read here
// instead, field by field, and refused unless each field is in its range.

const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

const INSTANT_WITH_OFFSET =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const daysInMonth = (year: number, month: number): number =>
  new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * Reads an ISO 8601 date or date-time as epoch milliseconds, or `undefined`
 * when it is not one or names a day, hour or offset that does not exist
 * (30 February, 31 April, 24:00, 23:60, +25:00). `offset: 'required'` also
 * refuses a date-time without `Z` or `±hh:mm`, and a bare date; otherwise a
 * bare date is midnight UTC and a date-time without an offset is UTC — never
 * the server's own time zone.
 */
export const parseIsoInstant = (
  text: string,
  options: { offset: 'required' | 'optional' },
): number | undefined => {
  const match = ISO_INSTANT.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  if (options.offset === 'required' && (h === undefined || !offset)) {
    return undefined;
  }
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h ?? 0);
  const minute = Number(mi ?? 0);
  const second = Number(s ?? 0);
  if (year < 1 || month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (offset && offset !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2));
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes =
      (offset[0] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const millis = Number(`${fraction ?? ''}000`.slice(0, 3));
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  const instant = utc.getTime() - offsetMinutes * 60_000;
  // In UTC too, a year of four digits from 1000: `9999-12-31T23:59-23:59`
  // is year 10000 once in UTC, which no ISO timestamp (nor a schedule) holds.
  const utcYear = new Date(instant).getUTCFullYear();
  return utcYear >= MIN_YEAR && utcYear <= MAX_YEAR ? instant : undefined;
};

/** The years a date may name, in UTC. */
const MIN_YEAR = 1000;
const MAX_YEAR = 9999;

const INSTANT_EXAMPLE = 'e.g. 2026-12-01T09:30:00+01:00';

/**
 * `parseIsoInstant`'s rules as a pattern, for the OpenAPI document (a
 * schema cannot call a function): days in their month, 29 February of leap
 * years only, hours, minutes, seconds and offsets in range, and years 1001
 * to 9998 (in UTC the bounds move by up to a day; the ends are left out).
 */
const YEAR =
  '(?:100[1-9]|10[1-9]\\d|1[1-9]\\d{2}|[2-8]\\d{3}|9[0-8]\\d{2}|99[0-8]\\d)';
const LEAP_YEAR =
  '(?:\\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)';
const CALENDAR_DAY = `(?:${YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))|(?=${YEAR})${LEAP_YEAR}-02-29)`;
const CLOCK = '(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?';
const OFFSET = '(?:Z|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)';
/** A real calendar date (`YYYY-MM-DD`), as the document says it. */
export const REAL_DATE_PATTERN = `^${CALENDAR_DAY}$`;
/** A real date or date-time (offset optional), as the document says it. */
export const REAL_DATE_OR_INSTANT_PATTERN = `^${CALENDAR_DAY}(?:[T ]${CLOCK}${OFFSET}?)?$`;

/**
 * An ISO 8601 instant with an explicit offset (`Z` or `±hh:mm`), each field
 * in its range: a date without an offset is refused, never read as UTC, and
 * 30 February is refused, never read as 2 March. Kept as given.
 */
export const InstantWithOffset = v.pipe(
  v.string('must be a string'),
  v.regex(
    INSTANT_WITH_OFFSET,
    `must be an ISO 8601 instant with an explicit offset (Z or +hh:mm), ${INSTANT_EXAMPLE}`,
  ),
  v.check(
    // The form is the regex's to judge: one message per mistake.
    (value) =>
      !INSTANT_WITH_OFFSET.test(value) ||
      parseIsoInstant(value, { offset: 'required' }) !== undefined,
    'must be a real date and time (no 30 February, no 24:00), in the years 1000 to 9999',
  ),
);

/** {@link InstantWithOffset}, stored as the UTC timestamp it names. */
export const InstantWithOffsetAsUtc = v.pipe(
  InstantWithOffset,
  v.transform((value) =>
    new Date(
      parseIsoInstant(value, { offset: 'required' }) as number,
    ).toISOString(),
  ),
);

/**
 * An ISO 8601 date (`2026-03-01`, midnight UTC) or date-time (offset
 * optional, UTC when absent), each field in its range, stored as the UTC
 * timestamp it names: for dates a client copies from another system, such as
 * when a contact gave consent.
 */
export const IsoDateOrInstant = v.pipe(
  v.string('must be a string'),
  v.regex(ISO_INSTANT, 'must be an ISO 8601 date'),
  inJsonSchema({ pattern: REAL_DATE_OR_INSTANT_PATTERN }),
  v.check(
    (value) =>
      !ISO_INSTANT.test(value) ||
      parseIsoInstant(value, { offset: 'optional' }) !== undefined,
    'must be a real date (no 30 February, no 24:00), in the years 1000 to 9999',
  ),
  v.transform((value) =>
    new Date(
      parseIsoInstant(value, { offset: 'optional' }) as number,
    ).toISOString(),
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
