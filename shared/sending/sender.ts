/**
 * Who signs a message. The address book's default identity signs only once
 * the organization has proved the domain it is on; until then mail goes out
 * From the application's own address (the organization's sender name as
 * display name, its address in Reply-To). Addresses nobody may choose are
 * refused when they are set.
 */
import { type CodeOf, RuleViolationError, ValidationError } from '../errors.ts';
import { tenantNameOf } from './isolation.ts';
import {
  hostOf,
  type Identity,
  type IdentityBook,
  isOnDomain,
  isVerified,
  type SendingDomain,
  selfAndParents,
} from './model.ts';
import type { SendingDeps as Deps } from './ports.ts';

// Printable ASCII: a name beyond it is encoded (RFC 2047), as SES requires.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// RFC 2047 caps an encoded word at 75 characters: `=?UTF-8?B?` and `?=`
// take 12, leaving 63 for base64, which holds 45 bytes (60 characters).
const ENCODED_WORD_BYTES = 45;

/** One RFC 2047 encoded word: UTF-8, base64 ("B"). */
const encodedWord = (text: string) =>
  `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;

/**
 * A display name as it stands in a header: printable ASCII is quoted, with
 * a backslash before `"` and `\` (RFC 5322); anything beyond ASCII is
 * encoded as RFC 2047 encoded words, as SES requires: UTF-8 in base64,
 * split between code points into words of at most 75 characters (a reader
 * joins adjacent encoded words). Written here rather than with libmime,
 * which brings iconv-lite's ~480 KB of charsets into every function that
 * names a sender, for this one encoding (see "Cold starts" in the README);
 * the tests decode our words with libmime.
 */
export const displayName = (name: string): string => {
  if (PRINTABLE_ASCII.test(name)) return `"${name.replace(/["\\]/g, '\\$&')}"`;
  const words: string[] = [];
  let word = '';
  // for…of walks code points: a character is never cut in two.
  for (const char of name) {
    if (Buffer.byteLength(word + char, 'utf8') > ENCODED_WORD_BYTES) {
      words.push(encodedWord(word));
      word = '';
    }
    word += char;
  }
  if (word) words.push(encodedWord(word));
  return words.join(' ');
};

/** A From header: `name <address>`, or the bare address without a name. */
export const formatSender = (
  identity: Pick<Identity, 'senderEmail' | 'senderName'>,
) =>
  identity.senderName
    ? `${displayName(identity.senderName)} <${identity.senderEmail}>`
    : identity.senderEmail;

/** The default identity of a book, if any. */
export const defaultIdentityOf = (book: IdentityBook): Identity | undefined =>
  book.identities.find((identity) => identity.id === book.defaultId);

/** The From, the Reply-To and the tenant of every send to contacts. */
export interface Sender {
  from: string;
  /** The organization's own address while mail goes out From the application's. */
  replyTo?: string;
  tenantName?: string;
}

/**
 * What really goes out (`effectiveSender` is its From):
 * 1. the default identity, when it is on one of the organization's verified
 *    domains (or a subdomain) and the provider does not pause the
 *    organization; the tenant goes with it once the isolation is
 *    provisioned (SES sends through a tenant only with its identities);
 * 2. otherwise the application address, with the default identity's name
 *    as display name and its address as Reply-To (no tenant): while paused,
 *    only test sends go out, and the spec sends them under the application
 *    address, never as the paused organization's domain;
 * 3. the bare application address when the book is empty.
 */
export const senderOf = (facts: {
  orgId: string;
  book: IdentityBook;
  domains: SendingDomain[];
  provisioned: boolean;
  /** The provider suspended the organization (tenant DISABLED). */
  paused?: boolean;
  appFromAddress: string;
  /** The identity that signs (a campaign's); the default when absent. */
  identityId?: string | null;
}): Sender => {
  const identity =
    (facts.identityId &&
      facts.book.identities.find((i) => i.id === facts.identityId)) ||
    defaultIdentityOf(facts.book);
  if (!identity) return { from: facts.appFromAddress };
  const onOwnDomain =
    !facts.paused &&
    facts.domains.some(
      (d) => isVerified(d) && isOnDomain(identity.senderEmail, d.domain),
    );
  if (onOwnDomain) {
    return {
      from: formatSender(identity),
      ...(facts.provisioned ? { tenantName: tenantNameOf(facts.orgId) } : {}),
    };
  }
  return {
    from: formatSender({
      senderEmail: facts.appFromAddress,
      senderName: identity.senderName,
    }),
    replyTo: identity.senderEmail,
  };
};

const refused = (field: string, message: string, code: CodeOf<400>) =>
  new ValidationError(message, [{ field, message }], { code });

/**
 * The sender address rules, checked whenever an address is set:
 * 1. never on the application's own domain (that of `appFromAddress`) or
 *    one of its subdomains;
 * 2. never on a domain (or under a domain) another organization proved;
 * 3. once the organization has a verified domain, on one of them (or a
 *    subdomain): the 400 names both.
 * Before any domain is verified an address is otherwise set freely: mail
 * then goes out From the application address, this one in Reply-To.
 *
 * @param field the request field the address came in, named by the 400
 */
export const checkSenderAddress = async (
  deps: Pick<Deps, 'domains' | 'endpoints'>,
  orgId: string,
  email: string,
  field = 'senderEmail',
): Promise<void> => {
  // 1. The application's own domain.
  const host = hostOf(email);
  const appDomain = hostOf(deps.endpoints.appFromAddress);
  if (isOnDomain(email, appDomain)) {
    throw refused(
      field,
      `${email} is on the application's own domain ${appDomain}: choose an address of your organization`,
      'sender.applicationDomain',
    );
  }
  // 2. A domain another organization proved, the address's or a parent's.
  const owners = await Promise.all(
    selfAndParents(host).map((name) => deps.domains.owner(name)),
  );
  if (owners.some((owner) => owner && owner.orgId !== orgId)) {
    throw refused(
      field,
      `${email} is on a domain another organization has proved: choose an address on a domain of yours`,
      'sender.domainOfAnotherOrganization',
    );
  }
  // 3. Once a domain is verified, on a verified domain.
  const verified = (await deps.domains.list(orgId)).filter(isVerified);
  if (verified.length === 0) return;
  if (verified.some((domain) => isOnDomain(email, domain.domain))) return;
  const names = verified.map((domain) => domain.domain).join(', ');
  throw new RuleViolationError(
    'sender.notOnVerifiedDomain',
    `${email} is not on the verified domain ${names} (or one of its subdomains)`,
  );
};

/**
 * The From and Reply-To of a test send: those of every send (see
 * `senderOf`), without the tenant, so a test stays available while the
 * provider pauses the organization (it then goes out under the application
 * address, as the last known isolation state says). Reads the
 * organization, its domains and its address book only; writes nothing.
 */
export const testSenderOf = async (
  deps: Pick<Deps, 'identities' | 'endpoints' | 'organizations'>,
  orgId: string,
): Promise<Omit<Sender, 'tenantName'>> => {
  const [org, { domains, book }] = await Promise.all([
    deps.organizations.get(orgId),
    deps.identities.getProfile(orgId),
  ]);
  const { tenantName: _, ...sender } = senderOf({
    orgId,
    book,
    domains,
    provisioned: false,
    paused: org?.isolation?.sendingStatus === 'DISABLED',
    appFromAddress: deps.endpoints.appFromAddress,
  });
  return sender;
};
