/**
 * Names (and custom field texts) typed on a public sign-up form are a
 * stranger's text. They are never merged into the confirmation email (see
 * `Contact.signupNames`), and a name that carries a way to reach someone —
 * a web address (linkify-it, with the full list of top-level domains),
 * `www.`, an `@`, a URL scheme, an IP address, or a run of digits like a
 * phone number — is refused on the form: such a name is a message, not a
 * name, and would reach the organization's later mail once the address is
 * confirmed. A custom text field's value is read the same way.
 *
 * The checks read the text as a reader's eye does: compatibility forms
 * folded (NFKC: full-width letters and digits, `․` and `．` become ASCII),
 * the other full stops of Unicode read as `.`, invisible format characters
 * (zero-width spaces, soft hyphens) removed, and every kind of digit and
 * dash counted. A direction override, which can show `moc.live` as
 * `evil.com`, has no place in a name and is refused.
 */
import LinkifyIt from 'linkify-it';
import tlds from 'tlds';

const links = new LinkifyIt().tlds(tlds);

/** Bidirectional embeddings, overrides and isolates. */
const DIRECTION_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/u;
/** Invisible format characters (zero-width space, soft hyphen, joiners…). */
const FORMAT_CHARACTERS = /\p{Cf}/gu;
/** Full stops of other scripts a reader takes for `.`. */
const OTHER_FULL_STOPS = /[\u3002\uff61\ufe52\u2024\u0701\u0702\u06d4]/gu;
/** Six digits or more, of any script, spaced by blanks or punctuation. */
const PHONE_LIKE = /\p{Nd}(?:[\p{Z}\p{P}\p{S}]*\p{Nd}){5,}/u;
const URL_SCHEME = /\b(?:https?|ftp|mailto|tel|sms|callto|whatsapp|tg)\s*:/iu;
const IP_ADDRESS = /\d{1,3}(?:\.\d{1,3}){3}/u;

/** The text as a reader sees it. */
const asRead = (text: string): string =>
  text
    .replace(FORMAT_CHARACTERS, '')
    .normalize('NFKC')
    .replace(OTHER_FULL_STOPS, '.');

/** Why a text typed on a form reaches someone, or undefined. */
const contactIn = (typed: string): string | undefined => {
  if (DIRECTION_CONTROLS.test(typed)) return 'a direction override';
  const text = asRead(typed);
  if (text.includes('@')) return 'an @';
  if (/www\./iu.test(text)) return 'www.';
  if (URL_SCHEME.test(text)) return 'a web address';
  if (IP_ADDRESS.test(text)) return 'a web address';
  if (links.test(text)) return 'a web address';
  if (PHONE_LIKE.test(text)) return 'a phone number';
  return undefined;
};

/** Why a name typed on a form is refused, or undefined when it is a name. */
export const contactInName = (name: string): string | undefined =>
  contactIn(name);

/**
 * Why a custom text field's value typed on a form is refused, or
 * undefined: read as a name is, since the organization's later mail may
 * merge it as it merges names (see decision 0048).
 */
export const contactInFieldText = (text: string): string | undefined =>
  contactIn(text);

/**
 * Why the names of one form are refused together: each alone, then both
 * as one line (`Call 800 55` and `5 0100` make a number).
 */
export const contactInNames = (names: readonly string[]): string | undefined =>
  contactIn(names.join(' '));

/**
 * Why an email address typed on a form is refused. Its subaddress (what
 * follows `+` before `@`) is a stranger's text that still reaches the
 * owner of the address (`victim+visit-www.evil.com@…`), and a confirmation
 * may show `{{email}}`: a web address or `www.` there is refused. The rest
 * of the address is its owner's own and is not judged (nor are digits: a
 * tag like `+2026` is common).
 */
export const contactInEmail = (email: string): string | undefined => {
  if (DIRECTION_CONTROLS.test(email)) return 'a direction override';
  const local = email.slice(0, email.lastIndexOf('@'));
  const plus = local.indexOf('+');
  if (plus < 0) return undefined;
  const tag = asRead(local.slice(plus + 1));
  if (/www\./iu.test(tag) || URL_SCHEME.test(tag)) return 'a web address';
  return links.test(tag.replaceAll(/[+_-]/gu, ' '))
    ? 'a web address'
    : undefined;
};
