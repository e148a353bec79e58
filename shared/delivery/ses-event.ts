/**
 * The email events SES publishes for a configuration set (event
 * publishing to EventBridge: the `detail` of an `aws.ses` event), as the
 * events queue receives them, and the tags every outgoing message carries
 * so an event names its organization without a lookup.
 *
 * Only the fields we use are checked; SES may add others at any time.
 */
import * as v from 'valibot';
import type { EMAIL_TAGS } from '../mail/tags.ts';

/** SES's event types (`eventType`), as published. */
export const SES_EVENT_TYPES = [
  'Send',
  'Delivery',
  'Bounce',
  'Complaint',
  'Reject',
  'DeliveryDelay',
  'Open',
  'Click',
  'Rendering Failure',
  'Subscription',
] as const;
export type SesEventType = (typeof SES_EVENT_TYPES)[number];

const Recipient = v.object({ emailAddress: v.pipe(v.string(), v.email()) });
const Instant = v.pipe(v.string(), v.isoTimestamp());

/** What SES says of the message an event is about. */
const Mail = v.object({
  messageId: v.pipe(v.string(), v.minLength(1)),
  /** When the message was sent. */
  timestamp: Instant,
  destination: v.array(v.pipe(v.string(), v.minLength(1))),
  /** The message's tags: each tag name maps to its values. */
  tags: v.optional(v.record(v.string(), v.array(v.string())), {}),
});

/** One SES email event (the EventBridge event's `detail`). */
export const SesEvent = v.variant('eventType', [
  v.object({ eventType: v.literal('Send'), mail: Mail }),
  v.object({
    eventType: v.literal('Delivery'),
    mail: Mail,
    delivery: v.object({
      timestamp: Instant,
      recipients: v.array(v.string()),
    }),
  }),
  v.object({
    eventType: v.literal('Bounce'),
    mail: Mail,
    bounce: v.object({
      /** Permanent: never deliverable; Transient: maybe later. */
      bounceType: v.picklist(['Permanent', 'Transient', 'Undetermined']),
      bounceSubType: v.string(),
      bouncedRecipients: v.pipe(v.array(Recipient), v.minLength(1)),
      timestamp: Instant,
    }),
  }),
  v.object({
    eventType: v.literal('Complaint'),
    mail: Mail,
    complaint: v.object({
      complainedRecipients: v.pipe(v.array(Recipient), v.minLength(1)),
      timestamp: Instant,
      complaintFeedbackType: v.optional(v.string()),
    }),
  }),
  v.object({
    eventType: v.literal('Reject'),
    mail: Mail,
    reject: v.object({ reason: v.string() }),
  }),
  v.object({
    eventType: v.literal('DeliveryDelay'),
    mail: Mail,
    deliveryDelay: v.object({
      timestamp: Instant,
      delayType: v.string(),
      delayedRecipients: v.array(Recipient),
    }),
  }),
  v.object({
    eventType: v.literal('Open'),
    mail: Mail,
    open: v.object({
      timestamp: Instant,
      ipAddress: v.optional(v.string()),
      userAgent: v.optional(v.string()),
    }),
  }),
  v.object({
    eventType: v.literal('Click'),
    mail: Mail,
    click: v.object({
      timestamp: Instant,
      link: v.string(),
      ipAddress: v.optional(v.string()),
      userAgent: v.optional(v.string()),
    }),
  }),
  v.object({
    eventType: v.literal('Rendering Failure'),
    mail: Mail,
    failure: v.object({ errorMessage: v.string() }),
  }),
  v.object({
    eventType: v.literal('Subscription'),
    mail: Mail,
    subscription: v.object({ timestamp: Instant }),
  }),
]);
export type SesEvent = v.InferOutput<typeof SesEvent>;

/** The first value of one of our tags on the event's message. */
export const tagOf = (
  event: SesEvent,
  tag: (typeof EMAIL_TAGS)[keyof typeof EMAIL_TAGS],
): string | undefined => event.mail.tags[tag]?.[0];

/**
 * The EventBridge `detail-type` SES gives each event type: the events rule
 * matches these, and the local stack publishes the same.
 */
export const DETAIL_TYPES: Record<SesEventType, string> = {
  Send: 'Email Sent',
  Delivery: 'Email Delivered',
  Bounce: 'Email Bounced',
  Complaint: 'Email Complaint Received',
  Reject: 'Email Rejected',
  DeliveryDelay: 'Email Delivery Delayed',
  Open: 'Email Opened',
  Click: 'Email Clicked',
  'Rendering Failure': 'Email Rendering Failed',
  Subscription: 'Email Subscribed',
};
