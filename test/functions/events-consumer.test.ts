/**
 * The `events` consumer's handler, as Lambda's SQS trigger calls it, on the
 * embedded engine (issue 11, §1 and §5): duplicates in a batch and a batch
 * redelivered after a crash have the effect of one; a body that is not an
 * SES event goes to the dead-letter queue at once.
 */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { eventsConsumer } from '../../functions/events/consumer.ts';
import { DynamoCampaignStats } from '../../shared/adapters/aws/dynamo-campaign-stats.ts';
import type { DynamoTable } from '../../shared/adapters/aws/dynamo-table.ts';
import { addContact } from '../../shared/audience/contacts.ts';
import { createList } from '../../shared/audience/lists.ts';
import type { SesEvent } from '../../shared/delivery/ses-event.ts';
import type { Deps } from '../../shared/deps.ts';
import { createConsumerHandler } from '../../shared/queue/consumer.ts';
import { orgWithList, uniqueEmail } from '../support/audience.ts';
import { createTestDeps, fixedClock, scanTable } from '../support/dynamo.ts';
import { lambdaContext } from '../support/events.ts';

const record = (id: string, body: string, receiveCount = 1): SQSRecord => ({
  messageId: id,
  receiptHandle: `handle-${id}`,
  body,
  attributes: {
    ApproximateReceiveCount: String(receiveCount),
    SentTimestamp: String(Date.now()),
    SenderId: 'sender',
    ApproximateFirstReceiveTimestamp: String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:events',
  awsRegion: 'eu-west-1',
});

const bounceOf = (orgId: string, email: string): SesEvent => ({
  eventType: 'Bounce',
  mail: {
    messageId: 'm-1',
    timestamp: '2026-11-22T10:00:00.000Z',
    destination: [email],
    tags: { org: [orgId], kind: ['confirmation'] },
  },
  bounce: {
    bounceType: 'Permanent',
    bounceSubType: 'General',
    bouncedRecipients: [{ emailAddress: email }],
    timestamp: '2026-11-22T10:00:01.000Z',
  },
});

/** SES's delivery of a campaign's message to its `i`th contact. */
const deliveryOf = (
  orgId: string,
  campaignId: string,
  i: number,
): SesEvent => ({
  eventType: 'Delivery',
  mail: {
    messageId: `${campaignId}-m${i}`,
    timestamp: '2026-11-22T10:00:00.000Z',
    destination: [`reader${i}@example.test`],
    tags: {
      org: [orgId],
      kind: ['campaign'],
      campaign: [campaignId],
      contact: [`contact-${i}`],
    },
  },
  delivery: {
    timestamp: '2026-11-22T10:00:01.000Z',
    recipients: [`reader${i}@example.test`],
  },
});

const setup = async () => {
  const clock = fixedClock();
  const test = await createTestDeps({ clock });
  const { orgId, listId } = await orgWithList(test.deps);
  const second = await createList(test.deps, orgId, { name: 'Second' });
  const email = uniqueEmail('bouncing');
  await addContact(test.deps, orgId, listId, { email });
  await addContact(test.deps, orgId, second.id, { email });
  const deadLettered: string[] = [];
  const handlerWith = (deps: Deps) =>
    createConsumerHandler(
      {
        ...deps,
        deadLetters: {
          send: async (_group, body) => void deadLettered.push(body),
        },
      },
      eventsConsumer,
    );
  return {
    ...test,
    clock,
    orgId,
    listId,
    secondId: second.id,
    email,
    deadLettered,
    handlerWith,
  };
};

describe('the events consumer', () => {
  it('a batch with the same event twice and a body that is not an event: one effect, the bad body dead-lettered at once', async () => {
    // Arrange
    const { deps, orgId, listId, secondId, email, deadLettered, handlerWith } =
      await setup();
    const body = JSON.stringify(bounceOf(orgId, email));
    const event: SQSEvent = {
      Records: [
        record('a', body),
        record('b', body),
        record('c', '{"eventType":"Nope"}'),
      ],
    };

    // Act
    const response = await handlerWith(deps)(event, lambdaContext());

    // Assert
    expect(response.batchItemFailures).toEqual([]);
    expect(deadLettered).toEqual(['{"eventType":"Nope"}']);
    for (const id of [listId, secondId]) {
      expect(await deps.lists.get(orgId, id)).toMatchObject({
        contactCount: 1,
        statusCounts: { subscribed: 0, bounced: 1 },
      });
    }
  });

  it('a batch that crashed midway is retried, and its redelivery has the effect of one delivery', async () => {
    // Arrange: the first receipt dies after the suppression, before the
    // contacts change (a save that throws, as a timeout would).
    const { deps, orgId, listId, email, handlerWith, tableName } =
      await setup();
    const body = JSON.stringify(bounceOf(orgId, email));
    const crashing: Deps = {
      ...deps,
      contacts: {
        ...deps.contacts,
        get: deps.contacts.get.bind(deps.contacts),
        save: async () => {
          throw new Error('the function timed out');
        },
      } as Deps['contacts'],
    };

    // Act
    const first = await handlerWith(crashing)(
      { Records: [record('a', body)] },
      lambdaContext(),
    );
    const second = await handlerWith(deps)(
      { Records: [record('a', body, 2)] },
      lambdaContext(),
    );
    const settled = await scanTable(tableName);
    const third = await handlerWith(deps)(
      { Records: [record('a', body, 3)] },
      lambdaContext(),
    );

    // Assert
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'a' }]);
    expect(second.batchItemFailures).toEqual([]);
    expect(third.batchItemFailures).toEqual([]);
    expect(await scanTable(tableName)).toEqual(settled);
    expect(await deps.lists.get(orgId, listId)).toMatchObject({
      contactCount: 1,
      statusCounts: { subscribed: 0, bounced: 1 },
    });
  });

  it('an event of an organization that is gone is dropped, not retried', async () => {
    // Arrange
    const { deps, email, handlerWith } = await setup();
    const body = JSON.stringify(
      bounceOf('01a20000-0000-7000-8000-00000000dead', email),
    );

    // Act
    const response = await handlerWith(deps)(
      { Records: [record('a', body)] },
      lambdaContext(),
    );

    // Assert
    expect(response.batchItemFailures).toEqual([]);
  });

  it("counts a batch's campaign events in one write per campaign; a count that fails sends its messages back, and their redelivery counts each once", async () => {
    // Arrange: 30 deliveries of one campaign, the first five twice; the
    // first receipt's count dies (its transaction times out).
    const { deps, orgId, handlerWith, clock } = await setup();
    const campaignId = randomUUID();
    const bodies = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify(deliveryOf(orgId, campaignId, i)),
    );
    const records = [
      ...bodies.map((body, i) => record(`m${i}`, body)),
      ...bodies.slice(0, 5).map((body, i) => record(`copy${i}`, body)),
    ];
    let transactions = 0;
    let crashes = 1;
    const table = (deps.campaignStats as unknown as { table: DynamoTable })
      .table;
    const crashing: Deps = {
      ...deps,
      campaignStats: new DynamoCampaignStats({
        ...table,
        client: new Proxy(table.client, {
          get(target, property, receiver) {
            if (property !== 'send') {
              return Reflect.get(target, property, receiver);
            }
            return (command: Parameters<typeof target.send>[0]) => {
              if (command instanceof TransactWriteCommand) {
                transactions++;
                if (crashes-- > 0) {
                  return Promise.reject(new Error('the function timed out'));
                }
              }
              return target.send(command);
            };
          },
        }),
      }),
    };

    // Act
    const first = await handlerWith(crashing)(
      { Records: records },
      lambdaContext(),
    );
    const afterCrash = await deps.campaignStats.read(orgId, campaignId);
    // The messages come back after the visibility timeout.
    clock.advance(61_000);
    const second = await handlerWith(crashing)(
      {
        Records: records.map((r) => ({
          ...r,
          attributes: { ...r.attributes, ApproximateReceiveCount: '2' },
        })),
      },
      lambdaContext(),
    );
    const third = await handlerWith(crashing)(
      { Records: records.slice(0, 10) },
      lambdaContext(),
    );

    // Assert: every message back after the failed count, none after.
    expect(first.batchItemFailures).toHaveLength(records.length);
    expect(afterCrash.counters.delivered).toBe(0);
    expect(second.batchItemFailures).toEqual([]);
    expect(third.batchItemFailures).toEqual([]);
    // The crashed count, the redelivery's, none for the third.
    expect(transactions).toBe(2);
    expect(
      (await deps.campaignStats.read(orgId, campaignId)).counters.delivered,
    ).toBe(30);
  });
});
