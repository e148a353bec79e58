/**
 * Infrastructure. Construct ids from declared names: `lists` → `Lists`,
 * `signupPages` → `Signuppages`, `INVALID_API_KEY` → `InvalidApiKey`. The
 * ids are part of every logical ID, so this rule never changes.
 */
export const constructId = (name: string): string =>
  name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
