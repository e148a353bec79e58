/**
 * What a suppression means to the audience: a suppressed address — it
 * bounced for good or complained (as SES reported, or as an import or a
 * call said), or the organization put it on its list by hand or brought it
 * from another provider — takes the suppression's status in every list of
 * the organization, is never subscribed while suppressed, and is never
 * sent anything. The suppression item is the rule every send checks; the
 * contacts of the address follow it, their list and tag counters moving
 * with them.
 */
import { NotFoundError } from '../errors.ts';
import { changeContact, withStatus } from './contact-changes.ts';
import type { Contact, ContactStatus, ContactWritePath } from './model.ts';
import type {
  AudienceDeps as Deps,
  Suppression,
  SuppressionReason,
} from './ports.ts';

/** The statuses a suppression gives. */
export type SuppressedStatus = 'bounced' | 'complained' | 'unsubscribed';

/**
 * The contact status a suppression gives: what the mailbox said for a
 * bounce or a complaint; `unsubscribed` for an address the organization
 * chose not to mail (by hand, from another provider, an erased person).
 */
export const SUPPRESSED_STATUS = {
  bounce: 'bounced',
  complaint: 'complained',
  manual: 'unsubscribed',
  imported: 'unsubscribed',
  erased: 'unsubscribed',
} as const satisfies Record<SuppressionReason, SuppressedStatus>;

/** The suppression a contact status stands for, where it stands for one. */
export const SUPPRESSION_OF_STATUS: Partial<
  Record<ContactStatus, SuppressionReason>
> = {
  bounced: 'bounce',
  complained: 'complaint',
};

/** The status of suppressed addresses among these, by email. */
export const suppressedStatuses = async (
  deps: Pick<Deps, 'delivery'>,
  orgId: string,
  emails: readonly string[],
): Promise<Map<string, SuppressedStatus>> => {
  const found = await deps.delivery.suppressions(orgId, emails);
  return new Map(
    [...found].map(([email, { reason }]) => [email, SUPPRESSED_STATUS[reason]]),
  );
};

/** Lists are read a page at a time. */
const LIST_PAGE = 100;

/** Writes in flight at once: an import's hundreds of addresses in seconds. */
const PARALLEL_WRITES = 16;

/** Runs `work` on every item, `PARALLEL_WRITES` at a time. */
const inSlices = async <T>(
  items: readonly T[],
  work: (item: T) => Promise<void>,
): Promise<void> => {
  for (let i = 0; i < items.length; i += PARALLEL_WRITES) {
    await Promise.all(items.slice(i, i + PARALLEL_WRITES).map(work));
  }
};

/**
 * A contact of a suppressed address as the suppression leaves it: a
 * bounced or complained one stays so (the first reason stays); any other
 * takes the suppression's status, and loses a confirmation link it holds
 * (an unsubscribed address that signed up again must not confirm).
 */
export const followSuppression = (
  contact: Contact,
  status: SuppressedStatus,
  now: string,
): Contact => {
  if (contact.status === 'bounced' || contact.status === 'complained') {
    return contact;
  }
  if (contact.status !== status) return withStatus(contact, status, now);
  if (contact.confirmationNonce === undefined) return contact;
  const { confirmationNonce: _, ...rest } = contact;
  return { ...rest, updatedAt: now };
};

/**
 * Suppresses addresses in an organization and moves each of their
 * contacts, in every list, to the suppression's status. The first reason
 * stays (a complaint after a bounce changes nothing), and a contact already
 * bounced or complained stays as it is. Idempotent on every step, so a
 * call cut short is completed by calling again; each list is read once for
 * all the addresses, and contact writes go 16 at a time. Answers the
 * addresses suppressed by this call (the others were already).
 */
export const suppressAddresses = async (
  deps: Pick<Deps, 'delivery' | 'lists' | 'contacts' | 'clock'>,
  orgId: string,
  suppressions: readonly Suppression[],
): Promise<string[]> => {
  if (suppressions.length === 0) return [];
  // What each address has now: the reason that stayed.
  const { added, stored } = await deps.delivery.suppress(orgId, suppressions);
  const statusOf = (email: string) => {
    const reason = stored.get(email)?.reason;
    return reason && SUPPRESSED_STATUS[reason];
  };
  const emails = [...new Set(suppressions.map((s) => s.email))];
  // The path the contacts' writes remember: the call or the import that
  // said so, else SES's report.
  const pathOf = (email: string): ContactWritePath => {
    const source = suppressions.find((s) => s.email === email)?.source;
    return source === 'import' || source === 'api' ? source : 'delivery';
  };
  const changes = (contact: Contact) => {
    const status = statusOf(contact.email);
    return (
      status !== undefined &&
      followSuppression(contact, status, contact.updatedAt) !== contact
    );
  };

  for (let page = 1; ; page++) {
    const lists = await deps.lists.page(orgId, { page, limit: LIST_PAGE });
    for (const list of lists.items) {
      const found = await deps.contacts.getMany(orgId, list.id, emails);
      const toMove = [...found.values()].filter(changes);
      await inSlices(toMove, async ({ email }) => {
        const status = statusOf(email);
        if (!status) return;
        try {
          await changeContact(
            deps,
            orgId,
            () => deps.contacts.get(orgId, list.id, email),
            (current, now) => followSuppression(current, status, now),
            pathOf(email),
          );
        } catch (error) {
          // Deleted with its list meanwhile.
          if (!(error instanceof NotFoundError)) throw error;
        }
      });
    }
    if (page * LIST_PAGE >= lists.total) break;
  }
  return added;
};

/** {@link suppressAddresses} of one address. */
export const suppressAddress = (
  deps: Pick<Deps, 'delivery' | 'lists' | 'contacts' | 'clock'>,
  orgId: string,
  suppression: Suppression,
): Promise<void> =>
  suppressAddresses(deps, orgId, [suppression]).then(() => undefined);
