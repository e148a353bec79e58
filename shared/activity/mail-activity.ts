/**
 * Application logic of a contact's mail events: one event per SES event
 * about a message sent to the contact (sent, delivered, opened, clicked and
 * which link, bounced, complained…), named by the message's tags alone —
 * the contact, the campaign, the sequence or series and its step — so that
 * recording one costs its write and no read. Delivery calls it for each
 * SES event it records.
 */
import { createHash } from 'node:crypto';
import {
  type ActivityEvent,
  type ActivityMessage,
  activityId,
  type BounceType,
  type MailActivityType,
} from './model.ts';
import type { ActivityDeps } from './ports.ts';
import { withoutAddresses } from './without-addresses.ts';

/** One SES event about a message sent to a contact, as delivery reads it. */
export interface MailEvent {
  type: MailActivityType;
  /** When it happened, as SES says. */
  at: string;
  message: ActivityMessage;
  /** The link a click followed. */
  link?: string;
  /** Of a bounce: whether SES deems it for good. */
  bounceType?: BounceType;
}

/**
 * Most characters of a clicked link kept (an ellipsis ends a longer one),
 * so that a click's item stays under 1 KB: one write unit.
 */
export const MAX_LINK_CHARS = 500;

/** 16 characters of a SHA-256 of the parts (base64url). */
const hashOf = (...parts: string[]): string =>
  createHash('sha256').update(parts.join('#')).digest('base64url').slice(0, 16);

/**
 * The activity event of one SES event: identified by the message, the
 * type, SES's instant and (a click) the link, so SES's duplicate or the
 * queue's redelivery of the same event is the same event. `recipients`
 * are the addresses the event is about, taken out of the link; a link past
 * `MAX_LINK_CHARS` is cut.
 */
export const mailActivityOf = (
  event: MailEvent,
  recipients: readonly string[],
): ActivityEvent => {
  const link =
    event.link === undefined
      ? undefined
      : withoutAddresses(event.link, recipients);
  return {
    id: activityId(
      event.at,
      `m${hashOf(event.message.id, event.type, event.at, link ?? '')}`,
    ),
    type: event.type,
    at: new Date(event.at).toISOString(),
    message: event.message,
    ...(link === undefined
      ? {}
      : {
          link:
            link.length > MAX_LINK_CHARS
              ? // By code points: never half a surrogate pair.
                `${Array.from(link)
                  .slice(0, MAX_LINK_CHARS - 1)
                  .join('')}…`
              : link,
        }),
    ...(event.bounceType ? { bounceType: event.bounceType } : {}),
  };
};

/**
 * Records one mail event in its contact's activity: one put, no read.
 * Idempotent (the same event writes the same item over itself).
 */
export const recordMailActivity = async (
  deps: Pick<ActivityDeps, 'activity'>,
  orgId: string,
  contactId: string,
  event: MailEvent,
  recipients: readonly string[],
): Promise<ActivityEvent> => {
  const recorded = mailActivityOf(event, recipients);
  await deps.activity.record(orgId, contactId, [recorded]);
  return recorded;
};
