/**
 * The variables each rendering context knows. A variable a template uses
 * outside its context's set is reported in `unknownVariables`: at send time
 * it would render empty. Custom fields are a namespace of their own,
 * `fields.<key>`: known when the organization defines the key.
 */

/** The namespace of custom field values: `{{ fields.<key> }}`. */
export const FIELDS = 'fields';

/** Merge values taken from the contact. */
export const CONTACT_VARIABLES = ['firstName', 'lastName', 'email'] as const;

/** Campaigns, sequence steps, template previews and test sends. */
export const MESSAGE_VARIABLES = [
  ...CONTACT_VARIABLES,
  'unsubscribeUrl',
  'topicOptOutUrl',
  'postalAddress',
  'currentYear',
] as const;

/** The double opt-in confirmation email (no unsubscribe variable there). */
export const OPTIN_VARIABLES = [
  'confirmationUrl',
  ...CONTACT_VARIABLES,
  'postalAddress',
  'currentYear',
] as const;

/**
 * The variables of `used` that `known` does not provide, sorted. With
 * `fields` (a message context: campaigns, steps, previews), the `fields`
 * namespace is known, and each key it reads that the organization does not
 * define is reported as `fields.<key>`.
 */
export const unknownVariables = (
  used: readonly string[],
  known: readonly string[],
  fields?: { used: readonly string[]; defined: ReadonlySet<string> },
): string[] =>
  [
    ...used.filter(
      (name) => !known.includes(name) && !(fields && name === FIELDS),
    ),
    ...(fields?.used ?? [])
      .filter((key) => !fields?.defined.has(key))
      .map((key) => `${FIELDS}.${key}`),
  ].sort();

/**
 * A value for every known variable: content is rendered with them when it
 * is saved, so content that parses but cannot render (a loop past the
 * engine's limits) is refused then, not when an email should go out.
 */
export const SAMPLE_VALUES: Readonly<
  Record<(typeof MESSAGE_VARIABLES | typeof OPTIN_VARIABLES)[number], string>
> = {
  firstName: 'Ann',
  lastName: 'Reader',
  email: 'ann.reader@example.com',
  unsubscribeUrl: 'https://example.com/public/unsubscribe?token=sample',
  topicOptOutUrl: 'https://example.com/public/topic-opt-out?token=sample',
  confirmationUrl: 'https://example.com/public/confirm?token=sample',
  postalAddress: '1 Main Street, Springfield',
  currentYear: '2026',
};
