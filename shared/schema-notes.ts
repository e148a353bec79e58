/**
 * What a request schema's rules say in JSON Schema where valibot's
 * converter cannot read them: a `check` is a function, so a rule between
 * fields (either this or that, this one needs that one) is stated beside
 * it as a note. The OpenAPI document (shared/http/openapi.ts) merges the
 * notes into its schemas, so it says what the server enforces. A note
 * validates nothing.
 */
import * as v from 'valibot';

/**
 * A part of a JSON Schema (2020-12). A valibot schema as a value (the
 * `items` of an array checked entry by entry) is converted in its place.
 */
export interface JsonSchemaNote {
  [keyword: string]: unknown;
}

/** The metadata key a note is kept under. */
export const NOTE_KEY = 'jsonSchemaNote' as const;

/**
 * States `note` in the JSON Schema of the schema whose pipe holds it,
 * e.g. `inJsonSchema({not: {required: ['content', 'templateId']}})` beside
 * the check that refuses both.
 */
export const inJsonSchema = <TInput>(note: JsonSchemaNote) =>
  v.metadata<TInput, Record<typeof NOTE_KEY, JsonSchemaNote>>({
    [NOTE_KEY]: note,
  });

/**
 * Whether a body sets at least one field: the check of the PATCH bodies.
 * The document states it as `minProperties: 1` with one of the body's
 * fields required.
 */
export const hasSomeField = <T extends object>(body: T): boolean =>
  Object.values(body).some((value) => value !== undefined);
