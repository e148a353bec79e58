/**
 * fast-check arbitraries of the values a JSON Schema (2020-12, as the
 * OpenAPI document writes them) allows. Values are drawn from the schema's
 * types, formats, patterns, lengths and bounds, then kept only when a real
 * validator (Ajv, with the document's conventions) accepts them whole, so
 * the rules between fields (`not`, `dependentSchemas`, `oneOf`) hold too.
 * Conventions of the document: lengths count UTF-16 code units (as
 * JavaScript does), and `x-maxUtf8Bytes` bounds a text in UTF-8 bytes.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import fc from 'fast-check';

/** A JSON Schema, read by keyword. */
export type JsonSchema = { [keyword: string]: unknown } | boolean;
type SchemaObject = { [keyword: string]: unknown };

/** The validator of the document's schemas, with its conventions. */
export const createValidator = () => {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  // A CommonJS module: its function is its default export's default.
  const addFormats =
    (formats as unknown as { default: typeof formats }).default ?? formats;
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  // Lengths are `.length`, UTF-16 code units (Ajv counts code points).
  for (const keyword of ['minLength', 'maxLength'] as const) {
    ajv.removeKeyword(keyword);
    ajv.addKeyword({
      keyword,
      type: 'string',
      schemaType: 'number',
      validate: (limit: number, data: string) =>
        keyword === 'minLength' ? data.length >= limit : data.length <= limit,
    });
  }
  ajv.addKeyword({
    keyword: 'x-maxUtf8Bytes',
    type: 'string',
    schemaType: 'number',
    validate: (max: number, data: string) => Buffer.byteLength(data) <= max,
  });
  return ajv;
};

/** The longest string or array drawn, whatever the schema allows. */
const MAX_DRAWN_LENGTH = 24;
const MAX_DRAWN_ITEMS = 3;

/**
 * A schema with its `allOf` folded in: the first of each keyword kept,
 * the other patterns listed (the validator checks the rest).
 */
const fold = (schema: SchemaObject): SchemaObject => {
  const folded: SchemaObject = { ...schema };
  delete folded.allOf;
  for (const part of (schema.allOf as SchemaObject[] | undefined) ?? []) {
    for (const [keyword, value] of Object.entries(fold(part))) {
      if (keyword === 'pattern' && folded.pattern !== undefined) {
        folded.patterns = [...((folded.patterns as string[]) ?? []), value];
      } else if (keyword === 'required') {
        folded.required = [
          ...new Set([
            ...((folded.required as string[]) ?? []),
            ...(value as string[]),
          ]),
        ];
      } else if (keyword === 'properties') {
        folded.properties = {
          ...((folded.properties as SchemaObject) ?? {}),
          ...(value as SchemaObject),
        };
      } else if (folded[keyword] === undefined) folded[keyword] = value;
    }
  }
  return folded;
};

/** A branch of `anyOf`/`oneOf` joined to the schema that holds it. */
const withBranch = (base: SchemaObject, branch: JsonSchema): SchemaObject =>
  fold({ ...base, allOf: [branch] });

const utf16Length = (text: string) => text.length;

/** Strings of a pattern (a lookahead is left to the filter). */
const matching = (pattern: string): fc.Arbitrary<string> => {
  const regex = new RegExp(pattern, 'u');
  // fast-check draws no lookahead: draw without it, keep what matches.
  const drawable = new RegExp(pattern.replace(/\(\?=[^()]*\)/g, ''), 'u');
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.stringMatching(drawable) },
      // Beyond ASCII, for patterns that take any character.
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
    )
    .filter((text) => regex.test(text));
};

/** The largest limit drawn up to: a longer text is no other case. */
const MAX_EDGE = 5_000;

/**
 * Texts as long as the schema allows, in UTF-16 units and UTF-8 bytes
 * alike: one character (1 to 4 bytes, 1 or 2 units) repeated up to the
 * first limit it meets.
 */
const atTheLimit = (schema: SchemaObject): fc.Arbitrary<string> | undefined => {
  const units = Number(schema.maxLength ?? Number.POSITIVE_INFINITY);
  const bytes = Number(schema['x-maxUtf8Bytes'] ?? Number.POSITIVE_INFINITY);
  if (Math.min(units, bytes) > MAX_EDGE) return undefined;
  return fc.constantFrom('a', 'é', '€', '😀', 'a b').map((unit) => {
    const times = Math.floor(
      Math.min(units / unit.length, bytes / Buffer.byteLength(unit)),
    );
    return unit.repeat(times);
  });
};

const stringOf = (schema: SchemaObject): fc.Arbitrary<string> => {
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Math.min(
    Number(schema.maxLength ?? Number.POSITIVE_INFINITY),
    Math.max(minLength, MAX_DRAWN_LENGTH),
  );
  let drawn: fc.Arbitrary<string>;
  switch (schema.format) {
    case 'uuid':
      drawn = fc.uuid();
      break;
    case 'ipv4':
      drawn = fc.ipV4();
      break;
    case 'ipv6':
      drawn = fc.ipV6();
      break;
    case 'uri':
      // Drawn freely, almost no text is a URI: a filter would never end.
      drawn = fc.webUrl({
        validSchemes: ['https', 'http'],
        withQueryParameters: true,
      });
      break;
    case 'date-time':
      drawn = fc
        .tuple(
          fc.date({
            min: new Date('2000-01-01T00:00:00Z'),
            max: new Date('2099-12-31T23:59:59Z'),
            noInvalidDate: true,
          }),
          fc.constantFrom('Z', '+01:00', '-05:30', '+00:00'),
        )
        .map(([date, offset]) => {
          const text = date.toISOString();
          return offset === 'Z' ? text : text.replace('Z', offset);
        });
      break;
    default: {
      const drawnFreely =
        typeof schema.pattern === 'string'
          ? matching(schema.pattern)
          : fc.string({ unit: 'grapheme', minLength, maxLength });
      const edge = atTheLimit(schema);
      drawn = edge
        ? fc.oneof(
            { weight: 4, arbitrary: drawnFreely },
            { weight: 1, arbitrary: edge },
          )
        : drawnFreely;
    }
  }
  const patterns = [schema.pattern, ...((schema.patterns as string[]) ?? [])]
    .filter((pattern): pattern is string => typeof pattern === 'string')
    .map((pattern) => new RegExp(pattern, 'u'));
  return drawn.filter(
    (text) =>
      utf16Length(text) >= minLength &&
      utf16Length(text) <=
        Number(schema.maxLength ?? Number.POSITIVE_INFINITY) &&
      patterns.every((regex) => regex.test(text)),
  );
};

const numberOf = (schema: SchemaObject, integer: boolean) => {
  const min = schema.minimum === undefined ? -1e6 : Number(schema.minimum);
  const max = schema.maximum === undefined ? 1e6 : Number(schema.maximum);
  return integer
    ? fc.integer({ min, max })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
};

/** Keys no declared property has: a client may send more than asked. */
const extraKey = fc
  .string({
    unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
    minLength: 1,
    maxLength: 6,
  })
  .map((name) => `x${name}`);

const objectOf = (schema: SchemaObject): fc.Arbitrary<unknown> => {
  const properties = Object.entries(
    (schema.properties as Record<string, JsonSchema> | undefined) ?? {},
  )
    // A property no value satisfies is never sent.
    .filter(
      ([, property]) =>
        property !== false && JSON.stringify(property) !== '{"not":{}}',
    );
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const record = fc.record(
    Object.fromEntries(
      properties.map(([name, property]) => [name, arbitraryOf(property)]),
    ),
    {
      requiredKeys: properties
        .map(([name]) => name)
        .filter((name) => required.has(name)),
    },
  );
  if (schema.additionalProperties !== undefined) {
    if (schema.additionalProperties === false) return record;
    // A record: names and values of their own schemas.
    const keys =
      schema.propertyNames !== undefined
        ? (arbitraryOf(
            schema.propertyNames as JsonSchema,
          ) as fc.Arbitrary<string>)
        : extraKey;
    return fc
      .tuple(
        record,
        fc.dictionary(
          keys,
          arbitraryOf(schema.additionalProperties as JsonSchema),
          {
            maxKeys: Math.min(Number(schema.maxProperties ?? 3), 3),
          },
        ),
      )
      .map(([declared, more]) => ({ ...more, ...declared }));
  }
  return fc
    .tuple(
      record,
      fc.option(fc.tuple(extraKey, fc.string({ maxLength: 8 })), { freq: 4 }),
    )
    .map(([declared, extra]) =>
      extra && !(extra[0] in ((schema.properties as SchemaObject) ?? {}))
        ? { ...declared, [extra[0]]: extra[1] }
        : declared,
    );
};

const byType = (schema: SchemaObject, type: string): fc.Arbitrary<unknown> => {
  switch (type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return numberOf(schema, true);
    case 'number':
      return numberOf(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = Number(schema.minItems ?? 0);
      return fc.array(
        arbitraryOf((schema.items as JsonSchema | undefined) ?? true),
        {
          minLength,
          maxLength: Math.min(
            Number(schema.maxItems ?? Number.POSITIVE_INFINITY),
            minLength + MAX_DRAWN_ITEMS,
          ),
        },
      );
    }
    case 'object':
      return objectOf(schema);
    default:
      throw new Error(`no arbitrary for the type ${type}`);
  }
};

/**
 * Values `schema` may allow, drawn from what it says (the caller keeps
 * those its validator accepts: {@link allowedBy}).
 */
export const arbitraryOf = (given: JsonSchema): fc.Arbitrary<unknown> => {
  if (given === true) return fc.string({ maxLength: 8 });
  if (given === false) throw new Error('no value satisfies false');
  const schema = fold(given);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) {
    return fc.constantFrom(...(schema.enum as unknown[]));
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword] as JsonSchema[] | undefined;
    if (branches) {
      const base = { ...schema };
      delete base[keyword];
      return fc.oneof(
        ...branches.map((branch) => arbitraryOf(withBranch(base, branch))),
      );
    }
  }
  const type =
    schema.type ??
    (schema.properties ? 'object' : schema.items ? 'array' : undefined);
  if (Array.isArray(type)) {
    return fc.oneof(...type.map((one) => byType(schema, String(one))));
  }
  if (type === undefined) {
    throw new Error(
      `no type to draw from: ${JSON.stringify(schema).slice(0, 200)}`,
    );
  }
  return byType(schema, String(type));
};

/** The values of `schema` its validator accepts whole. */
export const allowedBy = (
  ajv: ReturnType<typeof createValidator>,
  schema: JsonSchema,
): fc.Arbitrary<unknown> => {
  const validate = ajv.compile(schema);
  return arbitraryOf(schema).filter((value) => validate(value) === true);
};
