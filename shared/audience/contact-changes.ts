/**
 * Application logic shared by every change of a contact: the status rules
 * and the optimistic-lock retry loop. The events a change implies come from
 * the committed write (`facts.ts`, fed by the table's change stream).
 */
import { ConflictError, NotFoundError, RuleViolationError } from '../errors.ts';
import { retryOnConflict } from '../retry.ts';
import type { Contact, ContactStatus, ContactWritePath } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';

/**
 * Reads a contact, applies `change`, and stores it conditionally on the
 * version read, remembering the path that wrote it (`origin`); on a
 * concurrent change, reads again and re-applies.
 */
export const changeContact = async (
  deps: Pick<Deps, 'contacts' | 'clock'>,
  orgId: string,
  read: () => Promise<Contact | undefined>,
  change: (contact: Contact, now: string) => Contact,
  origin: ContactWritePath,
): Promise<{ before: Contact; after: Contact }> => {
  return retryOnConflict(async (retryable) => {
    const before = await read();
    if (!before) throw new NotFoundError('contact.notFound', 'No such contact');
    const now = deps.clock.now().toISOString();
    const after = change(before, now);
    if (after === before) return { before, after };
    await deps.contacts
      .save(orgId, [{ before, after, origin }])
      .catch(retryable);
    return { before, after };
  });
};

/**
 * The status rules of every status change (PATCH, unsubscribe, resubscribe,
 * confirmation). Returns the same object when nothing changes.
 */
export const withStatus = (
  contact: Contact,
  status: ContactStatus,
  now: string,
): Contact => {
  if (contact.status === status) return contact;
  if (status === 'pending') {
    throw new RuleViolationError(
      'contact.pendingIsSetByOptin',
      `${contact.email} cannot be set back to pending: only double opt-in makes a contact pending`,
    );
  }
  if (
    status === 'subscribed' &&
    (contact.status === 'bounced' || contact.status === 'complained')
  ) {
    throw new ConflictError(
      'contact.cannotResubscribe',
      `${contact.email} is ${contact.status}: an address that bounced or complained cannot be subscribed again`,
    );
  }
  const { confirmationNonce: _, ...rest } = contact;
  return {
    ...rest,
    status,
    updatedAt: now,
    ...(status === 'subscribed' ? { joinedAt: contact.joinedAt ?? now } : {}),
    ...(status === 'unsubscribed' ? { unsubscribedAt: now } : {}),
  };
};

/**
 * A status change a caller asks for (PATCH, resubscribe): the status rules,
 * and one more — a pending contact becomes subscribed only by confirming
 * its link (409 `contact.awaitingConfirmation`), whichever call asks.
 */
export const requestStatus = (
  contact: Contact,
  status: ContactStatus,
  now: string,
): Contact => {
  if (contact.status === 'pending' && status === 'subscribed') {
    throw new ConflictError(
      'contact.awaitingConfirmation',
      `${contact.email} has not confirmed the subscription yet: only its confirmation link subscribes it`,
    );
  }
  return withStatus(contact, status, now);
};
