/**
 * Names typed on a public sign-up form are a stranger's text. They are
 * never merged into the confirmation email (see `Contact.signupNames`), and
 * a name that carries a way to reach someone — a web address (linkify-it,
 * with the full list of top-level domains), `www.`, an `@`, or a run of
 * digits like a phone number — is refused on the form: such a name is a
 * message, not a name, and would reach the organization's later mail.
 */
import LinkifyIt from 'linkify-it';
import tlds from 'tlds';

const links = new LinkifyIt().tlds(tlds);

/** Six digits or more, spaced by blanks, dots, dashes or parentheses. */
const PHONE_LIKE = /\d(?:[\s().\-/]*\d){5,}/;

/** Why a name typed on a form is refused, or undefined when it is a name. */
export const contactInName = (name: string): string | undefined => {
  if (name.includes('@')) return 'an @';
  if (/www\./i.test(name)) return 'www.';
  if (links.test(name)) return 'a web address';
  if (PHONE_LIKE.test(name)) return 'a phone number';
  return undefined;
};
