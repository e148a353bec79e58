/**
 * What a suppression means to the audience: an address that bounced for
 * good or complained takes that status in every list of the organization,
 * is never subscribed again, and is never sent anything again.
 */
import type { ContactStatus } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';

/** The contact status a suppression gives. */
export const SUPPRESSED_STATUS = {
  bounce: 'bounced',
  complaint: 'complained',
} as const satisfies Record<'bounce' | 'complaint', ContactStatus>;

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
