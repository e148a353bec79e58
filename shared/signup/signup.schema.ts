/**
 * Schemas of the sign-up page endpoints: creation, change, the list's query.
 */
import * as v from 'valibot';
import { FieldKey } from '../fields/field.schema.ts';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  Id,
  lineText,
  multilineText,
  PageQuery,
  requiredName,
} from '../validation.ts';
import { SIGNUP_PAGE_STATUSES } from './model.ts';
import { THEMES } from './page-model.ts';

/** Longest pasted HTML, in UTF-8 bytes (before sanitizing). */
export const MAX_PASTED_HTML_BYTES = 100_000;

/** Slugs no page may take: they name, or may one day name, our own paths. */
export const RESERVED_SLUGS = [
  'admin',
  'api',
  'assets',
  'confirm',
  'favicon.ico',
  'health',
  'login',
  'p',
  'preview',
  'public',
  'robots.txt',
  'signup',
  'static',
  'unsubscribe',
  'www',
] as const;

/** 1 to 64 characters: lower-case letters, digits and inner hyphens. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** A page's slug as a client sends it. */
export const Slug = v.pipe(
  v.string('must be a string'),
  v.regex(
    SLUG_PATTERN,
    'must be 1 to 64 lower-case letters, digits or hyphens, starting and ending with a letter or digit',
  ),
  v.check(
    (slug) => !slug.includes('--'),
    'must not contain two hyphens in a row',
  ),
  inJsonSchema({ not: { pattern: '--' } }),
  v.check(
    (slug) => !(RESERVED_SLUGS as readonly string[]).includes(slug),
    `is reserved (${RESERVED_SLUGS.join(', ')})`,
  ),
  inJsonSchema({ not: { enum: RESERVED_SLUGS } }),
);

const themeNames = THEMES.map((theme) => theme.name);

const Theme = v.picklist(
  themeNames,
  `must be one of ${themeNames.join(', ')} (GET /signup-pages/themes)`,
);

const PastedHtml = v.pipe(
  multilineText(MAX_PASTED_HTML_BYTES),
  v.minLength(1, 'must not be empty'),
);

const Headline = v.pipe(
  lineText(800),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(200, 'must be at most 200 characters'),
);
const Intro = v.pipe(
  multilineText(8_000),
  v.maxLength(2_000, 'must be at most 2000 characters'),
);
const ConsentText = v.pipe(
  multilineText(4_000),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(1_000, 'must be at most 1000 characters'),
);
const SubmitLabel = v.pipe(
  lineText(160),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(40, 'must be at most 40 characters'),
);
const SuccessMessage = v.pipe(
  multilineText(2_000),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(500, 'must be at most 500 characters'),
);

const Fields = v.strictObject(
  {
    firstName: v.optional(v.boolean('must be true or false')),
    lastName: v.optional(v.boolean('must be true or false')),
  },
  'only firstName and lastName can be asked besides the email (always asked)',
);

/**
 * Most custom fields one page asks: a form stays short, and the values of
 * one sign-up stay far below a contact's 10,000 bytes (10 text values of
 * 255 characters take at most about 8 KB as JSON).
 */
export const MAX_ASKED_FIELDS = 10;

/** One custom field a page asks, as a client gives it. */
const AskedFieldInput = v.strictObject(
  {
    key: v.pipe(
      FieldKey,
      v.description('The key of a field of the organization (see /fields)'),
    ),
    required: v.optional(
      v.pipe(
        v.boolean('must be true or false'),
        v.description(
          'Whether a sign-up must give a value (a boolean field: must tick its box); default false',
        ),
      ),
      false,
    ),
    label: v.optional(
      v.pipe(
        requiredName(100),
        v.description(
          "The page's own label for it; the field's label if omitted",
        ),
      ),
    ),
  },
  'takes key, required and label only',
);

/** `customFields` of a page write: what the form asks after the names. */
export const AskedFieldsInput = v.pipe(
  v.array(AskedFieldInput, 'must be an array of {key, required, label}'),
  v.maxLength(MAX_ASKED_FIELDS, `must name at most ${MAX_ASKED_FIELDS} fields`),
  v.description(
    `The custom fields the form asks after the names, in order (at most ${MAX_ASKED_FIELDS}, each once): each the key of a field of the organization (400 naming \`customFields.<i>.key\` otherwise). A themed page only. Given in a PATCH, it replaces the list; \`[]\` asks none.`,
  ),
);
export type AskedFieldsInput = v.InferOutput<typeof AskedFieldsInput>;

/**
 * The rules between a page's sources, in JSON Schema: a theme or pasted
 * HTML, not both; and a pasted page says and asks what its HTML does, so
 * it takes no `consentText`, `fields` or `customFields` (refused by
 * signup-pages.ts).
 */
const ONE_SOURCE = {
  theme: { properties: { html: false } },
  html: {
    properties: { consentText: false, fields: false, customFields: false },
  },
};

/** What a page says and asks; every part optional (defaults apply). */
const ContentEntries = {
  headline: v.optional(Headline),
  intro: v.optional(Intro),
  fields: v.optional(Fields),
  customFields: v.optional(AskedFieldsInput),
  consentText: v.optional(ConsentText),
  submitLabel: v.optional(SubmitLabel),
  successMessage: v.optional(SuccessMessage),
};

/** POST /signup-pages. */
export const CreateSignupPageBody = v.pipe(
  v.object({
    name: requiredName(100),
    listId: Id,
    slug: v.optional(Slug),
    theme: v.optional(Theme),
    html: v.optional(PastedHtml),
    ...ContentEntries,
  }),
  v.forward(
    v.check(
      (body) => body.theme === undefined || body.html === undefined,
      'give either theme or html, not both',
    ),
    ['html'],
  ),
  inJsonSchema({ dependentSchemas: ONE_SOURCE }),
  v.forward(
    v.check(
      (body) => body.theme !== undefined || body.html !== undefined,
      'give a theme (GET /signup-pages/themes) or your own html',
    ),
    ['theme'],
  ),
  inJsonSchema({ anyOf: [{ required: ['theme'] }, { required: ['html'] }] }),
);
export type CreateSignupPageInput = v.InferOutput<typeof CreateSignupPageBody>;

/** PATCH /signup-pages/{pageId}: at least one field. */
export const UpdateSignupPageBody = v.pipe(
  v.object({
    name: v.optional(requiredName(100)),
    listId: v.optional(Id),
    slug: v.optional(Slug),
    theme: v.optional(Theme),
    html: v.optional(PastedHtml),
    ...ContentEntries,
  }),
  v.forward(
    v.check(
      (body) => body.theme === undefined || body.html === undefined,
      'give either theme or html, not both',
    ),
    ['html'],
  ),
  inJsonSchema({ dependentSchemas: ONE_SOURCE }),
  v.check(hasSomeField, 'give at least one field to change'),
);
export type UpdateSignupPageInput = v.InferOutput<typeof UpdateSignupPageBody>;

/** GET /signup-pages. */
export const SignupPageQuery = v.object({
  ...PageQuery.entries,
  search: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.maxLength(100, 'search must be at most 100 characters'),
    ),
  ),
  status: v.optional(
    v.picklist(
      SIGNUP_PAGE_STATUSES,
      `status must be one of ${SIGNUP_PAGE_STATUSES.join(', ')}`,
    ),
  ),
  listId: v.optional(Id),
});
export type SignupPageQueryInput = v.InferOutput<typeof SignupPageQuery>;
