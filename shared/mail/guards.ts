/**
 * The guards of every send to contacts, a campaign's batch or a sequence
 * step's mail: may this organization send now (its readiness blockers,
 * which refuse and which only hold), and how much of its rolling 24-hour
 * quota is left. Test sends and confirmations check readiness alone
 * (`sending/readiness.ts`): they are not counted against the quota.
 */
import type { Organization } from '../organizations/model.ts';
import { sendQuotaOf } from '../organizations/organizations.ts';
import type { Blocker } from '../sending/readiness.ts';
import type { MailDeps } from './ports.ts';

/** Why a send to contacts stops: the provider paused it, or a blocker. */
export type StopReason = 'sending_paused' | 'blocked';

/** The blockers that refuse a send (the switch holds it instead). */
export const refusingBlockers = (blockers: readonly Blocker[]): Blocker[] => {
  const real = blockers.filter(
    (b) => b !== 'sending_disabled' && b !== 'no_sender_identity',
  );
  return real.length > 0
    ? blockers.filter((b) => b !== 'sending_disabled')
    : [];
};

/** Why the organization cannot send now, if it cannot. */
export const stopReason = (
  blockers: readonly Blocker[],
): { reason: StopReason; text: string } | undefined => {
  if (blockers.includes('sending_paused')) {
    return {
      reason: 'sending_paused',
      text: 'The email provider paused the organization’s sending',
    };
  }
  const refusing = refusingBlockers(blockers);
  if (refusing.length > 0) {
    return {
      reason: 'blocked',
      text: `The organization cannot send now: ${refusing.join(', ')}`,
    };
  }
  return undefined;
};

/** The last 24 hours (this one included), as the windows' keys. */
export const last24Hours = (now: Date): string[] =>
  Array.from({ length: 24 }, (_, i) =>
    new Date(now.getTime() - i * 3_600_000).toISOString().slice(0, 13),
  );

/**
 * What may still go out in the rolling 24 hours: the organization's quota
 * less what its campaigns took on, and never above what the SES account
 * has left (GetAccount `Max24HourSend − SentLast24Hours`; -1: unlimited).
 */
export const quotaLeft = async (
  deps: Pick<MailDeps, 'sendWindows' | 'provider' | 'clock'>,
  org: Organization,
): Promise<number> => {
  const [used, account] = await Promise.all([
    deps.sendWindows.sum(org.id, last24Hours(deps.clock.now())),
    deps.provider.getAccount(),
  ]);
  const accountLeft =
    account.max24HourSend < 0
      ? Number.POSITIVE_INFINITY
      : account.max24HourSend - account.sentLast24Hours;
  return Math.max(0, Math.min(sendQuotaOf(org) - used, accountLeft));
};
