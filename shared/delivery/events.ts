/**
 * Application logic of SES's email events: the one service call of the
 * events consumer. Each event is recorded and counted once; a permanent
 * bounce or a complaint suppresses the address for the organization at
 * once (see `suppression.ts`).
 */

import { suppressAddress } from '../audience/suppressed.ts';
import { NotFoundError, RuleViolationError } from '../errors.ts';
import { clickedLink } from '../links/public-links.ts';
import type {
  CampaignEventCounter,
  CampaignEventTally,
  DeliveryEventRecord,
  DeliveryDeps as Deps,
} from './ports.ts';
import { type SesEvent, tagOf } from './ses-event.ts';

/** The recipients an event is about, normalized. */
const recipientsOf = (event: SesEvent): string[] => {
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
const instantOf = (event: SesEvent): string => {
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
 * The tally a campaign's events of the batch at hand go to (one per
 * campaign and batch: the events consumer commits each once its batch is
 * handled, and retries the messages of one that fails).
 */
export type CampaignTallies = (
  orgId: string,
  campaignId: string,
) => CampaignEventTally;

/**
 * Records an SES event of a message we sent. Refused for good (the
 * consumer drops it): an event without our organization tag, or of an
 * organization that no longer exists. An event of a campaign's message to
 * a contact is counted by the campaign's statistics (its one record and
 * dedupe): recorded on its recipient now, counted with the rest of its
 * batch by `tallies` (without them, at once); any other, by delivery, with
 * the organization's counters.
 * Idempotent: a duplicate changes no counter, and the suppression step
 * runs again each time, so a delivery after a crash between the steps
 * completes what the first one began.
 */
export const recordSesEvent = async (
  deps: Pick<
    Deps,
    'delivery' | 'organizations' | 'lists' | 'contacts' | 'clock'
  > & { campaignStats: CampaignEventCounter },
  event: SesEvent,
  known = new KnownOrganizations(),
  tallies?: CampaignTallies,
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
      kind === 'campaign' && campaignId && contactId
        ? tallies
          ? await tallies(orgId, campaignId).record(
              { ...record, campaignId, contactId },
              link,
            )
          : await deps.campaignStats.recordEvent(
              orgId,
              { ...record, campaignId, contactId },
              link,
            )
        : await deps.delivery.recordEvent(orgId, record);
    if (counted) recorded++;
  }

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
