/**
 * Keeping email addresses out of the activity: the text an event keeps
 * from outside (a clicked link, a sign-up's referrer, a text field value)
 * may hold the contact's address, merged by `{{email}}` or typed in. The
 * activity is kept by contact id and erased with the contact, and holds no
 * address: where one was, it reads {@link ADDRESS_MARK}.
 */

/** What stands for an address where a text carried it. */
export const ADDRESS_MARK = '[email]';

/** A text as a regular expression that matches it literally. */
const literally = (text: string): string =>
  text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `text` with each of `addresses`, as it is or URL-encoded (`%40`, either
 * case of hex digits), replaced by {@link ADDRESS_MARK}, case-insensitively.
 */
export const withoutAddresses = (
  text: string,
  addresses: readonly string[],
): string =>
  addresses
    .filter((address) => address.length > 0)
    .flatMap((address) => [address, encodeURIComponent(address)])
    .reduce(
      (scrubbed, form) =>
        scrubbed.replace(new RegExp(literally(form), 'giu'), ADDRESS_MARK),
      text,
    );
