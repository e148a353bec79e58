/**
 * Driven adapter: what an organization holds about one address, for its
 * export. Everything is read by key or by a paged Query of one of the
 * organization's collections, never by a scan:
 * - its contacts: the organization's lists, a page at a time, then the
 *   address's key in each list of the page (BatchGetItem, 100 keys a
 *   request);
 * - its topic opt-outs: the address's declined topics (one item), then
 *   each opt-out and its topic by key;
 * - its journeys: the organization's sequences, a page at a time, then
 *   the enrolment of each contact in each sequence of the page by key;
 * - its campaign mail: the organization's campaigns, a page at a time,
 *   then, for each campaign that started a send to a list holding one of
 *   the contacts, its recipient item by key (the sharded key; where it
 *   holds none, the key of `campaign-recipient-keys.ts`'s older layout: a
 *   send started before recipients were sharded keeps them in the
 *   campaign's partition), and the URL of each link it clicked.
 * The address's own items are read strongly consistent; the listings of
 * the organization's sequences and campaigns, and what hangs off them,
 * eventually (half the read units): a campaign or sequence changed in the
 * last second has sent nothing to anyone yet.
 */
import * as v from 'valibot';
import {
  type ItemOf,
  type ItemSchema,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { type Key, keys, type QueryKey } from '../../db/keys.ts';
import type {
  ExportContactRecord,
  ExportJourneyRecord,
  ExportMailRecord,
  ExportReader,
  ExportTopicRecord,
} from '../../privacy/export-ports.ts';
import {
  ContactPointerItem,
  contactFromItem,
  declinedTopicsOf,
} from './dynamo-contact-repository.ts';
import { EnrolmentItem } from './dynamo-enrolment-repository.ts';
import { entity } from './dynamo-entity.ts';
import { LinkItem } from './dynamo-stats-items.ts';
import { batchGet, type DynamoTable, queryPages } from './dynamo-table.ts';
import { TopicItem, TopicOptOutItem } from './dynamo-topic-repository.ts';

/** A list as the export reads it: its id and name. */
const ListNameItem = itemSchema('List', { id: v.string(), name: v.string() });

/** A sequence or series head as the export reads it. */
const SequenceNameItem = itemSchema('Sequence', {
  id: v.string(),
  kind: v.picklist(['sequence', 'series']),
  name: v.string(),
});

/** A campaign as the export reads it: what names it and whom it sent to. */
const CampaignSummaryItem = itemSchema('Campaign', {
  id: v.string(),
  name: v.string(),
  subject: v.string(),
  listId: v.string(),
  startedAt: v.optional(v.nullable(v.string()), null),
  origin: v.optional(v.nullable(v.object({ seriesId: v.string() })), null),
});

const optionalText = v.optional(v.string());

/**
 * A recipient as the export reads it: the sender's claim and SES's
 * events (each written by its own adapter, every attribute optional);
 * the dedupe markers are not read.
 */
const RecipientRecordItem = itemSchema('CampaignRecipient', {
  claimedAt: optionalText,
  messageId: optionalText,
  refused: v.optional(v.boolean()),
  deliveredAt: optionalText,
  openedAt: optionalText,
  clickedAt: optionalText,
  bouncedAt: optionalText,
  complainedAt: optionalText,
  rejectedAt: optionalText,
  unsubscribedAt: optionalText,
  links: v.optional(v.set(v.string()), () => new Set<string>()),
});

/** The attributes each listing projects (the keys and type come too). */
const LIST_NAME = ['id', 'name'];
const SEQUENCE_NAME = ['id', 'kind', 'name'];
const CAMPAIGN_SUMMARY = [
  'id',
  'name',
  'subject',
  'listId',
  'startedAt',
  'origin',
];

const keyId = (key: { PK: unknown; SK: unknown }) =>
  `${String(key.PK)}\n${String(key.SK)}`;

/** The export's reads over the table. */
export class DynamoExportReader implements ExportReader {
  private readonly pointers;

  constructor(private readonly table: DynamoTable) {
    this.pointers = entity(table, ContactPointerItem);
  }

  async addressOf(
    orgId: string,
    contactId: string,
  ): Promise<string | undefined> {
    const pointer = await this.pointers.get(
      keys.contactById(orgId, contactId),
      { consistent: true },
    );
    return pointer?.email;
  }

  async contactsOf(
    orgId: string,
    email: string,
  ): Promise<ExportContactRecord[]> {
    const found: ExportContactRecord[] = [];
    for await (const lists of this.pagesOf(
      keys.listsOfOrganization(orgId),
      ListNameItem,
      LIST_NAME,
      { consistent: true },
    )) {
      const names = new Map(lists.map((list) => [list.id, list.name]));
      const items = await batchGet(
        this.table,
        lists.map((list) => keys.contact(orgId, list.id, email)),
      );
      for (const item of items) {
        const contact = contactFromItem(item);
        found.push({ contact, listName: names.get(contact.listId) ?? '' });
      }
    }
    return found;
  }

  async topicOptOutsOf(
    orgId: string,
    email: string,
  ): Promise<ExportTopicRecord[]> {
    const declined = await declinedTopicsOf(this.table, orgId, [email]);
    const topicIds = declined.get(email)?.topicIds ?? [];
    if (topicIds.length === 0) return [];
    const items = await batchGet(this.table, [
      ...topicIds.map((topicId) => keys.topicOptOut(orgId, topicId, email)),
      ...topicIds.map((topicId) => keys.topic(orgId, topicId)),
    ]);
    const topics = new Map<string, string>();
    const optOuts = new Map<string, { contactId: string; at: string }>();
    for (const item of items) {
      if (String(item.SK).startsWith('OPTOUT#')) {
        // Its partition is its topic's: `ORG#<orgId>#TOPIC#<topicId>`.
        const topicId = String(item.PK).split('#TOPIC#')[1] ?? '';
        const optOut = parseItem(TopicOptOutItem, item);
        optOuts.set(topicId, {
          contactId: optOut.contactId,
          at: optOut.optedOutAt,
        });
      } else {
        const topic = parseItem(TopicItem, item);
        topics.set(topic.id, topic.name);
      }
    }
    // A topic being deleted loses its item first, then its opt-outs:
    // only an opt-out of a topic that still exists is one.
    return [...optOuts].flatMap(([topicId, { contactId, at }]) => {
      const name = topics.get(topicId);
      return name === undefined
        ? []
        : [{ topicId, name, contactId, optedOutAt: at }];
    });
  }

  async journeysOf(
    orgId: string,
    contactIds: readonly string[],
  ): Promise<ExportJourneyRecord[]> {
    if (contactIds.length === 0) return [];
    const found: ExportJourneyRecord[] = [];
    for await (const heads of this.pagesOf(
      keys.sequencesOfOrganization(orgId),
      SequenceNameItem,
      SEQUENCE_NAME,
    )) {
      // A series sends dated campaigns (their mail is the campaigns'):
      // only a sequence enrols contacts.
      const sequences = new Map(
        heads
          .filter((head) => head.kind === 'sequence')
          .map((head) => [head.id, head.name]),
      );
      const items = await batchGet(
        this.table,
        [...sequences.keys()].flatMap((sequenceId) =>
          contactIds.map((contactId) =>
            keys.enrolment(orgId, sequenceId, contactId),
          ),
        ),
        { consistent: false },
      );
      for (const item of items) {
        const enrolment = parseItem(EnrolmentItem, item);
        found.push({
          sequenceName: sequences.get(enrolment.sequenceId) ?? '',
          enrolment,
        });
      }
    }
    return found;
  }

  async mailOf(
    orgId: string,
    contacts: readonly { id: string; listId: string }[],
  ): Promise<ExportMailRecord[]> {
    if (contacts.length === 0) return [];
    const contactsOfList = new Map<string, string[]>();
    for (const { id, listId } of contacts) {
      contactsOfList.set(listId, [...(contactsOfList.get(listId) ?? []), id]);
    }
    const found: ExportMailRecord[] = [];
    for await (const campaigns of this.pagesOf(
      keys.campaignsOfOrganization(orgId),
      CampaignSummaryItem,
      CAMPAIGN_SUMMARY,
    )) {
      // Each started campaign's recipient item of each contact of its
      // list: under the sharded key, or else (a send started before
      // recipients were sharded) under the campaign's partition.
      const targets = campaigns
        .filter((campaign) => campaign.startedAt !== null)
        .flatMap((campaign) =>
          (contactsOfList.get(campaign.listId) ?? []).map((contactId) => ({
            campaign,
            contactId,
          })),
        );
      const sharded = await this.recipientsAt(
        targets,
        ({ campaign, contactId }) =>
          keys.campaignRecipient(orgId, campaign.id, contactId),
      );
      const legacy = await this.recipientsAt(
        targets.filter((target) => !sharded.has(target)),
        ({ campaign, contactId }) =>
          keys.legacyCampaignRecipient(orgId, campaign.id, contactId),
      );
      const recipients = targets.flatMap((target) => {
        const recipient = sharded.get(target) ?? legacy.get(target);
        return recipient ? [{ ...target, ...recipient }] : [];
      });
      const urls = await this.linkUrls(
        orgId,
        recipients.flatMap(({ campaign, links }) =>
          [...links].map((linkId) => ({ campaignId: campaign.id, linkId })),
        ),
      );
      for (const { campaign, contactId, links, ...recipient } of recipients) {
        found.push({
          ...recipient,
          campaignId: campaign.id,
          campaignName: campaign.name,
          subject: campaign.subject,
          seriesId: campaign.origin?.seriesId ?? null,
          listId: campaign.listId,
          contactId,
          clickedLinks: [...links].flatMap((linkId) => {
            const url = urls.get(`${campaign.id}#${linkId}`);
            return url === undefined ? [] : [url];
          }),
        });
      }
    }
    return found;
  }

  /** The recipient items of these targets at these keys (eventually). */
  private async recipientsAt<T>(
    targets: readonly T[],
    keyOf: (target: T) => Key,
  ): Promise<Map<T, ItemOf<typeof RecipientRecordItem>>> {
    const byKey = new Map(
      targets.map((target) => [keyId(keyOf(target)), target]),
    );
    const found = new Map<T, ItemOf<typeof RecipientRecordItem>>();
    if (byKey.size === 0) return found;
    const items = await batchGet(this.table, targets.map(keyOf), {
      consistent: false,
    });
    for (const item of items) {
      const target = byKey.get(keyId({ PK: item.PK, SK: item.SK }));
      if (target) found.set(target, parseItem(RecipientRecordItem, item));
    }
    return found;
  }

  /** The URLs of clicked links, by `<campaignId>#<linkId>`. */
  private async linkUrls(
    orgId: string,
    links: { campaignId: string; linkId: string }[],
  ): Promise<Map<string, string>> {
    const urls = new Map<string, string>();
    if (links.length === 0) return urls;
    const items = await batchGet(
      this.table,
      links.map(({ campaignId, linkId }) =>
        keys.campaignLink(orgId, campaignId, linkId),
      ),
      { consistent: false },
    );
    for (const item of items) {
      const campaignId = /#CAMPAIGN#([^#]+)$/.exec(String(item.PK))?.[1];
      const linkId = String(item.SK).slice('LINK#'.length);
      urls.set(`${campaignId}#${linkId}`, parseItem(LinkItem, item).url);
    }
    return urls;
  }

  /** A collection of the organization, projected and parsed, page by page. */
  private async *pagesOf<T>(
    collection: QueryKey,
    schema: ItemSchema<T>,
    project: readonly string[],
    options: { consistent?: boolean } = {},
  ): AsyncGenerator<T[]> {
    for await (const page of queryPages(this.table, collection, {
      project,
      ...options,
    })) {
      yield page.map((item) => parseItem(schema, item));
    }
  }
}
