/**
 * Application logic of SES's email events: the one service call of the
 * events consumer. Each event is recorded and counted once, and written in
 * its contact's activity; a permanent bounce or a complaint suppresses the
 * address for the organization at once (see `suppression.ts`).
 */

import { recordMailActivity } from '../activity/mail-activity.ts';
import {
  ACTIVITY_MESSAGE_KINDS,
  type ActivityMessage,
  type MailActivityType,
} from '../activity/model.ts';
import type { ActivityDeps } from '../activity/ports.ts';
import { suppressAddress } from '../audience/suppressed.ts';
import { NotFoundError, RuleViolationError } from '../errors.ts';
import { clickedLink } from '../links/public-links.ts';
import { MailboxProviders } from '../statistics/mailbox-providers.ts';
import type { MxResolver } from '../statistics/ports.ts';
import type {
  DeliveryEventRecord,
  DeliveryDeps as Deps,
  MailEventCounter,
  MailEventRecord,
  MailEventTally,
  MailSubject,
} from './ports.ts';
import { type SesEvent, tagOf } from './ses-event.ts';

/** The recipients an event is about, normalized. */
export const recipientsOf = (event: SesEvent): string[] => {
  const addresses = (() => {
    switch (event.eventType) {
      case 'Bounce':
        return event.bounce.bouncedRecipients.map((r) => r.emailAddress);
      case 'Complaint':
        return event.complaint.complainedRecipients.map((r) => r.emailAddress);
      case 'Delivery':
        return event.delivery.recipients;
      case 'DeliveryDelay':
        return event.deliveryDelay.delayedRecipients.map((r) => r.emailAddress);
      default:
        // One message per recipient: the destination is the contact.
        return event.mail.destination.slice(0, 1);
    }
  })();
  return [...new Set(addresses.map((a) => a.trim().toLowerCase()))];
};

/** When the event happened, as SES says (the message's time for a send). */
export const instantOf = (event: SesEvent): string => {
  switch (event.eventType) {
    case 'Bounce':
      return event.bounce.timestamp;
    case 'Complaint':
      return event.complaint.timestamp;
    case 'Delivery':
      return event.delivery.timestamp;
    case 'DeliveryDelay':
      return event.deliveryDelay.timestamp;
    case 'Open':
      return event.open.timestamp;
    case 'Click':
      return event.click.timestamp;
    case 'Subscription':
      return event.subscription.timestamp;
    default:
      return event.mail.timestamp;
  }
};

/**
 * The activity type of each SES event type; none for rendering failures
 * and SES's own subscription management, which our mail does not use.
 */
const ACTIVITY_OF: Partial<Record<SesEvent['eventType'], MailActivityType>> = {
  Send: 'sent',
  Delivery: 'delivered',
  DeliveryDelay: 'delayed',
  Reject: 'rejected',
  Open: 'opened',
  Click: 'clicked',
  Bounce: 'bounced',
  Complaint: 'complained',
};

/**
 * The message an event is about, as its contact's activity names it: from
 * the message's tags alone (kind, campaign, sequence or series, step);
 * none for a message of no contact (a test send) or of another kind.
 */
export const activityMessageOf = (
  event: SesEvent,
): ActivityMessage | undefined => {
  const kind = ACTIVITY_MESSAGE_KINDS.find((k) => k === tagOf(event, 'kind'));
  if (!kind) return undefined;
  const campaignId = tagOf(event, 'campaign');
  const sequenceId = tagOf(event, 'sequence');
  const step = Number(tagOf(event, 'step'));
  return {
    id: event.mail.messageId,
    kind,
    ...(campaignId ? { campaignId } : {}),
    ...(sequenceId ? { sequenceId } : {}),
    ...(Number.isSafeInteger(step) && step > 0 ? { step } : {}),
  };
};

/**
 * Writes an event in the activity of the contact its message went to (the
 * `contact` tag): one put, no read; nothing for a message of no contact.
 */
const recordActivity = async (
  deps: Pick<ActivityDeps, 'activity'>,
  orgId: string,
  event: SesEvent,
  at: string,
  recipients: readonly string[],
): Promise<void> => {
  const contactId = tagOf(event, 'contact');
  const type = ACTIVITY_OF[event.eventType];
  const message = activityMessageOf(event);
  if (!contactId || !type || !message) return;
  await recordMailActivity(
    deps,
    orgId,
    contactId,
    {
      type,
      at,
      message,
      // Less the token of our own links: a capability, never kept.
      ...(event.eventType === 'Click'
        ? { link: clickedLink(event.click.link) }
        : {}),
      ...(event.eventType === 'Bounce'
        ? { bounceType: event.bounce.bounceType }
        : {}),
    },
    // Every address of the message, the link's merged one among them.
    [...new Set([...recipients, ...event.mail.destination])],
  );
};

/** Whether an event says the address must never be mailed again. */
export const suppressionOf = (
  event: SesEvent,
): 'bounce' | 'complaint' | undefined => {
  if (event.eventType === 'Complaint') return 'complaint';
  if (event.eventType === 'Bounce' && event.bounce.bounceType === 'Permanent') {
    return 'bounce';
  }
  return undefined;
};

/**
 * Organizations known to exist, remembered a few minutes per container:
 * the events of one campaign come by the thousand, and an organization is
 * never deleted (suspended ones still get their events counted), so one
 * read in a while is enough. Only a found organization is remembered.
 */
export class KnownOrganizations {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs = 5 * 60_000,
    private readonly max = 10_000,
  ) {}

  async exists(
    deps: Pick<Deps, 'organizations' | 'clock'>,
    orgId: string,
  ): Promise<boolean> {
    const now = deps.clock.now().getTime();
    if ((this.until.get(orgId) ?? 0) > now) return true;
    if (!(await deps.organizations.get(orgId))) return false;
    if (this.until.size >= this.max) this.until.clear();
    this.until.set(orgId, now + this.ttlMs);
    return true;
  }
}

/**
 * The tally the events of one campaign or sequence step in the batch at
 * hand go to (one per subject and batch: the events consumer commits each
 * once its batch is handled, and retries the messages of one that fails).
 */
export type MailTallies = (
  orgId: string,
  subject: MailSubject,
) => MailEventTally;

/** A subject's name in a batch: its tally's key. */
export const subjectKey = (subject: MailSubject): string =>
  subject.kind === 'campaign'
    ? `campaign#${subject.campaignId}`
    : `step#${subject.sequenceId}#${subject.step}`;

/**
 * What counts an event of a message to a contact: its campaign (tags
 * `kind` campaign, `campaign`), or its sequence's step (`kind` sequence,
 * `sequence`, `step`); none for other mail (confirmations, test sends).
 */
export const subjectOf = (event: SesEvent): MailSubject | undefined => {
  const kind = tagOf(event, 'kind');
  if (kind === 'campaign') {
    const campaignId = tagOf(event, 'campaign');
    return campaignId ? { kind: 'campaign', campaignId } : undefined;
  }
  if (kind === 'sequence') {
    const sequenceId = tagOf(event, 'sequence');
    const step = Number(tagOf(event, 'step'));
    return sequenceId && Number.isSafeInteger(step) && step > 0
      ? { kind: 'step', sequenceId, step }
      : undefined;
  }
  return undefined;
};

/** Who made an open or a click, as SES says; nothing for other events. */
const sightingOf = (
  event: SesEvent,
): Pick<MailEventRecord, 'userAgent' | 'ipAddress'> => {
  const seen =
    event.eventType === 'Open'
      ? event.open
      : event.eventType === 'Click'
        ? event.click
        : undefined;
  return {
    ...(seen?.userAgent !== undefined ? { userAgent: seen.userAgent } : {}),
    ...(seen?.ipAddress !== undefined ? { ipAddress: seen.ipAddress } : {}),
  };
};

/** Counts one event in its batch's tally of its subject, or at once. */
const countMailEvent = (
  deps: { campaignStats: MailEventCounter },
  orgId: string,
  event: MailEventRecord,
  link: string | undefined,
  tallies: MailTallies | undefined,
): Promise<boolean> =>
  tallies
    ? tallies(orgId, event.subject).record(event, link)
    : deps.campaignStats.recordEvent(orgId, event, link);

/**
 * Records an SES event of a message we sent. Refused for good (the
 * consumer drops it): an event without our organization tag, or of an
 * organization that no longer exists. An event of a campaign's or a
 * sequence step's message to a contact is counted by their statistics
 * (its one record and dedupe): recorded on its recipient now, with the
 * recipient's mailbox provider (`providers`: its domain, or its MX), and
 * counted with the rest of its batch by `tallies` (without them, at once);
 * any other, by delivery, with the organization's counters.
 * An event of a message to a contact is written in that contact's
 * activity too (see `recordActivity`).
 * Idempotent: a duplicate changes no counter and writes the same activity
 * item over itself, and the suppression step runs again each time, so a
 * delivery after a crash between the steps completes what the first one
 * began.
 */
export const recordSesEvent = async (
  deps: Pick<
    Deps,
    'delivery' | 'organizations' | 'lists' | 'contacts' | 'clock'
  > &
    Pick<ActivityDeps, 'activity'> & {
      campaignStats: MailEventCounter;
      /** Looks MX records up; without it, the table of domains alone. */
      mx?: MxResolver;
    },
  event: SesEvent,
  known = new KnownOrganizations(),
  tallies?: MailTallies,
  /**
   * Told of each event counted for the first time (a duplicate is not):
   * the organization's reputation counters (`reputation/`).
   */
  onCounted?: (
    orgId: string,
    type: SesEvent['eventType'],
    bounceType?: string,
  ) => Promise<void> | undefined,
  providers = new MailboxProviders(),
): Promise<{ recorded: number; suppressed: string[] }> => {
  const orgId = tagOf(event, 'org');
  if (!orgId) {
    throw new RuleViolationError(
      'event.unattributed',
      `SES event ${event.eventType} of message ${event.mail.messageId} carries no organization tag`,
    );
  }
  if (!(await known.exists(deps, orgId))) {
    throw new NotFoundError(
      'organization.notFound',
      `SES event of message ${event.mail.messageId}: organization ${orgId} no longer exists`,
    );
  }

  const at = instantOf(event);
  const kind = tagOf(event, 'kind');
  const contactId = tagOf(event, 'contact');
  const campaignId = tagOf(event, 'campaign');
  const subject = contactId ? subjectOf(event) : undefined;
  let recorded = 0;
  const recipients = recipientsOf(event);
  for (const recipient of recipients) {
    const record: DeliveryEventRecord = {
      messageId: event.mail.messageId,
      type: event.eventType,
      recipient,
      at,
      ...(kind ? { kind } : {}),
      ...(contactId ? { contactId } : {}),
      ...(campaignId ? { campaignId } : {}),
      ...(event.eventType === 'Bounce'
        ? { bounceType: event.bounce.bounceType }
        : {}),
    };
    const link =
      event.eventType === 'Click' ? clickedLink(event.click.link) : undefined;
    const counted =
      subject && contactId
        ? await countMailEvent(
            deps,
            orgId,
            {
              ...record,
              subject,
              contactId,
              provider: await providers.of(deps, recipient),
              sentAt: event.mail.timestamp,
              ...sightingOf(event),
            },
            link,
            tallies,
          )
        : await deps.delivery.recordEvent(orgId, record);
    if (counted) {
      recorded++;
      await onCounted?.(
        orgId,
        event.eventType,
        event.eventType === 'Bounce' ? event.bounce.bounceType : undefined,
      );
    }
  }
  await recordActivity(deps, orgId, event, at, recipients);

  const reason = suppressionOf(event);
  if (!reason) return { recorded, suppressed: [] };
  for (const email of recipients) {
    await suppressAddress(deps, orgId, {
      email,
      reason,
      at,
      messageId: event.mail.messageId,
    });
  }
  return { recorded, suppressed: recipients };
};
