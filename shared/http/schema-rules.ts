/**
 * The rules the OpenAPI document adds to valibot's JSON Schema converter
 * (`overrideAction`), so a schema says what the server enforces and not
 * less: a `maxBytes` action is an `x-maxUtf8Bytes`; an `ip` action an IPv4
 * or IPv6 address of valibot's regex; an `email` action the pattern of the
 * addresses it takes; a time zone's check the names the runtime knows; the
 * actions of an instant with an offset a `date-time`; a trimmed text's
 * minimum length a non-space character; the "at least one field" check of
 * a PATCH body `minProperties: 1` with one of its fields required; a second
 * regex of a text one more `pattern`; and the notes of
 * `shared/schema-notes.ts` (rules between fields, the entries of an array
 * checked one by one) are merged in. Whatever a rule adds, the server
 * refuses without it.
 */
import type { ConversionConfig, JsonSchema } from '@valibot/to-json-schema';
import { toJsonSchema } from '@valibot/to-json-schema';
import { hasSomeField, NOTE_KEY } from '../schema-notes.ts';
import { InstantWithOffset, TimeZone, timeZoneName } from '../validation.ts';

type Schema = Record<string | symbol, unknown>;
type ActionOverride = NonNullable<ConversionConfig['overrideAction']>;

/** The extension keyword of a limit in UTF-8 bytes. */
export const MAX_BYTES = 'x-maxUtf8Bytes';

/** Set on a string schema once its pipe trimmed it (never written out). */
const TRIMMED = Symbol('trimmed');

/** The actions of an instant with an explicit offset, by identity. */
const INSTANT_ACTIONS = new Set<unknown>(InstantWithOffset.pipe.slice(1));

/** The check of a time zone's name, by identity. */
const TIME_ZONE_CHECK = TimeZone.pipe.find((item) => item.type === 'check');

/** The zones the runtime knows, by the names it gives them. */
const timeZones = (): string[] =>
  [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])].filter(
    (zone) => timeZoneName(zone) === zone,
  );

const isValibotSchema = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  (value as { kind?: unknown }).kind === 'schema' &&
  '~run' in value;

const same = (a: unknown, b: unknown) =>
  JSON.stringify(a) === JSON.stringify(b);

/**
 * `schema` with `extra`'s keywords: a keyword it lacks (or holds as `{}`,
 * anything) is added, `required` lists are joined, new `properties` join
 * the others, and a keyword it already holds with another value goes into
 * `allOf` (both then apply), as does an `anyOf`.
 */
export const mergeSchema = (schema: Schema, extra: Schema): Schema => {
  const merged: Schema = { ...schema };
  const both: Schema[] = [];
  for (const [keyword, value] of Object.entries(extra)) {
    const current = merged[keyword];
    if (keyword === 'anyOf') {
      // A constraint, not alternatives: at the top, code generators read
      // `anyOf` as "this object, or one of these".
      both.push({ anyOf: value });
    } else if (current === undefined || same(current, {})) {
      merged[keyword] = value;
    } else if (keyword === 'required' && Array.isArray(current)) {
      merged.required = [...new Set([...current, ...(value as unknown[])])];
    } else if (
      keyword === 'properties' &&
      Object.keys(value as Schema).every(
        (name) => !(name in (current as Schema)),
      )
    ) {
      merged.properties = { ...(current as Schema), ...(value as Schema) };
    } else if (!same(current, value)) {
      both.push({ [keyword]: value });
    }
  }
  if (both.length > 0) {
    merged.allOf = [...((merged.allOf as Schema[] | undefined) ?? []), ...both];
  }
  return merged;
};

/**
 * The source of `regex` matching as it does without its `i` flag: each
 * ASCII letter outside a class stands for both cases, and a class's
 * letter ranges get their other case.
 */
export const caseless = (regex: RegExp): string => {
  if (!regex.flags.includes('i')) return regex.source;
  const source = regex.source;
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source[i] as string;
    if (char === '\\') {
      out += char + (source[i + 1] ?? '');
      i++;
    } else if (char === '[') {
      inClass = true;
      out += char;
    } else if (char === ']') {
      inClass = false;
      out += char;
    } else if (/[a-z]/i.test(char)) {
      const range = /^([a-z])-([a-z])/i.exec(source.slice(i));
      const other = (c: string) =>
        c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
      if (inClass && range) {
        const [, from = '', to = ''] = range;
        out += `${from}-${to}${other(from)}-${other(to)}`;
        i += 2;
      } else if (inClass) out += char + other(char);
      else out += `[${char}${other(char)}]`;
    } else out += char;
  }
  return out;
};

/**
 * What a trimmed text of at least `min` characters matches: its first and
 * last non-space characters at least `min` apart (`\s` is what `trim`
 * removes).
 */
const trimmedMinPattern = (min: number): string =>
  min <= 1 ? '\\S' : `\\S[\\s\\S]{${min - 2},}\\S`;

/**
 * The `overrideAction` of the document's conversions; `config` converts
 * the valibot schemas a note holds, the same way.
 */
export const schemaRules =
  (config: () => ConversionConfig): ActionOverride =>
  ({ valibotAction, jsonSchema, errors }) => {
    const action = valibotAction as unknown as Schema & { type: string };
    let schema = jsonSchema as Schema;
    if (action.type === 'metadata') {
      const note = (action.metadata as Schema)[NOTE_KEY] as Schema | undefined;
      if (note) {
        const { [NOTE_KEY]: _, ...rest } = schema;
        schema = mergeSchema(rest, convertNote(note, config()) as Schema);
      }
    } else if (['ip', 'ipv4', 'ipv6'].includes(action.type)) {
      // The formats, and valibot's regex: it takes fewer IPv6 forms than
      // RFC 4291 (an IPv4 tail only after `::ffff:` or 1 to 4 groups).
      schema = mergeSchema(schema, {
        ...(action.type === 'ip'
          ? { anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] }
          : {}),
        pattern: caseless(action.requirement as RegExp),
      });
    } else if (action.type === 'email') {
      // The address valibot's regex takes, not any RFC 5321 one.
      schema = mergeSchema(schema, {
        pattern: (action.requirement as RegExp).source,
      });
    } else if (valibotAction === TIME_ZONE_CHECK) {
      // Any name the runtime knows (an alias, another case) is taken too.
      schema = mergeSchema(schema, { enum: timeZones() });
    } else if (action.type === 'max_bytes') {
      // JSON Schema counts characters: the bytes go in an extension, and
      // bound the length (a character is at least a byte).
      const bytes = Number(action.requirement);
      schema = mergeSchema(schema, {
        [MAX_BYTES]: bytes,
        maxLength: Math.min(Number(schema.maxLength ?? bytes), bytes),
      });
    } else if (action.type === 'trim') {
      schema = { ...schema, [TRIMMED]: true };
    } else if (
      action.type === 'min_length' &&
      schema.type === 'string' &&
      schema[TRIMMED]
    ) {
      schema = mergeSchema(schema, {
        pattern: trimmedMinPattern(Number(action.requirement)),
      });
    } else if (
      action.requirement instanceof RegExp &&
      errors?.some((error) => error.includes('another regex action'))
    ) {
      // The converter keeps the first pattern only: both apply.
      schema = {
        ...schema,
        allOf: [
          ...((schema.allOf as Schema[] | undefined) ?? []),
          { pattern: action.requirement.source },
        ],
      };
    } else if (
      action.type === 'check' &&
      action.requirement === hasSomeField &&
      schema.properties
    ) {
      const fields = Object.entries(schema.properties as Schema)
        // A field that can never be valid (`v.never`) changes nothing.
        .filter(([, field]) => !same(field, { not: {} }))
        .map(([name]) => ({ required: [name] }));
      schema = mergeSchema(schema, { minProperties: 1, anyOf: fields });
    }
    if (INSTANT_ACTIONS.has(valibotAction)) {
      schema = mergeSchema(schema, { format: 'date-time' });
    }
    // Returned, it replaces the schema (the converter's errors are ignored).
    return schema as JsonSchema;
  };

/** A note with each valibot schema it holds converted (`$schema` left out). */
const convertNote = (value: unknown, config: ConversionConfig): unknown => {
  if (isValibotSchema(value)) {
    const { $schema: _, ...converted } = toJsonSchema(
      value as Parameters<typeof toJsonSchema>[0],
      config,
    );
    return converted;
  }
  if (Array.isArray(value)) {
    return value.map((item) => convertNote(item, config));
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        convertNote(inner, config),
      ]),
    );
  }
  return value;
};
