/**
 * What a suppression means to the audience: an address that bounced for
 * good or complained — as SES reported, or as a bulk import said — takes
 * that status in every list of the organization, is never subscribed
 * again, and is never sent anything again. The suppression item is the rule
 * every send checks; the contacts of the address follow it, their list and
 * tag counters moving with them.
 */
import { NotFoundError } from '../errors.ts';
import { changeContact, withStatus } from './contact-changes.ts';
import type { ContactStatus, ContactWritePath } from './model.ts';
import type {
  AudienceDeps as Deps,
  Suppression,
  SuppressionReason,
} from './ports.ts';

/** The contact status a suppression gives. */
export const SUPPRESSED_STATUS = {
  bounce: 'bounced',
  complaint: 'complained',
} as const satisfies Record<'bounce' | 'complaint', ContactStatus>;

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
): Promise<Map<string, 'bounced' | 'complained'>> => {
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
 * Suppresses addresses in an organization and moves each of their
 * contacts, in every list, to the suppression's status. The first reason
 * stays (a complaint after a bounce changes nothing), and a contact already
 * bounced or complained stays as it is. Idempotent on every step, so a
 * call cut short is completed by calling again; each list is read once for
 * all the addresses, and writes go 16 at a time.
 */
export const suppressAddresses = async (
  deps: Pick<Deps, 'delivery' | 'lists' | 'contacts' | 'clock'>,
  orgId: string,
  suppressions: readonly Suppression[],
): Promise<void> => {
  if (suppressions.length === 0) return;
  await inSlices(suppressions, (suppression) =>
    deps.delivery.suppress(orgId, suppression),
  );
  // The reason that stayed, for each address.
  const stored = await deps.delivery.suppressions(
    orgId,
    suppressions.map((s) => s.email),
  );
  const statusOf = (email: string) => {
    const reason =
      stored.get(email)?.reason ??
      suppressions.find((s) => s.email === email)?.reason;
    return reason && SUPPRESSED_STATUS[reason];
  };
  const emails = [...new Set(suppressions.map((s) => s.email))];
  // The path the contacts' writes remember: the call or the import that
  // said so, else SES's report.
  const pathOf = (email: string): ContactWritePath =>
    suppressions.find((s) => s.email === email)?.source ?? 'delivery';

  for (let page = 1; ; page++) {
    const lists = await deps.lists.page(orgId, { page, limit: LIST_PAGE });
    for (const list of lists.items) {
      const found = await deps.contacts.getMany(orgId, list.id, emails);
      const toMove = [...found].filter(
        ([email, contact]) =>
          statusOf(email) &&
          contact.status !== 'bounced' &&
          contact.status !== 'complained',
      );
      await inSlices(toMove, async ([email]) => {
        const status = statusOf(email);
        if (!status) return;
        try {
          await changeContact(
            deps,
            orgId,
            () => deps.contacts.get(orgId, list.id, email),
            (current, now) =>
              current.status === 'bounced' || current.status === 'complained'
                ? current
                : withStatus(current, status, now),
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
};

/** {@link suppressAddresses} of one address. */
export const suppressAddress = (
  deps: Pick<Deps, 'delivery' | 'lists' | 'contacts' | 'clock'>,
  orgId: string,
  suppression: Suppression,
): Promise<void> => suppressAddresses(deps, orgId, [suppression]);
