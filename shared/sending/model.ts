/**
 * Sending model: the address book of sender identities, sending domains,
 * and the address rules both share (hosts, subdomains, verification).
 */
import type { DkimStatus, MailFromStatus } from './provider.ts';

/** A sender identity (address book entry). */
export interface Identity {
  id: string;
  senderEmail: string;
  senderName: string;
  createdAt: string;
}

/** The address book: its identities, its default, its version. */
export interface IdentityBook {
  identities: Identity[];
  /** The default identity; undefined only when the book is empty. */
  defaultId?: string;
  /** Optimistic-lock version of the whole book. */
  version: number;
}

/** A sending domain as an organization declared it (last known state). */
export interface SendingDomain {
  id: string;
  domain: string;
  createdAt: string;
  dkimStatus: DkimStatus;
  mailFromDomain: string | null;
  mailFromStatus: MailFromStatus | null;
  /** Proved once by the challenge TXT; lost only to a transfer. */
  ownershipProved: boolean;
  /**
   * The provider's identity was there before this declaration (another
   * organization declared the name first, or it was made outside the
   * service): its statuses are not this organization's to see until it
   * proves ownership.
   */
  declaredAfterAnother: boolean;
  lastCheckedAt: string | null;
}

/** True when DKIM succeeded and ownership is proved. */
export const isVerified = (
  domain: Pick<SendingDomain, 'dkimStatus' | 'ownershipProved'>,
): boolean => domain.dkimStatus === 'SUCCESS' && domain.ownershipProved;

/** The domain part of an address, lower-cased. */
export const hostOf = (email: string): string =>
  email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/** `a.b.example.com` → `a.b.example.com`, `b.example.com`, `example.com`. */
export const selfAndParents = (host: string): string[] => {
  const labels = host.split('.');
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
};

/** True when `email` is on `domain` or one of its subdomains. */
export const isOnDomain = (email: string, domain: string): boolean => {
  const host = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return host === domain || host.endsWith(`.${domain}`);
};
