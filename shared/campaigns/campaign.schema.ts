/**
 * Request schemas of campaigns: creation, edits of a draft, the send (an
 * instant with an explicit offset, never read as UTC), the list's filter
 * and the test send.
 */
import * as v from 'valibot';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  EmailAddress,
  HtmlContent,
  Id,
  InstantWithOffset,
  PageQuery,
  requiredName,
  Subject,
} from '../validation.ts';
import { CAMPAIGN_STATUSES } from './model.ts';

/** Longest campaign name, in characters. */
export const MAX_CAMPAIGN_NAME_CHARS = 200;

const Name = requiredName(MAX_CAMPAIGN_NAME_CHARS);
const OptionalRef = (what: string) =>
  v.optional(v.pipe(v.nullable(Id), v.description(what)), null);

/** Body of POST /campaigns. */
export const CreateCampaignBody = v.object({
  name: Name,
  subject: v.optional(
    v.pipe(
      Subject,
      v.description(
        "Liquid, one line; the template's default subject when left out",
      ),
    ),
  ),
  templateId: v.pipe(
    Id,
    v.description('The template whose content the campaign copies'),
  ),
  listId: v.pipe(Id, v.description('The list the campaign goes to')),
  segmentId: OptionalRef(
    "Narrows the audience to the list's contacts this segment matches (a segment of that list), evaluated when the send starts and again at each recipient's turn",
  ),
  tagId: OptionalRef(
    "Narrows the audience to the list's contacts carrying this tag",
  ),
  sendingIdentityId: OptionalRef(
    'The address of the address book that signs it; null or left out: the default address',
  ),
  topicId: OptionalRef(
    'The topic of the campaign: readers who declined it are left out; required by {{topicOptOutUrl}}',
  ),
});
export type CreateCampaignInput = v.InferOutput<typeof CreateCampaignBody>;

const nullableRef = (what: string) =>
  v.optional(v.pipe(v.nullable(Id), v.description(what)));

/** Body of PATCH /campaigns/{campaignId}: at least one field. */
export const UpdateCampaignBody = v.pipe(
  v.object({
    name: v.optional(Name),
    subject: v.optional(Subject),
    content: v.optional(
      v.pipe(HtmlContent, v.description("The campaign's own HTML")),
    ),
    templateId: v.optional(
      v.pipe(
        Id,
        v.description(
          "Copies this template's content into the campaign (not with `content`)",
        ),
      ),
    ),
    listId: v.optional(Id),
    segmentId: nullableRef(
      'A segment of the list narrowing the audience; null: the whole list',
    ),
    tagId: nullableRef('A tag narrowing the audience; null: the whole list'),
    sendingIdentityId: nullableRef(
      'The address that signs it; null: the default address',
    ),
    topicId: nullableRef('The topic; null: none'),
  }),
  v.check(
    hasSomeField,
    'must change at least one of name, subject, content, templateId, listId, segmentId, tagId, sendingIdentityId, topicId',
  ),
  v.forward(
    v.check(
      (body) => body.content === undefined || body.templateId === undefined,
      'give either content or templateId, not both',
    ),
    ['templateId'],
  ),
  // With content, a templateId is refused.
  inJsonSchema({
    dependentSchemas: { content: { properties: { templateId: false } } },
  }),
);
export type UpdateCampaignInput = v.InferOutput<typeof UpdateCampaignBody>;

/** Body of POST /campaigns/{campaignId}/send (optional). */
export const SendCampaignBody = v.optional(
  v.object({
    scheduledAt: v.optional(
      v.pipe(
        InstantWithOffset,
        v.description(
          'When to send: an ISO 8601 instant with an explicit offset (Z or +hh:mm). Left out: send now',
        ),
      ),
    ),
  }),
  {},
);
export type SendCampaignInput = v.InferOutput<typeof SendCampaignBody>;

/** Query of GET /campaigns. */
export const CampaignListQuery = v.object({
  ...PageQuery.entries,
  status: v.optional(
    v.pipe(
      v.picklist(
        CAMPAIGN_STATUSES,
        `must be one of ${CAMPAIGN_STATUSES.join(', ')}`,
      ),
      v.description('Only campaigns in this status'),
    ),
  ),
});

/** Most addresses of one campaign test send. */
export const MAX_TEST_RECIPIENTS = 5;

/** Body of POST /campaigns/{campaignId}/test-send. */
export const CampaignTestSendBody = v.object({
  emails: v.pipe(
    v.array(EmailAddress),
    v.minLength(1, 'must name at least one address'),
    v.maxLength(
      MAX_TEST_RECIPIENTS,
      `must name at most ${MAX_TEST_RECIPIENTS} addresses`,
    ),
    v.description(
      `Where the test goes: 1 to ${MAX_TEST_RECIPIENTS} addresses, each sent its own email`,
    ),
  ),
});
