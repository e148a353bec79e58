/**
 * The body of each event type, as a schema: what a receiver gets, declared
 * once. The OpenAPI document lists them under `webhooks` (so a generated
 * client types its receiver), and the tests hold every event the service
 * derives to its type's schema.
 */
import * as v from 'valibot';
import { BOUNCE_TYPES } from '../activity/model.ts';
import { ContactView } from '../audience/contact-view.ts';
import { CONTACT_WRITE_PATHS } from '../audience/model.ts';
import { CampaignView } from '../campaigns/campaigns.ts';
import { ErasureView } from '../privacy/erasure.schema.ts';
import { ENROLMENT_STATUSES, EXIT_REASONS } from '../sequences/model.ts';
import { Timestamp, ViewId } from '../validation.ts';
import { WEBHOOK_EVENTS, type WebhookEventType } from './events.ts';

const described = <S extends v.GenericSchema>(schema: S, text: string) =>
  v.pipe(schema, v.description(text));

const Via = described(
  v.nullable(v.picklist(CONTACT_WRITE_PATHS)),
  'How the write came: api, import, form (a hosted sign-up page), confirmation (its link), link (an unsubscribe page), one_click (the List-Unsubscribe header), delivery (a bounce or complaint); null when it did not say',
);

const Contact = described(
  ContactView,
  'The contact after the write, as GET /contacts/{contactId} shows it',
);

const contactData = <E extends v.ObjectEntries>(entries: E) =>
  v.object({ contact: Contact, ...entries });

const TagNamed = v.pipe(
  v.object({
    id: ViewId,
    name: described(
      v.nullable(v.string()),
      'null when the tag was deleted meanwhile',
    ),
  }),
  v.title('WebhookTag'),
);

const FieldValue = v.nullable(v.union([v.string(), v.number(), v.boolean()]));

const campaignEntries = v.omit(CampaignView.pipe[0], [
  'content',
  'recipientCount',
  'recipientCountExact',
  'sendingEnabled',
  'lastHold',
]).entries;

const CampaignData = v.object({
  campaign: v.pipe(
    v.object(campaignEntries),
    v.title('WebhookCampaign'),
    v.description(
      'The campaign as GET /campaigns/{campaignId} shows it, less its content and its live audience count; `progress` as the status was entered',
    ),
  ),
});

const WebhookMail = v.pipe(
  v.object({
    messageId: described(v.string(), "SES's message id"),
    kind: described(
      v.picklist(['campaign', 'sequence', 'confirmation']),
      'What sent it: a campaign (a series step is one), a sequence step, a double opt-in confirmation',
    ),
    campaignId: v.nullable(ViewId),
    sequenceId: described(
      v.nullable(ViewId),
      'The sequence of a step, or the series whose step made the campaign',
    ),
    step: described(
      v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
      'The step of a sequence: 1 for its first email',
    ),
  }),
  v.title('WebhookMail'),
);

const MailData = (extra: v.ObjectEntries = {}) =>
  v.object({
    mail: WebhookMail,
    email: described(v.pipe(v.string(), v.email()), 'The recipient'),
    contactId: described(
      v.nullable(ViewId),
      'The contact it went to, when it went to one',
    ),
    ...extra,
  });

const JourneyData = v.object({
  journey: v.pipe(
    v.object({
      sequenceId: ViewId,
      versionId: ViewId,
      contactId: ViewId,
      listId: ViewId,
      email: v.pipe(v.string(), v.email()),
      status: v.picklist(ENROLMENT_STATUSES),
      exitReason: v.nullable(v.picklist(EXIT_REASONS)),
      enrolledAt: Timestamp,
      endedAt: v.nullable(Timestamp),
      sent: described(v.number(), 'Steps sent so far'),
      skipped: described(v.number(), 'Steps skipped so far'),
    }),
    v.title('WebhookJourney'),
    v.description("A contact's journey through a sequence"),
  ),
});

/** The `data` of each event type. */
export const WEBHOOK_DATA = {
  'contact.created': contactData({ via: Via }),
  'contact.subscribed': contactData({
    via: Via,
    confirmed: described(
      v.boolean(),
      'true when its confirmation link subscribed it',
    ),
  }),
  'contact.unsubscribed': contactData({ via: Via }),
  'contact.bounced': contactData({ via: Via }),
  'contact.complained': contactData({ via: Via }),
  'contact.tagged': contactData({ tag: TagNamed }),
  'contact.untagged': contactData({ tag: TagNamed }),
  'contact.updated': contactData({
    changes: v.array(
      v.object({
        key: described(v.string(), 'The custom field key'),
        from: FieldValue,
        to: FieldValue,
      }),
    ),
  }),
  'contact.deleted': v.object({ contactId: ViewId, listId: ViewId }),
  'contact.erased': v.object({
    erasure: ErasureView,
    contactIds: described(
      v.array(ViewId),
      'The contacts deleted: erase what you keep of them',
    ),
  }),
  'signup.submitted': contactData({
    pageId: described(ViewId, 'The sign-up page'),
    signedUpAt: Timestamp,
  }),
  'campaign.scheduled': CampaignData,
  'campaign.sending': CampaignData,
  'campaign.sent': CampaignData,
  'campaign.failed': CampaignData,
  'mail.delivered': MailData(),
  'mail.opened': MailData(),
  'mail.clicked': MailData({
    link: described(v.string(), 'The link followed, less our own tokens'),
  }),
  'mail.bounced': MailData({ bounceType: v.picklist(BOUNCE_TYPES) }),
  'mail.complained': MailData(),
  'sequence.enrolled': JourneyData,
  'sequence.completed': JourneyData,
  'sequence.exited': JourneyData,
} as const satisfies Record<WebhookEventType, v.GenericSchema>;

/** The title of an event type's body: `contact.tagged` → `ContactTaggedEvent`. */
export const webhookPayloadTitle = (type: WebhookEventType) =>
  `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Event`;

/** The whole body of one event type, titled for the document. */
export const webhookPayloadSchema = (type: WebhookEventType) =>
  v.pipe(
    v.object({
      id: described(
        v.pipe(v.string(), v.regex(/^evt_[0-9a-f]{32}$/)),
        'The event id, also in the `webhook-id` header: the same fact always has the same id, so drop a repeat',
      ),
      type: v.literal(type),
      timestamp: described(Timestamp, 'When the fact happened'),
      organizationId: ViewId,
      data: WEBHOOK_DATA[type],
      test: v.optional(
        described(
          v.literal(true),
          'Present, and true, only on the sample event of a test call (`POST /webhooks/{webhookId}/test`): no fact behind it, made-up ids',
        ),
      ),
    }),
    v.title(webhookPayloadTitle(type)),
    v.description(WEBHOOK_EVENTS[type]),
  );
