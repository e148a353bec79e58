import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { importContacts } from '../../../shared/audience/bulk-import.ts';
import {
  addContact,
  resubscribeContact,
  unsubscribeContact,
  updateContact,
} from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { CONTACT_STATUSES } from '../../../shared/audience/model.ts';
import {
  listTags,
  tagContact,
  untagContact,
} from '../../../shared/audience/tags.ts';
import { keys } from '../../../shared/db/keys.ts';
import { AppError } from '../../../shared/errors.ts';
import {
  createTopic,
  optOutOfTopic,
  undoTopicOptOut,
} from '../../../shared/topics/topics.ts';
import { orgWithList } from '../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../support/dynamo.ts';

/** A small seeded generator (mulberry32), so a failure can be replayed. */
const random = (seed: number) => {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

describe('list and tag counters', () => {
  it('equal a full scan after a random mix of adds, imports, status changes and tag changes; so do the per-list tag counts (all and subscribed), the per-list topic decliners (through opt-outs and opt-ins) and, once the stream is read, the tag index', async () => {
    // Arrange
    const seed = Number(process.env.COUNTER_SEED ?? Date.now() % 100_000);
    const next = random(seed);
    const pick = <T>(items: readonly T[]): T =>
      items[Math.floor(next() * items.length)] as T;
    const { deps, tableName, events } = await createTestDeps();
    const { orgId, listId } = await orgWithList(deps);
    const second = await createList(deps, orgId, { name: 'Second' });
    const lists = [listId, second.id];
    const emails = Array.from({ length: 12 }, (_, i) => `p${i}@example.test`);
    const tagNames = ['red', 'green', 'blue', 'Red'];
    const contactIds: string[] = [];
    const tagIds: string[] = [];
    const topic = await createTopic(deps, orgId, { name: 'News' });

    const operations = [
      async () => {
        const { contact } = await addContact(deps, orgId, pick(lists), {
          email: pick(emails),
          doubleOptIn: next() < 0.3,
          tags: next() < 0.5 ? [pick(tagNames)] : [],
        });
        contactIds.push(contact.id);
      },
      async () =>
        importContacts(
          deps,
          orgId,
          pick(lists),
          Array.from({ length: 1 + Math.floor(next() * 6) }, () => ({
            email: pick(emails),
            status: pick(CONTACT_STATUSES),
            tags: [pick(tagNames), pick(tagNames)],
          })),
        ),
      async () => unsubscribeContact(deps, orgId, pick(contactIds)),
      async () => resubscribeContact(deps, orgId, pick(contactIds)),
      async () =>
        updateContact(deps, orgId, pick(contactIds), {
          status: pick(['subscribed', 'bounced', 'complained'] as const),
        }),
      async () => {
        const { tag } = await tagContact(deps, orgId, pick(contactIds), {
          name: pick(tagNames),
        });
        tagIds.push(tag.id);
      },
      async () => {
        if (tagIds.length) {
          await untagContact(deps, orgId, pick(contactIds), pick(tagIds));
        }
      },
      async () => optOutOfTopic(deps, orgId, topic.id, pick(contactIds)),
      async () => undoTopicOptOut(deps, orgId, topic.id, pick(contactIds)),
    ];

    // Act: 30 rounds of 4 operations at once, so some of them race.
    for (let round = 0; round < 30; round++) {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          const operation =
            contactIds.length === 0 ? operations[0] : pick(operations);
          try {
            await operation?.();
          } catch (error) {
            // Refusals by the rules (409 resubscribe, 400 pending…) are fine.
            if (!(error instanceof AppError)) throw error;
          }
        }),
      );
    }

    await events.settle();

    // Assert: every counter equals what a full scan counts.
    const dynamo = testEngineClient();
    const scan = async (query: { PK: string; skPrefix: string }) =>
      (
        await dynamo.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
            ExpressionAttributeValues: {
              ':pk': query.PK,
              ':prefix': query.skPrefix,
            },
          }),
        )
      ).Items ?? [];
    const tagCarriers = new Map<string, number>();
    const tags = await listTags(deps, orgId, { page: 1, limit: 100 });
    const declined = new Set(
      (await scan(keys.topicOptOuts(orgId, topic.id))).map((item) =>
        String(item.email),
      ),
    );
    for (const id of lists) {
      const Items = await scan(keys.contactsOfList(orgId, id));
      const list = await deps.lists.get(orgId, id);
      expect(
        await deps.audience.countDeclinedInList(orgId, topic.id, id),
        `seed ${seed} decliners in list ${id}`,
      ).toBe(
        Items.filter(
          (item) =>
            item.status === 'subscribed' && declined.has(String(item.email)),
        ).length,
      );
      expect(list?.contactCount, `seed ${seed}`).toBe(Items.length);
      for (const status of CONTACT_STATUSES) {
        expect(list?.statusCounts[status], `seed ${seed} ${status}`).toBe(
          Items.filter((item) => item.status === status).length,
        );
      }
      for (const item of Items) {
        for (const tagId of (item.tagIds as Set<string> | undefined) ?? []) {
          tagCarriers.set(tagId, (tagCarriers.get(tagId) ?? 0) + 1);
        }
      }
      for (const tag of tags.items) {
        const carriers = Items.filter((item) =>
          ((item.tagIds as Set<string> | undefined) ?? new Set()).has(tag.id),
        )
          .map((item) => String(item.email))
          .sort();
        const indexed = await scan(
          keys.taggedContactsOfList(orgId, id, tag.id),
        );
        expect(
          await deps.tags.countInList(orgId, tag.id, id),
          `seed ${seed} tag ${tag.name} in list ${id}`,
        ).toBe(carriers.length);
        expect(
          await deps.audience.countSubscribedWithTag(orgId, id, tag.id),
          `seed ${seed} subscribed with ${tag.name} in list ${id}`,
        ).toBe(
          Items.filter(
            (item) =>
              item.status === 'subscribed' &&
              ((item.tagIds as Set<string> | undefined) ?? new Set()).has(
                tag.id,
              ),
          ).length,
        );
        expect(
          indexed.map((item) => String(item.email)),
          `seed ${seed} index of ${tag.name} in list ${id}`,
        ).toEqual(carriers);
      }
    }
    expect(tags.total).toBe(3);
    for (const tag of tags.items) {
      expect(tag.contactCount, `seed ${seed} tag ${tag.name}`).toBe(
        tagCarriers.get(tag.id) ?? 0,
      );
    }
  });
});
