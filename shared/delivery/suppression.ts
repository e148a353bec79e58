/**
 * Suppression: an address that bounced for good or complained is never
 * mailed again by this organization, by any path. The suppression item is
 * the rule every send checks; the contacts of that address, in every list
 * of the organization, become `bounced` or `complained`, their list and
 * tag counters moving with them.
 */
import { changeContact, withStatus } from '../audience/contact-changes.ts';
import { SUPPRESSED_STATUS } from '../audience/suppressed.ts';
import { NotFoundError } from '../errors.ts';
import type { DeliveryDeps as Deps, Suppression } from './ports.ts';

/** Lists are read a page at a time. */
const LIST_PAGE = 100;

/**
 * Suppresses an address in an organization and moves each of its contacts
 * to the suppression's status. The first reason stays (a complaint after a
 * bounce changes nothing), and a contact already bounced or complained
 * stays as it is. Idempotent on every step.
 */
export const suppressAddress = async (
  deps: Pick<Deps, 'delivery' | 'lists' | 'contacts' | 'clock'>,
  orgId: string,
  suppression: Suppression,
): Promise<void> => {
  await deps.delivery.suppress(orgId, suppression);
  const stored =
    (await deps.delivery.suppressions(orgId, [suppression.email])).get(
      suppression.email,
    ) ?? suppression;
  const status = SUPPRESSED_STATUS[stored.reason];

  for (let page = 1; ; page++) {
    const lists = await deps.lists.page(orgId, { page, limit: LIST_PAGE });
    for (const list of lists.items) {
      try {
        await changeContact(
          deps,
          orgId,
          () => deps.contacts.get(orgId, list.id, suppression.email),
          (contact, now) =>
            contact.status === 'bounced' || contact.status === 'complained'
              ? contact
              : withStatus(contact, status, now),
        );
      } catch (error) {
        // Not in this list.
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
    if (page * LIST_PAGE >= lists.total) break;
  }
};
