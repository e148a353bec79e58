/**
 * The variables each rendering context knows. A variable a template uses
 * outside its context's set is reported in `unknownVariables`: at send time
 * it would render empty.
 */

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

/** The variables of `used` that `known` does not provide, sorted. */
export const unknownVariables = (
  used: readonly string[],
  known: readonly string[],
): string[] => used.filter((name) => !known.includes(name)).sort();
