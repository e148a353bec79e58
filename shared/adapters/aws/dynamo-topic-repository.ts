/**
 * Driven adapter: topics in their organization's partition (names reserved
 * case-insensitively), and each topic's opt-outs in a partition of their
 * own, keyed by email, counted on the topic in the same transaction.
 */
import * as v from 'valibot';
import { tagNameKey } from '../../audience/model.ts';
import { itemSchema } from '../../db/items.ts';
import { keys, type QueryKey } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Page, PageRequest, ReadOptions } from '../../ports.ts';
import { retryOnConflict } from '../../retry.ts';
import type { Topic, TopicOptOut } from '../../topics/model.ts';
import type { TopicRepository } from '../../topics/ports.ts';
import {
  moveCollectionCounter,
  pageByPrefix,
  pageOfCollection,
  putWithReservation,
} from './dynamo-collections.ts';
import {
  ContactItem,
  contactFromItem,
  DeclinedTopicsItem,
  declinedTopicsOf,
  moveTopicCounters,
} from './dynamo-contact-repository.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  Counter,
  type DynamoTable,
  deleteByPrefix,
  deleteKeys,
  failedConditions,
  isConditionFailure,
  queryPages,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

/** The reservation of a topic's name. */
const TopicNameItem = itemSchema('TopicName', { topicId: v.string() });

/** DynamoDB's limit of items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

/** A topic, with its opt-out counter. */
export const TopicItem = itemSchema('Topic', {
  id: v.string(),
  name: v.string(),
  description: v.optional(v.string()),
  createdAt: v.string(),
  updatedAt: v.string(),
  optOutCount: Counter,
});

/** An address that declined a topic. */
export const TopicOptOutItem = itemSchema('TopicOptOut', {
  email: v.string(),
  contactId: v.string(),
  optedOutAt: v.string(),
});

const nameTaken = (name: string) => (cause: unknown) =>
  new ConflictError(
    'topic.nameTaken',
    `A topic named "${name}" already exists`,
    { cause },
  );

const notFound = (topicId: string) => (cause: unknown) =>
  new NotFoundError('topic.notFound', `No topic ${topicId}`, { cause });

/** Topics, their name reservations, their opt-outs and counters. */
export class DynamoTopicRepository implements TopicRepository {
  private readonly topics;
  private readonly names;
  private readonly optOuts;
  private readonly declined;
  private readonly contacts;

  constructor(private readonly table: DynamoTable) {
    this.topics = entity(table, TopicItem);
    this.names = entity(table, TopicNameItem);
    this.optOuts = entity(table, TopicOptOutItem);
    this.declined = entity(table, DeclinedTopicsItem);
    this.contacts = entity(table, ContactItem);
  }

  async create(orgId: string, topic: Topic): Promise<void> {
    await putWithReservation(this.table, {
      reservation: this.names.putTx(
        keys.topicName(orgId, tagNameKey(topic.name)),
        { topicId: topic.id },
        { if: (w) => w.missing(), otherwise: nameTaken(topic.name) },
      ),
      item: this.topics.putTx(keys.topic(orgId, topic.id), topic, {
        if: (w) => w.missing(),
      }),
      counted: keys.topicsOfOrganization(orgId),
    });
  }

  get(orgId: string, topicId: string): Promise<Topic | undefined> {
    return this.topics.get(keys.topic(orgId, topicId), { consistent: true });
  }

  async page(orgId: string, request: PageRequest): Promise<Page<Topic>> {
    const page = await pageOfCollection(
      this.table,
      keys.topicsOfOrganization(orgId),
      request,
    );
    return {
      items: page.items.map((item) => this.topics.parse(item)),
      total: page.total,
    };
  }

  async update(orgId: string, before: Topic, after: Topic): Promise<void> {
    const renamed = tagNameKey(before.name) !== tagNameKey(after.name);
    const { description } = after;
    await transactWrite(this.table, [
      ...(renamed
        ? [
            this.names.putTx(
              keys.topicName(orgId, tagNameKey(after.name)),
              { topicId: after.id },
              { if: (w) => w.missing(), otherwise: nameTaken(after.name) },
            ),
            this.names.deleteTx(keys.topicName(orgId, tagNameKey(before.name))),
          ]
        : []),
      // The counter may move meanwhile: write only name and description.
      this.topics.updateTx(
        keys.topic(orgId, after.id),
        {
          set: {
            name: after.name,
            updatedAt: after.updatedAt,
            ...(description ? { description } : {}),
          },
          ...(description ? {} : { remove: ['description'] }),
        },
        {
          if: (w) => w.and(w.exists(), w.eq('name', before.name)),
          otherwise: (cause) =>
            new ConflictError(
              'topic.changed',
              'The topic changed or was deleted meanwhile; read it again',
              { cause },
            ),
        },
      ),
    ]);
  }

  async delete(orgId: string, topic: Topic): Promise<void> {
    // 1. The topic, its name and the counter, together.
    await transactWrite(this.table, [
      this.topics.deleteTx(keys.topic(orgId, topic.id), {
        if: (w) => w.exists(),
        otherwise: notFound(topic.id),
      }),
      this.names.deleteTx(keys.topicName(orgId, tagNameKey(topic.name))),
      moveCollectionCounter(this.table, keys.topicsOfOrganization(orgId), -1),
    ]);
    // 2. Its opt-outs and counters: unreachable once the topic is gone,
    // so a failure here leaves nothing visible behind. Each address first
    // forgets the topic, so contact writes stop moving its counters.
    const optOuts = keys.topicOptOuts(orgId, topic.id);
    for await (const emails of this.sortKeys(optOuts)) {
      for (let i = 0; i < emails.length; i += 25) {
        await Promise.all(
          emails.slice(i, i + 25).map((email) =>
            this.declined
              .update(
                keys.declinedTopics(orgId, email),
                {
                  delete: { topicIds: new Set([topic.id]) },
                  add: { version: 1 },
                },
                { if: (w) => w.exists() },
              )
              .catch((error: unknown) => {
                if (!isConditionFailure(error)) throw error;
              }),
          ),
        );
      }
    }
    await deleteByPrefix(this.table, optOuts);
    await deleteKeys(this.table, [keys.topicAudience(orgId, topic.id)]);
  }

  async addOptOut(
    orgId: string,
    topicId: string,
    optOut: TopicOptOut,
  ): Promise<boolean> {
    return this.changeOptOut(
      orgId,
      topicId,
      optOut.email,
      1,
      this.optOuts.putTx(
        keys.topicOptOut(orgId, topicId, optOut.email),
        optOut,
        {
          if: (w) => w.missing(),
        },
      ),
    );
  }

  async removeOptOut(
    orgId: string,
    topicId: string,
    email: string,
  ): Promise<boolean> {
    return this.changeOptOut(
      orgId,
      topicId,
      email,
      -1,
      this.optOuts.deleteTx(keys.topicOptOut(orgId, topicId, email), {
        if: (w) => w.exists(),
      }),
    );
  }

  async declinedBy(orgId: string, email: string): Promise<string[]> {
    const found = await declinedTopicsOf(this.table, orgId, [email]);
    return found.get(email)?.topicIds ?? [];
  }

  async forgetAddress(orgId: string, email: string): Promise<number> {
    return retryOnConflict(async (retryable) => {
      const declined = (await declinedTopicsOf(this.table, orgId, [email])).get(
        email,
      );
      if (declined?.version === undefined) return 0;
      let removed = 0;
      for (const topicId of declined.topicIds) {
        if (await this.removeOptOut(orgId, topicId, email)) removed++;
      }
      try {
        // Gone only if nothing was declined again meanwhile (a set's last
        // element deleted takes the attribute with it).
        await this.declined.delete(keys.declinedTopics(orgId, email), {
          if: (w) => w.missing('topicIds'),
        });
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        retryable(
          new ConflictError(
            'write.contended',
            'The address declined a topic while it was being erased; retry',
            { cause: error },
          ),
        );
      }
      return removed;
    });
  }

  /**
   * Writes or deletes one opt-out and, in the same transaction, moves the
   * topic's counter by `delta`, the address's declined topics (and their
   * version) and the topic's per-list counters of subscribed decliners:
   * one per list where the address is a subscribed contact. Each contact of
   * the address (or its absence, in every other list) is checked as read,
   * and contact writes check the address's declined topics, so a status
   * change or an add racing the opt-out makes one of the two read again.
   * False when the opt-out was already in the wanted state.
   */
  private async changeOptOut(
    orgId: string,
    topicId: string,
    email: string,
    delta: 1 | -1,
    optOutWrite: TransactItem,
  ): Promise<boolean> {
    return retryOnConflict(async (retryable) => {
      const [declined, listIds] = await Promise.all([
        declinedTopicsOf(this.table, orgId, [email]),
        this.listIds(orgId),
      ]);
      const address = declined.get(email);
      const contacts = new Map(
        (
          await batchGet(
            this.table,
            listIds.map((listId) => keys.contact(orgId, listId, email)),
          )
        ).map((item) => {
          const contact = contactFromItem(item);
          return [contact.listId, contact];
        }),
      );
      const subscribedIn = new Map(
        [...contacts.values()]
          .filter((c) => c.status === 'subscribed')
          .map((c) => [c.listId, delta]),
      );
      const fixed = 4;
      // Every list's contact is checked as read; past a transaction's 100
      // items only the lists holding the address are (an add of it to
      // another list at the same instant may then go uncounted: recount).
      const checked =
        fixed + listIds.length <= MAX_TRANSACTION_ITEMS
          ? listIds
          : [...contacts.keys()];
      const topicIds = new Set([topicId]);
      const items: TransactItem[] = [
        optOutWrite,
        this.topics.updateTx(
          keys.topic(orgId, topicId),
          { add: { optOutCount: delta } },
          { if: (w) => w.exists() },
        ),
        this.declined.updateTx(
          keys.declinedTopics(orgId, email),
          delta === 1
            ? { add: { topicIds, version: 1 } }
            : { delete: { topicIds }, add: { version: 1 } },
          {
            if: (w) =>
              address?.version === undefined
                ? w.missing()
                : w.eq('version', address.version),
          },
        ),
        ...(subscribedIn.size
          ? [moveTopicCounters(this.table, orgId, topicId, subscribedIn)]
          : []),
        ...checked.map((listId) => {
          const contact = contacts.get(listId);
          return this.contacts.checkTx(
            keys.contact(orgId, listId, email),
            (w) => (contact ? w.eq('version', contact.version) : w.missing()),
          );
        }),
      ];
      try {
        await transactWrite(this.table, items);
        return true;
      } catch (error) {
        const failed = failedConditions(error);
        if (failed?.includes(1)) throw notFound(topicId)(error);
        if (failed?.includes(0)) return false;
        if (failed?.length) {
          // A contact or the address changed meanwhile: read them again.
          retryable(
            new ConflictError(
              'write.contended',
              'The address changed while its opt-out was being saved; retry',
              { cause: error },
            ),
          );
        }
        throw error;
      }
    });
  }

  /** The ids of the organization's lists (strongly consistent). */
  private async listIds(orgId: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const page of this.sortKeys(keys.listsOfOrganization(orgId), {
      consistent: true,
    })) {
      ids.push(...page);
    }
    return ids;
  }

  /** Page by page, what follows the prefix in each item's sort key. */
  private async *sortKeys(
    query: QueryKey,
    options: { consistent?: boolean } = {},
  ): AsyncGenerator<string[]> {
    for await (const page of queryPages(this.table, query, {
      ...options,
      project: [],
    })) {
      yield page.map((item) => String(item.SK).slice(query.skPrefix.length));
    }
  }

  async optedOut(
    orgId: string,
    topicId: string,
    emails: string[],
    options: ReadOptions = {},
  ): Promise<Set<string>> {
    const items = await batchGet(
      this.table,
      [...new Set(emails)].map((email) =>
        keys.topicOptOut(orgId, topicId, email),
      ),
      options,
    );
    return new Set(items.map((item) => this.optOuts.parse(item).email));
  }

  async pageOptOuts(
    orgId: string,
    topicId: string,
    total: number,
    request: PageRequest,
  ): Promise<Page<TopicOptOut>> {
    const page = await pageByPrefix(
      this.table,
      keys.topicOptOuts(orgId, topicId),
      total,
      request,
      { ascending: true },
    );
    return {
      items: page.items.map((item) => this.optOuts.parse(item)),
      total,
    };
  }
}
