/**
 * The `contacts` stream consumer (audience facts, the tag index and the
 * contacts' activity): its handler as Lambda's DynamoDB trigger calls it
 * (records as Lambda sends them, partial batch responses), and a round
 * trip through the embedded engine's stream: a contact written by the
 * repository comes out as its events.
 */

import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { contactChangesConsumer } from '../../functions/contact-changes/consumer.ts';
import type { AudienceEvent } from '../../shared/audience/events.ts';
import type { Contact } from '../../shared/audience/model.ts';
import { keys } from '../../shared/db/keys.ts';
import { createStreamHandler } from '../../shared/streams/consumer.ts';
import type {
  WebhookEvent,
  WebhookEventType,
} from '../../shared/webhooks/events.ts';
import { orgWithList, uniqueEmail } from '../support/audience.ts';
import {
  createTestDeps,
  scanTable,
  testEngineClient,
} from '../support/dynamo.ts';
import { lambdaContext } from '../support/events.ts';

const ORG = 'org-1';

const contact = (overrides: Partial<Contact> = {}): Contact => ({
  id: 'c-1',
  listId: 'list-1',
  email: 'ann@example.test',
  status: 'subscribed',
  tagIds: [],
  joinedAt: '2026-11-21T09:00:00.000Z',
  createdAt: '2026-11-21T09:00:00.000Z',
  updatedAt: '2026-11-21T09:00:00.000Z',
  version: 1,
  ...overrides,
});

/** A contact item as the table stores it (and the stream shows it). */
const itemOf = (c: Contact, extra: Record<string, unknown> = {}) => {
  const { tagIds, ...rest } = c;
  return {
    ...keys.contact(ORG, c.listId, c.email),
    _type: 'Contact',
    ...rest,
    ...(tagIds.length ? { tagIds: new Set(tagIds) } : {}),
    ...extra,
  };
};

const image = (item: Record<string, unknown>) =>
  marshall(item) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];

const record = (
  sequenceNumber: string,
  after: Record<string, unknown>,
  before?: Record<string, unknown>,
): DynamoDBRecord => ({
  eventID: `e-${sequenceNumber}`,
  eventName: before ? 'MODIFY' : 'INSERT',
  eventSource: 'aws:dynamodb',
  eventVersion: '1.1',
  awsRegion: 'eu-west-1',
  eventSourceARN: 'arn:aws:dynamodb:eu-west-1:000000000000:table/t/stream/x',
  dynamodb: {
    ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
    SequenceNumber: sequenceNumber,
    StreamViewType: 'NEW_AND_OLD_IMAGES',
    NewImage: image(after),
    ...(before ? { OldImage: image(before) } : {}),
  },
});

/**
 * The handler over recording deps; `fail` makes publish throw for a
 * contact. Every organization takes `contact.*` webhook events; each
 * publish of them is kept (`webhookFail` makes them throw).
 */
const setup = async (
  fail?: (events: AudienceEvent[]) => boolean,
  webhookFail = false,
) => {
  const { deps, tableName } = await createTestDeps();
  const published: AudienceEvent[] = [];
  const webhookPublishes: WebhookEvent[][] = [];
  const handler = createStreamHandler(
    {
      ...deps,
      webhookEvents: {
        wanted: async () =>
          new Set<WebhookEventType>(['contact.created', 'contact.deleted']),
        publish: async (events) => {
          if (webhookFail) throw new Error('the fan-out queue is down');
          webhookPublishes.push([...events]);
        },
      },
      audienceEvents: {
        publish: async (events) => {
          if (fail?.(events)) throw new Error('the audience events are down');
          published.push(...events);
        },
      },
    },
    contactChangesConsumer,
  );
  const run = (records: DynamoDBRecord[]) =>
    handler(
      { Records: records } satisfies DynamoDBStreamEvent,
      lambdaContext(),
    );
  /** The tag index entry of a contact, if written. */
  const indexEntry = async (c: Contact, tagId: string) =>
    (
      await testEngineClient().send(
        new GetCommand({
          TableName: tableName,
          Key: keys.taggedContact(ORG, c.listId, tagId, c.email),
        }),
      )
    ).Item;
  /** Every event of a contact's activity, newest first. */
  const activity = async (contactId: string) =>
    (await deps.activity.page(ORG, contactId, { limit: 100 })).items;
  return { run, published, webhookPublishes, indexEntry, activity, tableName };
};

describe('the contacts consumer handler: audience facts', () => {
  it('publishes the join and tags of a new contact, and only the new tag of a change', async () => {
    // Arrange
    const { run, published } = await setup();
    const first = contact({ tagIds: ['t-1'] });
    const tagged = contact({ tagIds: ['t-1', 't-2'], version: 2 });
    // Act
    const response = await run([
      record('1', itemOf(first)),
      record('2', itemOf(tagged), itemOf(first)),
    ]);
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(published.map((e) => [e.type, 'tagId' in e ? e.tagId : ''])).toEqual(
      [
        ['contact.joinedList', ''],
        ['contact.tagged', 't-1'],
        ['contact.tagged', 't-2'],
      ],
    );
    expect(published[0]).toEqual({
      type: 'contact.joinedList',
      orgId: ORG,
      listId: 'list-1',
      contactId: 'c-1',
      at: '2026-11-21T09:00:00.000Z',
    });
  });

  it('publishes nothing for an import, and the tag of the change after it', async () => {
    // Arrange
    const { run, published } = await setup();
    const imported = contact({ tagIds: ['t-1'] });
    const later = contact({ tagIds: ['t-1', 't-2'], version: 2 });
    // Act
    await run([
      record('1', itemOf(imported, { writtenBy: 'import' })),
      record('2', itemOf(later), itemOf(imported, { writtenBy: 'import' })),
    ]);
    // Assert
    expect(published).toEqual([
      expect.objectContaining({ type: 'contact.tagged', tagId: 't-2' }),
    ]);
  });

  it('ignores items of other types and skips an image that does not parse, failing neither', async () => {
    // Arrange
    const { run, published } = await setup();
    const pointer = {
      ...keys.contactById(ORG, 'c-1'),
      _type: 'ContactPointer',
      listId: 'list-1',
      email: 'ann@example.test',
    };
    const broken = { ...itemOf(contact()), status: 'lost' };
    // Act
    const response = await run([
      record('1', pointer),
      record('2', broken),
      record('3', itemOf(contact({ id: 'c-2', email: 'bo@example.test' }))),
    ]);
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(published).toEqual([
      expect.objectContaining({ type: 'contact.joinedList', contactId: 'c-2' }),
    ]);
  });

  it('reports a failing call as a batch item failure, by sequence number', async () => {
    // Arrange: publishing fails for c-2 only.
    const { run, published } = await setup((events) =>
      events.some((e) => e.contactId === 'c-2'),
    );
    // Act
    const response = await run([
      record('10', itemOf(contact({ id: 'c-1', email: 'a@example.test' }))),
      record('11', itemOf(contact({ id: 'c-2', email: 'b@example.test' }))),
      record('12', itemOf(contact({ id: 'c-3', email: 'c@example.test' }))),
    ]);
    // Assert
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '11' }]);
    expect(published.map((e) => e.contactId)).toEqual(['c-1', 'c-3']);
  });
});

describe('the contacts consumer handler: tag index', () => {
  it('publishes the webhook events of a whole batch in one call, a removal dated by its record', async () => {
    // Arrange: three contacts created, one removed (written at 17:30:05).
    const { run, webhookPublishes } = await setup();
    const removal: DynamoDBRecord = {
      ...record('4', itemOf(contact({ id: 'c-9', email: 'z@example.test' }))),
      eventName: 'REMOVE',
    };
    if (removal.dynamodb) {
      removal.dynamodb.OldImage = removal.dynamodb.NewImage;
      delete removal.dynamodb.NewImage;
      removal.dynamodb.ApproximateCreationDateTime =
        Date.parse('2026-11-28T17:30:05Z') / 1000;
    }
    // Act
    const response = await run([
      record('1', itemOf(contact({ id: 'c-1', email: 'a@example.test' }))),
      record('2', itemOf(contact({ id: 'c-2', email: 'b@example.test' }))),
      record('3', itemOf(contact({ id: 'c-3', email: 'c@example.test' }))),
      removal,
    ]);
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(webhookPublishes).toHaveLength(1);
    expect(webhookPublishes[0]?.map((e) => e.type)).toEqual([
      'contact.created',
      'contact.created',
      'contact.created',
      'contact.deleted',
    ]);
    expect(webhookPublishes[0]?.at(-1)?.occurredAt).toBe(
      '2026-11-28T17:30:05.000Z',
    );
  });

  it('retries from the first record that gave webhook events when their publish fails', async () => {
    // Arrange
    const { run } = await setup(undefined, true);
    // Act
    const response = await run([
      record('1', itemOf(contact({ id: 'c-1', email: 'a@example.test' }))),
      record('2', itemOf(contact({ id: 'c-2', email: 'b@example.test' }))),
    ]);
    // Assert: both reported; Lambda goes on from the lowest.
    expect(
      response.batchItemFailures.map((f) => f.itemIdentifier).sort(),
    ).toEqual(['1', '2']);
  });

  it('indexes each tag gained and drops each tag lost', async () => {
    // Arrange
    const { run, indexEntry } = await setup();
    const first = contact({ tagIds: ['t-1'] });
    const retagged = contact({ tagIds: ['t-2'], version: 2 });
    // Act
    const response = await run([
      record('1', itemOf(first)),
      record('2', itemOf(retagged), itemOf(first)),
    ]);
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(await indexEntry(retagged, 't-1')).toBeUndefined();
    expect(await indexEntry(retagged, 't-2')).toMatchObject({
      email: retagged.email,
    });
  });

  it('indexes a record whose facts fail, and reports the record for a retry that changes nothing more', async () => {
    // Arrange: publishing fails for every contact.
    const { run, published, indexEntry } = await setup(() => true);
    const tagged = contact({ tagIds: ['t-1'] });
    // Act
    const response = await run([record('7', itemOf(tagged))]);
    const retried = await run([record('7', itemOf(tagged))]);
    // Assert
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '7' }]);
    expect(retried.batchItemFailures).toEqual([{ itemIdentifier: '7' }]);
    expect(published).toEqual([]);
    expect(await indexEntry(tagged, 't-1')).toMatchObject({
      email: tagged.email,
    });
  });
});

describe('the contacts consumer handler: activity', () => {
  it('writes the events of each record, an import’s included, and a redelivery writes the same items over themselves', async () => {
    // Arrange
    const { run, activity, tableName } = await setup();
    const imported = contact({ tagIds: ['t-1'] });
    const retagged = contact({
      tagIds: ['t-2'],
      status: 'unsubscribed',
      updatedAt: '2026-11-21T10:00:00.000Z',
      version: 2,
    });
    const records = [
      record('1', itemOf(imported, { writtenBy: 'import' })),
      record(
        '2',
        itemOf(retagged, { writtenBy: 'one_click' }),
        itemOf(imported),
      ),
    ];
    // Act
    await run(records);
    const first = await activity('c-1');
    const count = async () =>
      (await scanTable(tableName)).filter(
        (item) => item._type === 'ContactActivity',
      ).length;
    const written = await count();
    const response = await run(records);
    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(first.map((e) => [e.type, e.via, e.tagId])).toEqual([
      ['untagged', 'one_click', 't-1'],
      ['tagged', 'one_click', 't-2'],
      ['unsubscribed', 'one_click', undefined],
      ['tagged', 'import', 't-1'],
      ['subscribed', 'import', undefined],
    ]);
    expect(await activity('c-1')).toEqual(first);
    expect(await count()).toBe(written);
  });

  it('writes the activity of a record whose facts fail', async () => {
    // Arrange: publishing fails for every contact.
    const { run, activity } = await setup(() => true);
    // Act
    const response = await run([record('3', itemOf(contact()))]);
    // Assert
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '3' }]);
    expect((await activity('c-1')).map((e) => e.type)).toEqual(['subscribed']);
  });
});

describe('the facts of a write, through the embedded engine stream', () => {
  it('turns a contact the repository writes into its events, once', async () => {
    // Arrange
    const { deps, events } = await createTestDeps();
    const { orgId, listId } = await orgWithList(deps);
    const now = '2026-11-22T10:00:00.000Z';
    const stored = contact({
      id: 'c-round',
      listId,
      email: uniqueEmail('round'),
      joinedAt: now,
      createdAt: now,
      updatedAt: now,
      version: 0,
    });
    // Act
    await deps.contacts.save(orgId, [{ after: stored }]);
    const first = [...(await events.settle())];
    const again = await events.settle();
    // Assert
    expect(first).toEqual([
      {
        type: 'contact.joinedList',
        orgId,
        listId,
        contactId: 'c-round',
        at: now,
      },
    ]);
    expect(again).toEqual(first);
  });
});
