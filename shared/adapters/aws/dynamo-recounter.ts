/**
 * Driven adapter: recounts what the table keeps counted for one
 * organization, from the items themselves, and rebuilds its tag index.
 *
 * Counters are moved by the transactions that change what they count, and
 * the tag index by its stream consumer, so nothing here runs in normal
 * operation. It is the operator's repair (`admin org recount`): after data
 * written by a version that counted elsewhere (or did not count: the
 * subscribed carriers of a tag per list and the subscribed decliners of a
 * topic per list came with big lists; before, they are absent, read as 0),
 * or after the tag index consumer gave a batch up (its on-failure queue).
 * It also rebuilds each address's declined topics from the opt-outs, and
 * counts the suppression list's log and lifts. Each counter is set to
 * what a full read found; a write to the organization during the recount
 * may leave a counter off by that write, so run it while the organization
 * is quiet (or run it twice).
 */
import * as v from 'valibot';
import { CONTACT_STATUSES, type ContactStatus } from '../../audience/model.ts';
import { CAMPAIGN_STATUSES } from '../../campaigns/model.ts';
import type { PathOf } from '../../db/expressions.ts';
import { itemSchema } from '../../db/items.ts';
import { keys, type QueryKey } from '../../db/keys.ts';
import type { Recounter, RecountReport } from '../../organizations/ports.ts';
import { CountsItem as CampaignCountsItem } from './dynamo-campaign-repository.ts';
import {
  CollectionCounterItem,
  collectionCounterKey,
} from './dynamo-collections.ts';
import {
  contactFromItem,
  DeclinedTopicsItem,
  TaggedContactItem,
  topicDeclinedCountAttribute,
} from './dynamo-contact-repository.ts';
import { type EntitySchema, entity } from './dynamo-entity.ts';
import { ListItem, statusCountAttribute } from './dynamo-list-repository.ts';
import {
  type BatchWriteRequest,
  batchWrite,
  Counter,
  type DynamoTable,
  type QueryReadOptions,
  queryPages,
} from './dynamo-table.ts';
import {
  tagListCountAttribute,
  tagSubscribedCountAttribute,
} from './dynamo-tag-repository.ts';

/** The counted collections of an organization, by name in the report. */
const COLLECTIONS = {
  lists: keys.listsOfOrganization,
  tags: keys.tagsOfOrganization,
  templates: keys.templatesOfOrganization,
  topics: keys.topicsOfOrganization,
  segments: keys.segmentsOfOrganization,
  signupPages: keys.signupPagesOfOrganization,
  suppressions: keys.suppressionLog,
  suppressionLifts: keys.suppressionLifts,
} as const;

/** The id of a tag, list or topic: what the recount reads of them. */
const idOf = (type: 'Tag' | 'List' | 'Topic') =>
  itemSchema(type, { id: v.string() });

/** The kind of a sequence's head: sequences and series share a prefix. */
const SequenceKindItem = itemSchema('Sequence', {
  kind: v.picklist(['sequence', 'series']),
});

const CampaignStatusItem = itemSchema('Campaign', {
  status: v.picklist(CAMPAIGN_STATUSES),
});

/**
 * Items whose counters are named per list at run time (`inList#<listId>`,
 * `declinedInList#<listId>`…): their schemas take any attribute.
 */
const TagCountersItem = {
  type: 'Tag',
  schema: v.looseObject({ contactCount: Counter }),
} as const;
const TopicAudienceItem = {
  type: 'TopicAudience',
  schema: v.looseObject({}),
} as const;

/** Recounts an organization's counters and rebuilds its tag index. */
export class DynamoRecounter implements Recounter {
  private readonly counters;
  private readonly campaignCounts;
  private readonly lists;
  private readonly tags;
  private readonly audiences;
  private readonly declined;
  private readonly tagged;

  constructor(private readonly table: DynamoTable) {
    this.counters = entity(table, CollectionCounterItem);
    this.campaignCounts = entity(table, CampaignCountsItem);
    this.lists = entity(table, ListItem);
    this.tags = entity(table, TagCountersItem);
    this.audiences = entity(table, TopicAudienceItem);
    this.declined = entity(table, DeclinedTopicsItem);
    this.tagged = entity(table, TaggedContactItem);
  }

  async recount(orgId: string): Promise<RecountReport> {
    const collections: Record<string, number> = {};
    for (const [name, collection] of Object.entries(COLLECTIONS)) {
      const count = (await this.sortKeys(collection(orgId))).length;
      collections[name] = count;
      await this.counters.update(collectionCounterKey(collection(orgId)), {
        set: { count },
      });
    }
    const sequences = keys.sequencesOfOrganization(orgId);
    const heads = await this.all(SequenceKindItem, sequences, ['kind']);
    for (const kind of ['sequence', 'series'] as const) {
      const count = heads.filter((item) => item.kind === kind).length;
      collections[kind === 'sequence' ? 'sequences' : 'series'] = count;
      await this.counters.update(collectionCounterKey(sequences, kind), {
        set: { count },
      });
    }
    const campaigns = await this.all(
      CampaignStatusItem,
      keys.campaignsOfOrganization(orgId),
      ['status'],
    );
    const byStatus = Object.fromEntries(
      CAMPAIGN_STATUSES.map((status) => [
        status,
        campaigns.filter((item) => item.status === status).length,
      ]),
    );
    collections.campaigns = campaigns.length;
    await this.campaignCounts.update(keys.campaignCounts(orgId), {
      set: byStatus,
    });

    const tagIds = await this.ids('Tag', keys.tagsOfOrganization(orgId));
    const lists = await this.ids('List', keys.listsOfOrganization(orgId));
    const decliners = await this.rebuildDeclined(orgId);
    const carriers = new Map<string, number>(tagIds.map((id) => [id, 0]));
    const index = { written: 0, removed: 0 };
    const listReports: RecountReport['lists'] = [];
    for (const listId of lists) {
      const report = await this.recountList(
        orgId,
        listId,
        tagIds,
        decliners,
        index,
      );
      for (const [tagId, count] of Object.entries(report.tags)) {
        carriers.set(tagId, (carriers.get(tagId) ?? 0) + count);
      }
      listReports.push(report);
    }
    for (const [tagId, count] of carriers) {
      await this.tags.update(
        keys.tag(orgId, tagId),
        { set: { contactCount: count } },
        { if: (w) => w.exists() },
      );
    }
    return {
      orgId,
      collections,
      lists: listReports,
      tagIndex: index,
      declinedAddresses: decliners.addresses,
    };
  }

  /**
   * Every address's declined topics, from the topics' opt-outs: written on
   * each address item (its version moved on, so a contact write that read
   * the old one reads again), and an address no longer declining anything
   * emptied. Returns each topic's decliners.
   */
  private async rebuildDeclined(
    orgId: string,
  ): Promise<{ byTopic: Map<string, Set<string>>; addresses: number }> {
    const topicIds = await this.ids('Topic', keys.topicsOfOrganization(orgId));
    const byTopic = new Map<string, Set<string>>();
    const byAddress = new Map<string, string[]>();
    for (const topicId of topicIds) {
      const emails = new Set(
        await this.sortKeys(keys.topicOptOuts(orgId, topicId)),
      );
      byTopic.set(topicId, emails);
      for (const email of emails) {
        byAddress.set(email, [...(byAddress.get(email) ?? []), topicId]);
      }
    }
    const stored = keys.declinedTopics(orgId, '');
    for (const email of await this.sortKeys({
      PK: stored.PK,
      skPrefix: stored.SK,
    })) {
      if (!byAddress.has(email)) byAddress.set(email, []);
    }
    const write = async ([email, declined]: [string, string[]]) => {
      await this.declined.update(
        keys.declinedTopics(orgId, email),
        declined.length
          ? { set: { topicIds: new Set(declined) }, add: { version: 1 } }
          : { remove: ['topicIds'], add: { version: 1 } },
      );
    };
    const entries = [...byAddress];
    for (let i = 0; i < entries.length; i += 25) {
      await Promise.all(entries.slice(i, i + 25).map(write));
    }
    return { byTopic, addresses: entries.length };
  }

  /**
   * One list: its counters from its contacts, each tag's count in it, and
   * its tag index made equal to its contacts' tags.
   */
  private async recountList(
    orgId: string,
    listId: string,
    tagIds: string[],
    decliners: { byTopic: Map<string, Set<string>> },
    index: { written: number; removed: number },
  ): Promise<RecountReport['lists'][number]> {
    const contacts = (await this.items(keys.contactsOfList(orgId, listId))).map(
      contactFromItem,
    );
    const statuses = Object.fromEntries(
      CONTACT_STATUSES.map((status) => [status, 0]),
    ) as Record<ContactStatus, number>;
    const tagged = new Map<string, Set<string>>(
      tagIds.map((id) => [id, new Set<string>()]),
    );
    for (const contact of contacts) {
      statuses[contact.status]++;
      for (const tagId of contact.tagIds) {
        tagged.get(tagId)?.add(contact.email);
      }
    }
    await this.lists.update(
      keys.list(orgId, listId),
      {
        set: {
          contactCount: contacts.length,
          ...Object.fromEntries(
            CONTACT_STATUSES.map((status) => [
              statusCountAttribute(status),
              statuses[status],
            ]),
          ),
        },
      },
      { if: (w) => w.exists() },
    );
    const subscribed = new Set(
      contacts.filter((c) => c.status === 'subscribed').map((c) => c.email),
    );
    const declinedTopics: Record<string, number> = {};
    for (const [topicId, emails] of decliners.byTopic) {
      const count = [...emails].filter((email) => subscribed.has(email)).length;
      if (count) declinedTopics[topicId] = count;
      await this.audiences.update(keys.topicAudience(orgId, topicId), {
        set: { [topicDeclinedCountAttribute(listId)]: count },
      });
    }
    const tags: Record<string, number> = {};
    const subscribedWithTag: Record<string, number> = {};
    for (const [tagId, emails] of tagged) {
      tags[tagId] = emails.size;
      const subscribedCarriers = [...emails].filter((email) =>
        subscribed.has(email),
      ).length;
      if (subscribedCarriers) subscribedWithTag[tagId] = subscribedCarriers;
      await this.tags.update(
        keys.tag(orgId, tagId),
        {
          set: {
            [tagListCountAttribute(listId)]: emails.size,
            [tagSubscribedCountAttribute(listId)]: subscribedCarriers,
          },
        },
        { if: (w) => w.exists() },
      );
      const entries = new Set(
        (
          await this.all(
            TaggedContactItem,
            keys.taggedContactsOfList(orgId, listId, tagId),
            ['email'],
          )
        ).map((item) => item.email),
      );
      const writes: BatchWriteRequest[] = [];
      for (const email of emails) {
        if (entries.has(email)) continue;
        writes.push(
          this.tagged.putRequest(
            keys.taggedContact(orgId, listId, tagId, email),
            { email },
          ),
        );
      }
      for (const email of entries) {
        if (emails.has(email)) continue;
        writes.push({
          DeleteRequest: {
            Key: keys.taggedContact(orgId, listId, tagId, email),
          },
        });
      }
      await batchWrite(this.table, writes);
      for (const write of writes) {
        if ('PutRequest' in write) index.written++;
        else index.removed++;
      }
    }
    return {
      listId,
      contacts: contacts.length,
      statuses,
      tags: Object.fromEntries(
        Object.entries(tags).filter(([, count]) => count > 0),
      ),
      subscribedWithTag,
      declinedTopics,
    };
  }

  /** Every item under a prefix (strongly consistent), of any type. */
  private async items(
    query: QueryKey,
    options: Pick<QueryReadOptions, 'project'> = {},
  ): Promise<Record<string, unknown>[]> {
    const found: Record<string, unknown>[] = [];
    for await (const page of queryPages(this.table, query, {
      ...options,
      consistent: true,
    })) {
      found.push(...page);
    }
    return found;
  }

  /** Every item under a prefix (strongly consistent), projected, parsed. */
  private all<I, O>(
    item: EntitySchema<I, O>,
    query: QueryKey,
    project: PathOf<I>[],
  ): Promise<O[]> {
    return entity(this.table, item).all(query, { project, consistent: true });
  }

  /** The ids of a collection's items. */
  private async ids(
    type: 'Tag' | 'List' | 'Topic',
    query: QueryKey,
  ): Promise<string[]> {
    return (await this.all(idOf(type), query, ['id'])).map((item) => item.id);
  }

  /** What follows the prefix in the sort key of every item under it. */
  private async sortKeys(query: QueryKey): Promise<string[]> {
    return (await this.items(query, { project: [] })).map((item) =>
      String(item.SK).slice(query.skPrefix.length),
    );
  }
}
