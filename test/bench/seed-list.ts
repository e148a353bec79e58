/**
 * The benchmarks' seeder of a big list: writes its contacts with raw
 * BatchWriteItem requests, as the repositories would write them (each
 * contact item, its id pointer, its tag index entries, the topic's opt-outs
 * and each declining address's declined topics), then sets every counter
 * the transactions would have moved (the list's per status, each tag's
 * carriers and subscribed carriers in the list, the topic's opt-outs and
 * its subscribed decliners in the list). Far faster than the API's import,
 * which writes each contact in a transaction.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { toItem } from '../../shared/adapters/aws/dynamo-contact-repository.ts';
import {
  type BatchWriteRequest,
  batchWrite,
  type DynamoTable,
} from '../../shared/adapters/aws/dynamo-table.ts';
import type { Contact } from '../../shared/audience/model.ts';
import { entityType } from '../../shared/db/items.ts';
import { keys } from '../../shared/db/keys.ts';

/** What the seeded list holds. */
export interface SeedPlan {
  orgId: string;
  listId: string;
  contacts: number;
  /** The email of the contact at position `i` (sorted as `i`). */
  emailOf: (i: number) => string;
  /** Its tags (ids). */
  tagsOf: (i: number) => string[];
  /** Unsubscribed rather than subscribed. */
  unsubscribed: (i: number) => boolean;
  /** The topic it declined, if any. */
  declines: (i: number) => string | undefined;
}

/** Requests in flight at once (each 25 items). */
const IN_FLIGHT = 16;

/** Seeds the list; returns the contact id at position 0 (for GETs by id). */
export const seedList = async (
  table: DynamoTable,
  plan: SeedPlan,
  progress: (done: number) => void = () => {},
): Promise<string> => {
  const { orgId, listId } = plan;
  const at = '2026-11-01T00:00:00.000Z';
  const statuses = { subscribed: 0, unsubscribed: 0 };
  const tagCounts = new Map<string, { carriers: number; subscribed: number }>();
  const topicCounts = new Map<
    string,
    { optOuts: number; subscribed: number }
  >();
  let firstId = '';
  const requestsOf = (i: number): BatchWriteRequest[] => {
    const email = plan.emailOf(i);
    const tagIds = plan.tagsOf(i);
    const subscribed = !plan.unsubscribed(i);
    const contact: Contact = {
      id: randomUUID(),
      listId,
      email,
      status: subscribed ? 'subscribed' : 'unsubscribed',
      tagIds,
      createdAt: at,
      updatedAt: at,
      version: 1,
      firstName: `Reader ${i}`,
      joinedAt: at,
      ...(subscribed ? {} : { unsubscribedAt: at }),
    };
    if (i === 0) firstId = contact.id;
    statuses[contact.status as 'subscribed' | 'unsubscribed']++;
    const requests: BatchWriteRequest[] = [
      { PutRequest: { Item: toItem(orgId, contact) } },
      {
        PutRequest: {
          Item: {
            ...keys.contactById(orgId, contact.id),
            ...entityType('ContactPointer'),
            listId,
            email,
          },
        },
      },
    ];
    for (const tagId of tagIds) {
      const count = tagCounts.get(tagId) ?? { carriers: 0, subscribed: 0 };
      count.carriers++;
      if (subscribed) count.subscribed++;
      tagCounts.set(tagId, count);
      requests.push({
        PutRequest: {
          Item: {
            ...keys.taggedContact(orgId, listId, tagId, email),
            ...entityType('TaggedContact'),
            email,
          },
        },
      });
    }
    const topicId = plan.declines(i);
    if (topicId) {
      const count = topicCounts.get(topicId) ?? { optOuts: 0, subscribed: 0 };
      count.optOuts++;
      if (subscribed) count.subscribed++;
      topicCounts.set(topicId, count);
      requests.push(
        {
          PutRequest: {
            Item: {
              ...keys.topicOptOut(orgId, topicId, email),
              ...entityType('TopicOptOut'),
              email,
              contactId: contact.id,
              optedOutAt: at,
            },
          },
        },
        {
          PutRequest: {
            Item: {
              ...keys.declinedTopics(orgId, email),
              ...entityType('DeclinedTopics'),
              version: 1,
              topicIds: new Set([topicId]),
            },
          },
        },
      );
    }
    return requests;
  };

  // Contacts in chunks; each chunk's requests written IN_FLIGHT at a time.
  const CHUNK = 2000;
  for (let from = 0; from < plan.contacts; from += CHUNK) {
    const requests: BatchWriteRequest[] = [];
    for (let i = from; i < Math.min(plan.contacts, from + CHUNK); i++) {
      requests.push(...requestsOf(i));
    }
    const slices: BatchWriteRequest[][] = [];
    for (let i = 0; i < requests.length; i += 25) {
      slices.push(requests.slice(i, i + 25));
    }
    for (let i = 0; i < slices.length; i += IN_FLIGHT) {
      await Promise.all(
        slices.slice(i, i + IN_FLIGHT).map((slice) => batchWrite(table, slice)),
      );
    }
    progress(Math.min(plan.contacts, from + CHUNK));
  }

  // The counters the transactions would have moved.
  const add = async (
    key: { PK: string; SK: string },
    counts: Record<string, number>,
  ) => {
    const entries = Object.entries(counts);
    await table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: key,
        UpdateExpression: `ADD ${entries.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(
          entries.map(([name], i) => [`#c${i}`, name]),
        ),
        ExpressionAttributeValues: Object.fromEntries(
          entries.map(([, n], i) => [`:c${i}`, n]),
        ),
      }),
    );
  };
  await add(keys.list(orgId, listId), {
    contactCount: plan.contacts,
    subscribedCount: statuses.subscribed,
    unsubscribedCount: statuses.unsubscribed,
  });
  for (const [tagId, count] of tagCounts) {
    await add(keys.tag(orgId, tagId), {
      contactCount: count.carriers,
      [`inList#${listId}`]: count.carriers,
      [`subscribedInList#${listId}`]: count.subscribed,
    });
  }
  for (const [topicId, count] of topicCounts) {
    await add(keys.topic(orgId, topicId), { optOutCount: count.optOuts });
    await add(keys.topicAudience(orgId, topicId), {
      [`declinedInList#${listId}`]: count.subscribed,
    });
  }
  return firstId;
};
