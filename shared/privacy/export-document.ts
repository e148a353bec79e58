/**
 * The export of a person as the API shows it: one JSON document holding
 * each contact of the address (fields, tags, consent records), the topics
 * it declined, its journeys and the campaign mail sent to it with what
 * became of each message. Every attribute present, null when unset.
 */

import * as v from 'valibot';
import { ActivityView } from '../activity/listing.ts';
import { ContactView, contactView } from '../audience/contact-view.ts';
import type { TagRef } from '../audience/model.ts';
import { SUPPRESSION_REASONS } from '../audience/ports.ts';
import {
  ENROLMENT_STATUSES,
  EXIT_REASONS,
  STEP_OUTCOMES,
} from '../sequences/model.ts';
import { Count, Timestamp, ViewId } from '../validation.ts';
import type {
  ExportContactRecord,
  ExportJourneyRecord,
  ExportMailRecord,
  ExportTopicRecord,
} from './export-ports.ts';

/** An instant of the history: null until it happened. */
const When = (meaning: string) =>
  v.pipe(v.nullable(Timestamp), v.description(meaning));

/** A contact of the address, as every contact read shows it, and its list. */
export const ExportedContact = v.pipe(
  v.object({
    ...ContactView.entries,
    listName: v.pipe(v.string(), v.description('The name of its list')),
  }),
  v.title('ExportedContact'),
);

/** A topic the address declined. */
export const ExportedTopicOptOut = v.pipe(
  v.object({
    topicId: ViewId,
    name: v.string(),
    contactId: v.pipe(
      ViewId,
      v.description('The contact the opt-out was recorded from'),
    ),
    optedOutAt: Timestamp,
  }),
  v.title('ExportedTopicOptOut'),
);

/** A journey of one of the contacts through a sequence. */
export const ExportedJourney = v.pipe(
  v.object({
    sequenceId: ViewId,
    name: v.pipe(v.string(), v.description("The sequence's name")),
    contactId: ViewId,
    listId: ViewId,
    status: v.picklist(ENROLMENT_STATUSES),
    exitReason: v.pipe(
      v.nullable(v.picklist(EXIT_REASONS)),
      v.description('Why the journey ended early, if it did'),
    ),
    position: v.pipe(
      Count,
      v.description('The email step due next (0 is the first)'),
    ),
    enrolledAt: Timestamp,
    nextStepAt: When('When the next step falls due; null once ended'),
    endedAt: When('When the journey completed or exited'),
    stepsSent: Count,
    stepsSkipped: Count,
    lastStep: v.pipe(
      v.nullable(
        v.object({
          position: Count,
          outcome: v.picklist(STEP_OUTCOMES),
          at: Timestamp,
          messageId: v.nullable(v.string()),
        }),
      ),
      v.description('The last step done, and how'),
    ),
  }),
  v.title('ExportedJourney'),
);

/** What became of one campaign's mail, as the sender and SES left it. */
const MAIL_OUTCOMES = ['sent', 'refused', 'uncertain'] as const;

/** One campaign's mail to one of the contacts. */
export const ExportedMail = v.pipe(
  v.object({
    campaignId: ViewId,
    campaignName: v.string(),
    subject: v.pipe(
      v.string(),
      v.description(
        "The campaign's subject as written (Liquid, merged per recipient when sent)",
      ),
    ),
    seriesId: v.pipe(
      v.nullable(ViewId),
      v.description('The series whose step made the campaign, if one did'),
    ),
    contactId: ViewId,
    listId: ViewId,
    outcome: v.pipe(
      v.picklist(MAIL_OUTCOMES),
      v.description(
        [
          '- `sent`: SES took the message (`messageId`);',
          '- `refused`: SES refused this address for good;',
          "- `uncertain`: claimed by the sender, SES's answer not recorded: a send under way, or a sender that stopped while calling SES (never sent again).",
        ].join('\n'),
      ),
    ),
    messageId: v.nullable(v.string()),
    sentAt: When('When the sender handed it to SES'),
    deliveredAt: When('First delivery reported by SES'),
    openedAt: When('First open'),
    clickedAt: When('First click'),
    clickedLinks: v.pipe(
      v.array(v.string()),
      v.description('The URLs it clicked, each once'),
    ),
    bouncedAt: When('First bounce'),
    complainedAt: When('First complaint'),
    rejectedAt: When('When SES rejected it'),
    unsubscribedAt: When("When it unsubscribed through this mail's link"),
  }),
  v.title('ExportedMail'),
);

/** Everything the organization holds about one address. */
export const PersonExport = v.pipe(
  v.object({
    email: v.pipe(
      v.string(),
      v.email(),
      v.description('The address, trimmed and lower-cased'),
    ),
    exportedAt: Timestamp,
    organization: v.object({ id: ViewId, name: v.string() }),
    contacts: v.pipe(
      v.array(ExportedContact),
      v.description(
        'Its contacts, one per list holding the address, oldest first: names, status, fields, tags, the consent of each sign-up (page, IP, user agent, time, wording) and the opt-in and confirmation instants and addresses',
      ),
    ),
    topics: v.pipe(
      v.array(ExportedTopicOptOut),
      v.description('The topics it declined, oldest first'),
    ),
    journeys: v.pipe(
      v.array(ExportedJourney),
      v.description('Its journeys through sequences, oldest first'),
    ),
    mail: v.pipe(
      v.array(ExportedMail),
      v.description(
        'The campaign mail sent to its contacts (series steps included), oldest first, and what became of each',
      ),
    ),
    activity: v.pipe(
      v.array(
        v.object({
          contactId: ViewId,
          events: v.array(ActivityView),
        }),
      ),
      v.description(
        "Each contact's activity (GET /contacts/{contactId}/activity), newest first: its subscription, tags, field changes, unsubscribes, and each mail with what became of it, sequence steps and confirmations included; kept 400 days",
      ),
    ),
    suppression: v.pipe(
      v.nullable(
        v.object({
          reason: v.picklist(SUPPRESSION_REASONS),
          at: Timestamp,
        }),
      ),
      v.description(
        'Why the address is on the suppression list, and since when; null when it is not',
      ),
    ),
  }),
  v.title('PersonExport'),
);
export type PersonExport = v.InferOutput<typeof PersonExport>;

/** A contact's export view, its tags named. */
export const exportedContact = (
  { contact, listName }: ExportContactRecord,
  tagsById: Map<string, TagRef>,
): v.InferOutput<typeof ExportedContact> => ({
  ...contactView(contact, tagsById),
  listName,
});

/** A topic opt-out's export view. */
export const exportedTopic = (
  record: ExportTopicRecord,
): v.InferOutput<typeof ExportedTopicOptOut> => ({
  topicId: record.topicId,
  name: record.name,
  contactId: record.contactId,
  optedOutAt: record.optedOutAt,
});

/** A journey's export view. */
export const exportedJourney = ({
  sequenceName,
  enrolment,
}: ExportJourneyRecord): v.InferOutput<typeof ExportedJourney> => ({
  sequenceId: enrolment.sequenceId,
  name: sequenceName,
  contactId: enrolment.contactId,
  listId: enrolment.listId,
  status: enrolment.status,
  exitReason: enrolment.exitReason,
  position: enrolment.position,
  enrolledAt: enrolment.enrolledAt,
  nextStepAt: enrolment.dueAt,
  endedAt: enrolment.endedAt,
  stepsSent: enrolment.sent,
  stepsSkipped: enrolment.skipped,
  lastStep: enrolment.lastStep && {
    position: enrolment.lastStep.position,
    outcome: enrolment.lastStep.outcome,
    at: enrolment.lastStep.at,
    messageId: enrolment.lastStep.messageId ?? null,
  },
});

/** A mail's export view. */
export const exportedMail = (
  record: ExportMailRecord,
): v.InferOutput<typeof ExportedMail> => ({
  campaignId: record.campaignId,
  campaignName: record.campaignName,
  subject: record.subject,
  seriesId: record.seriesId,
  contactId: record.contactId,
  listId: record.listId,
  outcome: record.messageId ? 'sent' : record.refused ? 'refused' : 'uncertain',
  messageId: record.messageId ?? null,
  sentAt: record.claimedAt ?? null,
  deliveredAt: record.deliveredAt ?? null,
  openedAt: record.openedAt ?? null,
  clickedAt: record.clickedAt ?? null,
  clickedLinks: [...record.clickedLinks].sort(),
  bouncedAt: record.bouncedAt ?? null,
  complainedAt: record.complainedAt ?? null,
  rejectedAt: record.rejectedAt ?? null,
  unsubscribedAt: record.unsubscribedAt ?? null,
});
