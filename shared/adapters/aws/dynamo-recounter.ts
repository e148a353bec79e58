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
 * It also rebuilds each address's declined topics from the opt-outs. Each counter is set to
 * what a full read found; a write to the organization during the recount
 * may leave a counter off by that write, so run it while the organization
 * is quiet (or run it twice).
 */
import {
  paginateQuery,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { CONTACT_STATUSES, type ContactStatus } from '../../audience/model.ts';
import { CAMPAIGN_STATUSES } from '../../campaigns/model.ts';
import { entityType } from '../../db/items.ts';
import { type Key, keys, type QueryKey } from '../../db/keys.ts';
import type { Recounter, RecountReport } from '../../organizations/ports.ts';
import { collectionCounterKey } from './dynamo-collections.ts';
import {
  contactFromItem,
  topicDeclinedCountAttribute,
} from './dynamo-contact-repository.ts';
import { statusCountAttribute } from './dynamo-list-repository.ts';
import {
  type BatchWriteRequest,
  batchWrite,
  type DynamoTable,
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
} as const;

/** Recounts an organization's counters and rebuilds its tag index. */
export class DynamoRecounter implements Recounter {
  constructor(private readonly table: DynamoTable) {}

  async recount(orgId: string): Promise<RecountReport> {
    const collections: Record<string, number> = {};
    for (const [name, collection] of Object.entries(COLLECTIONS)) {
      const items = await this.all(collection(orgId), ['PK']);
      collections[name] = items.length;
      await this.setCounter(collectionCounterKey(collection(orgId)), {
        count: items.length,
      });
    }
    const sequences = keys.sequencesOfOrganization(orgId);
    const heads = await this.all(sequences, ['kind']);
    for (const kind of ['sequence', 'series'] as const) {
      const count = heads.filter((item) => item.kind === kind).length;
      collections[kind === 'sequence' ? 'sequences' : 'series'] = count;
      await this.setCounter(collectionCounterKey(sequences, kind), { count });
    }
    const campaigns = await this.all(keys.campaignsOfOrganization(orgId), [
      'status',
    ]);
    const byStatus = Object.fromEntries(
      CAMPAIGN_STATUSES.map((status) => [
        status,
        campaigns.filter((item) => item.status === status).length,
      ]),
    );
    collections.campaigns = campaigns.length;
    await this.setCounter(
      keys.campaignCounts(orgId),
      byStatus,
      'CampaignCounts',
    );

    const tagIds = (await this.all(keys.tagsOfOrganization(orgId), ['id'])).map(
      (item) => String(item.id),
    );
    const lists = (await this.all(keys.listsOfOrganization(orgId), ['id'])).map(
      (item) => String(item.id),
    );
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
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.tag(orgId, tagId),
          UpdateExpression: 'SET contactCount = :count',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':count': count },
        }),
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
    const topicIds = (
      await this.all(keys.topicsOfOrganization(orgId), ['id'])
    ).map((item) => String(item.id));
    const byTopic = new Map<string, Set<string>>();
    const byAddress = new Map<string, string[]>();
    for (const topicId of topicIds) {
      const query = keys.topicOptOuts(orgId, topicId);
      const emails = new Set(
        (await this.all(query, ['SK'])).map((item) =>
          String(item.SK).slice(query.skPrefix.length),
        ),
      );
      byTopic.set(topicId, emails);
      for (const email of emails) {
        byAddress.set(email, [...(byAddress.get(email) ?? []), topicId]);
      }
    }
    const stored = keys.declinedTopics(orgId, '');
    for (const item of await this.all({ PK: stored.PK, skPrefix: stored.SK }, [
      'SK',
    ])) {
      const email = String(item.SK).slice(stored.SK.length);
      if (!byAddress.has(email)) byAddress.set(email, []);
    }
    const write = async ([email, declined]: [string, string[]]) => {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.declinedTopics(orgId, email),
          UpdateExpression: declined.length
            ? 'SET #type = :type, topicIds = :topics ADD version :one'
            : 'SET #type = :type REMOVE topicIds ADD version :one',
          ExpressionAttributeNames: { '#type': '_type' },
          ExpressionAttributeValues: {
            ':type': 'DeclinedTopics',
            ':one': 1,
            ...(declined.length ? { ':topics': new Set(declined) } : {}),
          },
        }),
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
    const contacts = (await this.all(keys.contactsOfList(orgId, listId))).map(
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
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.list(orgId, listId),
        UpdateExpression: `SET contactCount = :total, ${CONTACT_STATUSES.map(
          (_, i) => `#s${i} = :s${i}`,
        ).join(', ')}`,
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: Object.fromEntries(
          CONTACT_STATUSES.map((status, i) => [
            `#s${i}`,
            statusCountAttribute(status),
          ]),
        ),
        ExpressionAttributeValues: {
          ':total': contacts.length,
          ...Object.fromEntries(
            CONTACT_STATUSES.map((status, i) => [`:s${i}`, statuses[status]]),
          ),
        },
      }),
    );
    const subscribed = new Set(
      contacts.filter((c) => c.status === 'subscribed').map((c) => c.email),
    );
    const declinedTopics: Record<string, number> = {};
    for (const [topicId, emails] of decliners.byTopic) {
      const count = [...emails].filter((email) => subscribed.has(email)).length;
      if (count) declinedTopics[topicId] = count;
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.topicAudience(orgId, topicId),
          UpdateExpression: 'SET #type = :type, #count = :count',
          ExpressionAttributeNames: {
            '#type': '_type',
            '#count': topicDeclinedCountAttribute(listId),
          },
          ExpressionAttributeValues: {
            ':type': 'TopicAudience',
            ':count': count,
          },
        }),
      );
    }
    const tags: Record<string, number> = {};
    const subscribedWithTag: Record<string, number> = {};
    for (const [tagId, emails] of tagged) {
      tags[tagId] = emails.size;
      const subscribedCarriers = [...emails].filter((email) =>
        subscribed.has(email),
      ).length;
      if (subscribedCarriers) subscribedWithTag[tagId] = subscribedCarriers;
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.tag(orgId, tagId),
          UpdateExpression: 'SET #count = :count, #subscribed = :subscribed',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeNames: {
            '#count': tagListCountAttribute(listId),
            '#subscribed': tagSubscribedCountAttribute(listId),
          },
          ExpressionAttributeValues: {
            ':count': emails.size,
            ':subscribed': subscribedCarriers,
          },
        }),
      );
      const entries = new Set(
        (
          await this.all(keys.taggedContactsOfList(orgId, listId, tagId), [
            'email',
          ])
        ).map((item) => String(item.email)),
      );
      const writes: BatchWriteRequest[] = [];
      for (const email of emails) {
        if (entries.has(email)) continue;
        writes.push({
          PutRequest: {
            Item: {
              ...keys.taggedContact(orgId, listId, tagId, email),
              ...entityType('TaggedContact'),
              email,
            },
          },
        });
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

  /** Sets a counter item's attributes (creating it), keeping its type. */
  private async setCounter(
    key: Key,
    counts: Record<string, number>,
    type: 'CollectionCounter' | 'CampaignCounts' = 'CollectionCounter',
  ): Promise<void> {
    const entries = Object.entries(counts);
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: key,
        UpdateExpression: `SET #type = :type, ${entries
          .map((_, i) => `#c${i} = :c${i}`)
          .join(', ')}`,
        ExpressionAttributeNames: {
          '#type': '_type',
          ...Object.fromEntries(entries.map(([name], i) => [`#c${i}`, name])),
        },
        ExpressionAttributeValues: {
          ':type': type,
          ...Object.fromEntries(entries.map(([, n], i) => [`:c${i}`, n])),
        },
      }),
    );
  }

  /** Every item under a prefix (strongly consistent), projected if asked. */
  private async all(
    query: QueryKey,
    attributes?: string[],
  ): Promise<Record<string, unknown>[]> {
    const input: QueryCommandInput = {
      TableName: this.table.tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': query.PK, ':prefix': query.skPrefix },
      ConsistentRead: true,
      ...(attributes
        ? {
            ProjectionExpression: attributes.map((_, i) => `#a${i}`).join(', '),
            ExpressionAttributeNames: Object.fromEntries(
              attributes.map((name, i) => [`#a${i}`, name]),
            ),
          }
        : {}),
    };
    const items: Record<string, unknown>[] = [];
    for await (const page of paginateQuery(
      { client: this.table.client },
      input,
    )) {
      items.push(...(page.Items ?? []));
    }
    return items;
  }
}
