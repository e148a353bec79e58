/**
 * The guards of every send to contacts, a campaign's batch or a sequence
 * step's mail: may this organization send now (its readiness blockers,
 * which refuse and which only hold), and how much of its rolling 24-hour
 * quota is left. Test sends and confirmations check readiness alone
 * (`sending/readiness.ts`): they are not counted against the quota.
 */
import type { Organization } from '../organizations/model.ts';
import { sendQuotaOf } from '../organizations/organizations.ts';
import { guardrailText } from '../reputation/model.ts';
import type { Blocker } from '../sending/readiness.ts';
import type { MailDeps } from './ports.ts';

/**
 * Why a send to contacts stops: the provider paused it, a blocker, or our
 * reputation guardrail (which pauses and holds, never fails: the operator
 * lifts it).
 */
export type StopReason = 'sending_paused' | 'blocked' | 'reputation_paused';

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
  // The guardrail alone holds the send; with another blocker, that one
  // decides as before.
  if (
    blockers.includes('reputation_paused') &&
    refusing.every(
      (b) => b === 'reputation_paused' || b === 'no_sender_identity',
    )
  ) {
    return {
      reason: 'reputation_paused',
      text: 'Our reputation guardrail paused the organization’s sending',
    };
  }
  if (refusing.length > 0) {
    return {
      reason: 'blocked',
      text: `The organization cannot send now: ${refusing.join(', ')}`,
    };
  }
  return undefined;
};

/**
 * What a 409 `sending.blocked` adds while the reputation guardrail holds:
 * its cause and figures, under `reputation`.
 */
export const guardrailDetails = (
  org: Pick<Organization, 'guardrail'>,
): { field: string; message: string }[] =>
  org.guardrail
    ? [{ field: 'reputation', message: guardrailText(org.guardrail) }]
    : [];

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
