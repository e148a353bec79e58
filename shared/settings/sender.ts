/**
 * Who signs a message: the address book's default identity, or the
 * application's own address when the book is empty (spec, rule 5).
 */
import { RuleViolationError } from '../errors.ts';
import { tenantNameOf } from '../sending/isolation.ts';
import {
  type Identity,
  type IdentityBook,
  isOnDomain,
  isVerified,
  type SendingDomain,
} from './model.ts';

/** A From header: the display name quoted, per RFC 5322. */
export const formatSender = (
  identity: Pick<Identity, 'senderEmail' | 'senderName'>,
) =>
  identity.senderName
    ? `"${identity.senderName.replace(/["\\]/g, '\\$&')}" <${identity.senderEmail}>`
    : identity.senderEmail;

/** The default identity of a book, if any. */
export const defaultIdentityOf = (book: IdentityBook): Identity | undefined =>
  book.identities.find((identity) => identity.id === book.defaultId);

/** What really goes out: the default identity, or the application address. */
export const effectiveSenderOf = (
  book: IdentityBook,
  appFromAddress: string,
) => {
  const identity = defaultIdentityOf(book);
  return identity ? formatSender(identity) : appFromAddress;
};

/** The From and the tenant of a send to contacts. */
export interface Sender {
  from: string;
  tenantName?: string;
}

/**
 * The From of a send to contacts: the default identity, or the application
 * address. The organization's tenant goes with it when the isolation is
 * provisioned and the From is on one of the organization's verified domains:
 * SES sends through a tenant only with the tenant's own identities.
 */
export const senderOf = (facts: {
  orgId: string;
  book: IdentityBook;
  domains: SendingDomain[];
  provisioned: boolean;
  appFromAddress: string;
}): Sender => {
  const identity = defaultIdentityOf(facts.book);
  const onOwnDomain =
    identity !== undefined &&
    facts.domains.some(
      (d) => isVerified(d) && isOnDomain(identity.senderEmail, d.domain),
    );
  return {
    from: effectiveSenderOf(facts.book, facts.appFromAddress),
    ...(facts.provisioned && onOwnDomain
      ? { tenantName: tenantNameOf(facts.orgId) }
      : {}),
  };
};

/**
 * The sender address rule: once the organization has a verified domain,
 * every address must be on one (or a subdomain). The 400 names both.
 */
export const checkSenderAddress = (email: string, domains: SendingDomain[]) => {
  const verified = domains.filter(isVerified);
  if (verified.length === 0) return;
  if (verified.some((domain) => isOnDomain(email, domain.domain))) return;
  const names = verified.map((domain) => domain.domain).join(', ');
  throw new RuleViolationError(
    'sender.notOnVerifiedDomain',
    `${email} is not on the verified domain ${names} (or one of its subdomains)`,
  );
};
