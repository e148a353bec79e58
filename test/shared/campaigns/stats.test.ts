/**
 * Campaign statistics on the embedded engine: SES's events of campaign
 * mail counted exactly once each (duplicates, any order, a crash and a
 * redelivery, races), unique opens and clicks by first occurrence, the
 * clicks of each link, bounces hard and soft, the unsubscribes of the
 * campaign's links, the sender's evidence on the recipient, and the view
 * with its rates.
 */
import { randomUUID } from 'node:crypto';
import {
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  CAMPAIGN_STATS_SHARDS,
  DynamoCampaignStats,
  LIVE_BATCH_MS,
  linkIdOf,
} from '../../../shared/adapters/aws/dynamo-campaign-stats.ts';
import { addContact, getContact } from '../../../shared/audience/contacts.ts';
import { unsubscribeByLink } from '../../../shared/audience/link-actions.ts';
import {
  CampaignStatsView,
  campaignStatsView,
  rate,
  readCampaignStats,
} from '../../../shared/campaigns/stats.ts';
import type { CampaignCounters } from '../../../shared/campaigns/stats-ports.ts';
import { keys } from '../../../shared/db/keys.ts';
import { recordSesEvent } from '../../../shared/delivery/events.ts';
import type { SesEvent } from '../../../shared/delivery/ses-event.ts';
import type { Deps } from '../../../shared/deps.ts';
import { ConflictError } from '../../../shared/errors.ts';
import {
  clickedLink,
  LINK_PURPOSES,
  MESSAGE_LINK_TTL_SECONDS,
} from '../../../shared/links/public-links.ts';
import { composeMessage } from '../../../shared/mail/compose.ts';
import type { localDynamo } from '../../../shared/runtime/local.ts';
import { noCounters } from '../../../shared/statistics/counters.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import {
  createTestDeps,
  fixedClock,
  scanTable,
  TEST_PUBLIC_API_URL,
  testEngineClient,
} from '../../support/dynamo.ts';

const AT = '2026-11-22T10:00:00.000Z';

/** The instant `seconds` after the message was sent. */
const sentPlus = (seconds: number) =>
  new Date(Date.parse(AT) + seconds * 1000).toISOString();

/** One recipient of a campaign, and the message SES took for it. */
interface Recipient {
  orgId: string;
  campaignId: string;
  contactId: string;
  email: string;
  messageId: string;
}

const mailOf = (r: Recipient): SesEvent['mail'] => ({
  messageId: r.messageId,
  timestamp: AT,
  destination: [r.email],
  tags: {
    org: [r.orgId],
    kind: ['campaign'],
    contact: [r.contactId],
    campaign: [r.campaignId],
  },
});

/** SES's events about a recipient's message, as the events queue gets them. */
const ses = {
  send: (r: Recipient): SesEvent => ({ eventType: 'Send', mail: mailOf(r) }),
  delivery: (r: Recipient, s = 1): SesEvent => ({
    eventType: 'Delivery',
    mail: mailOf(r),
    delivery: { timestamp: sentPlus(s), recipients: [r.email] },
  }),
  bounce: (
    r: Recipient,
    bounceType: 'Permanent' | 'Transient' | 'Undetermined',
    s = 1,
  ): SesEvent => ({
    eventType: 'Bounce',
    mail: mailOf(r),
    bounce: {
      bounceType,
      bounceSubType: 'General',
      bouncedRecipients: [{ emailAddress: r.email }],
      timestamp: sentPlus(s),
    },
  }),
  complaint: (r: Recipient, s = 60): SesEvent => ({
    eventType: 'Complaint',
    mail: mailOf(r),
    complaint: {
      complainedRecipients: [{ emailAddress: r.email }],
      timestamp: sentPlus(s),
    },
  }),
  reject: (r: Recipient): SesEvent => ({
    eventType: 'Reject',
    mail: mailOf(r),
    reject: { reason: 'Bad content' },
  }),
  delay: (r: Recipient, s = 30): SesEvent => ({
    eventType: 'DeliveryDelay',
    mail: mailOf(r),
    deliveryDelay: {
      timestamp: sentPlus(s),
      delayType: 'MailboxFull',
      delayedRecipients: [{ emailAddress: r.email }],
    },
  }),
  open: (r: Recipient, s = 10): SesEvent => ({
    eventType: 'Open',
    mail: mailOf(r),
    open: { timestamp: sentPlus(s) },
  }),
  click: (r: Recipient, link: string, s = 20): SesEvent => ({
    eventType: 'Click',
    mail: mailOf(r),
    click: { timestamp: sentPlus(s), link },
  }),
};

/** The counters the statistics kept before the split and the providers. */
type BaseCounters = Pick<
  CampaignCounters,
  | 'delivered'
  | 'bouncesHard'
  | 'bouncesSoft'
  | 'complaints'
  | 'rejected'
  | 'opensTotal'
  | 'opensUnique'
  | 'clicksTotal'
  | 'clicksUnique'
  | 'unsubscribes'
>;

const NONE: BaseCounters = {
  delivered: 0,
  bouncesHard: 0,
  bouncesSoft: 0,
  complaints: 0,
  rejected: 0,
  opensTotal: 0,
  opensUnique: 0,
  clicksTotal: 0,
  clicksUnique: 0,
  unsubscribes: 0,
};

/** Those counters of a read (the others are checked on their own). */
const base = (counters: CampaignCounters): BaseCounters =>
  Object.fromEntries(
    Object.keys(NONE).map((name) => [
      name,
      counters[name as keyof BaseCounters],
    ]),
  ) as BaseCounters;

/** An organization and a campaign whose recipients are made up. */
const setup = async () => {
  const clock = fixedClock();
  const test = await createTestDeps({ clock });
  const { orgId, listId } = await orgWithList(test.deps);
  const campaignId = randomUUID();
  const recipient = (name = 'reader'): Recipient => ({
    orgId,
    campaignId,
    contactId: randomUUID(),
    email: uniqueEmail(name),
    messageId: `ses-${randomUUID()}`,
  });
  const read = () => test.deps.campaignStats.read(orgId, campaignId);
  /**
   * Records one event as its queue would: a message refused while
   * another batch may still count the same recipient comes again.
   */
  const recordOne = async (event: SesEvent) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await recordSesEvent(test.deps, event);
      } catch (error) {
        const waiting =
          error instanceof ConflictError && error.code === 'write.contended';
        if (!waiting || attempt >= 40) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const record = async (...events: SesEvent[]) => {
    let recorded = 0;
    for (const event of events) recorded += (await recordOne(event)).recorded;
    return recorded;
  };
  const dynamo = testEngineClient();
  return {
    ...test,
    clock,
    orgId,
    listId,
    campaignId,
    recipient,
    read,
    record,
    dynamo,
  };
};

/** The organization's delivery counters, as stored. */
const deliveryStatsOf = async (
  dynamo: ReturnType<typeof localDynamo>,
  tableName: string,
  orgId: string,
) =>
  (
    await dynamo.send(
      new GetCommand({ TableName: tableName, Key: keys.deliveryStats(orgId) }),
    )
  ).Item;

describe('campaign statistics from SES events', () => {
  it('counts each event once, in the campaign only: a duplicate changes nothing', async () => {
    // Arrange
    const { record, read, recipient, orgId, dynamo, tableName } = await setup();
    const ana = recipient('ana');
    const events = [
      ses.send(ana),
      ses.delivery(ana),
      ses.open(ana),
      ses.click(ana, 'https://acme.example/sale'),
      ses.delay(ana),
    ];

    // Act
    const first = await record(...events);
    const afterFirst = await scanTable(tableName);
    const again = await record(...events);

    // Assert
    expect(first).toBe(5);
    expect(again).toBe(0);
    expect(await scanTable(tableName)).toEqual(afterFirst);
    expect(base((await read()).counters)).toEqual({
      ...NONE,
      delivered: 1,
      opensTotal: 1,
      opensUnique: 1,
      clicksTotal: 1,
      clicksUnique: 1,
    });
    // Campaign mail is counted once, by the campaign: no delivery record,
    // and no organization-wide counter (that hot key is not written).
    expect(await deliveryStatsOf(dynamo, tableName, orgId)).toBeUndefined();
    expect(afterFirst.filter((i) => i._type === 'DeliveryEvent')).toEqual([]);
  });

  it('counts events whatever their order: an open and a click before the delivery count once each', async () => {
    // Arrange
    const { record, read, recipient } = await setup();
    const ana = recipient('ana');

    // Act
    await record(
      ses.click(ana, 'https://acme.example/a', 20),
      ses.open(ana, 12),
      ses.open(ana, 10),
      ses.delivery(ana),
      ses.send(ana),
    );

    // Assert
    expect(base((await read()).counters)).toEqual({
      ...NONE,
      delivered: 1,
      opensTotal: 2,
      opensUnique: 1,
      clicksTotal: 1,
      clicksUnique: 1,
    });
  });

  it('counts unique opens and clicks by recipient, and each link its clicks and unique clickers', async () => {
    // Arrange
    const { record, read, recipient } = await setup();
    const [ana, bob, cy] = [recipient('ana'), recipient('bob'), recipient()];
    const sale = 'https://acme.example/sale?utm_source=news';
    const blog = 'https://acme.example/blog';

    // Act
    await record(
      ses.open(ana, 10),
      ses.open(ana, 11),
      ses.open(ana, 12),
      ses.open(bob, 10),
      ses.click(ana, sale, 20),
      ses.click(ana, sale, 21),
      ses.click(ana, blog, 22),
      ses.click(bob, sale, 20),
      ses.delivery(cy),
    );

    // Assert
    const { counters, links } = await read();
    expect(base(counters)).toEqual({
      ...NONE,
      delivered: 1,
      opensTotal: 4,
      opensUnique: 2,
      clicksTotal: 4,
      clicksUnique: 2,
    });
    expect(links.sort((a, b) => a.url.localeCompare(b.url))).toEqual([
      { url: blog, clicksTotal: 1, clicksUnique: 1 },
      { url: sale, clicksTotal: 3, clicksUnique: 2 },
    ]);
  });

  it('counts permanent bounces as hard, transient and undetermined ones as soft; complaints and rejects apart', async () => {
    // Arrange
    const { record, read, recipient } = await setup();
    const [a, b, c, d, e] = [1, 2, 3, 4, 5].map(() => recipient());
    if (!a || !b || !c || !d || !e) throw new Error('five recipients');

    // Act
    await record(
      ses.bounce(a, 'Permanent'),
      ses.bounce(b, 'Transient'),
      ses.bounce(c, 'Undetermined'),
      ses.delivery(d),
      ses.complaint(d),
      ses.reject(e),
    );

    // Assert
    expect(base((await read()).counters)).toEqual({
      ...NONE,
      delivered: 1,
      bouncesHard: 1,
      bouncesSoft: 2,
      complaints: 1,
      rejected: 1,
    });
  });

  it('counts a click on our own unsubscribe link for one link, whoever clicked, without its token', async () => {
    // Arrange
    const { record, read, recipient } = await setup();
    const unsubscribe = (token: string) =>
      `${TEST_PUBLIC_API_URL}/public/unsubscribe?token=${token}`;

    // Act
    await record(
      ses.click(recipient(), unsubscribe('aaa.bbb.ccc')),
      ses.click(recipient(), unsubscribe('ddd.eee.fff')),
    );

    // Assert
    expect((await read()).links).toEqual([
      {
        url: `${TEST_PUBLIC_API_URL}/public/unsubscribe`,
        clicksTotal: 2,
        clicksUnique: 2,
      },
    ]);
    expect(clickedLink('not a url')).toBe('not a url');
    expect(clickedLink('https://acme.example/public/unsubscribe?x=1')).toBe(
      'https://acme.example/public/unsubscribe?x=1',
    );
  });

  it('spreads the counters over 8 shards and sums them on read', async () => {
    // Arrange
    const { record, read, recipient, tableName } = await setup();
    const recipients = Array.from({ length: 40 }, () => recipient());

    // Act
    await Promise.all(recipients.map((r) => record(ses.delivery(r))));

    // Assert
    expect((await read()).counters.delivered).toBe(40);
    const shards = (await scanTable(tableName)).filter(
      (i) => i._type === 'CampaignStats',
    );
    expect(shards.length).toBeGreaterThan(1);
    expect(shards.length).toBeLessThanOrEqual(CAMPAIGN_STATS_SHARDS);
  });

  it('counts nothing of mail that is not a campaign’s, even with campaign tags', async () => {
    // Arrange
    const { record, read, recipient } = await setup();
    const ana = recipient();
    const event = ses.open(ana);
    event.mail.tags.kind = ['test'];

    // Act
    const recorded = await record(event);

    // Assert
    expect(recorded).toBe(1);
    expect(await read()).toEqual({ counters: noCounters(), links: [] });
  });

  it('names a link by a short hash of its URL', () => {
    expect(linkIdOf('https://acme.example/a')).toMatch(/^[\w-]{16}$/);
    expect(linkIdOf('https://acme.example/a')).not.toBe(
      linkIdOf('https://acme.example/b'),
    );
  });
});

describe('campaign statistics: crashes and races', () => {
  it('a crash after recording, before counting: the redelivery counts once', async () => {
    // Arrange: a store whose first transaction (the count) dies on the way.
    const { deps, read, recipient, orgId, campaignId, dynamo, tableName } =
      await setup();
    let crashes = 1;
    const crashing = new Proxy(dynamo, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return (command: Parameters<typeof target.send>[0]) => {
          if (command instanceof TransactWriteCommand && crashes-- > 0) {
            return Promise.reject(new Error('Lambda timed out'));
          }
          return target.send(command);
        };
      },
    });
    const stats = new DynamoCampaignStats({ client: crashing, tableName });
    const ana = recipient();
    const event = {
      messageId: ana.messageId,
      type: 'Open' as const,
      recipient: ana.email,
      at: sentPlus(10),
      subject: { kind: 'campaign' as const, campaignId },
      contactId: ana.contactId,
      provider: 'other' as const,
    };

    // Act
    await expect(stats.recordEvent(orgId, event)).rejects.toThrow('timed out');
    const afterCrash = (await read()).counters;
    // At once, the batch may still be running: the message waits.
    const early = stats.recordEvent(orgId, event);
    await expect(early).rejects.toThrow('may still be running');
    // The visibility timeout later, it is dead: the redelivery counts.
    const later = new Date(Date.now() + LIVE_BATCH_MS + 1_000);
    const redelivery = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      later,
    );
    const redelivered = await redelivery.record(event);
    await redelivery.commit();
    // The redelivery of a delivery that had committed before its crash.
    const again = await deps.campaignStats.recordEvent(orgId, event);

    // Assert: recorded, not counted; then counted once, by the redelivery.
    expect(base(afterCrash)).toEqual(NONE);
    expect(redelivered).toBe(true);
    expect(again).toBe(false);
    expect(base((await read()).counters)).toEqual({
      ...NONE,
      opensTotal: 1,
      opensUnique: 1,
    });
    const batches = (await scanTable(tableName))
      .filter((i) => i._type === 'CampaignStatsBatch')
      .map((i) => i.state)
      .sort();
    expect(batches).toEqual(['counted', 'void']);
  });

  it('writes a send and a delivery with one plain update each, and the count of each with one three-item transaction (its fate, the campaign’s shard, the organization’s month); a duplicate send is refused and changes nothing', async () => {
    // Arrange: every command the statistics send, by name.
    const { orgId, campaignId, dynamo, tableName, recipient, read } =
      await setup();
    const commands: string[] = [];
    const counting = new Proxy(dynamo, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return (command: Parameters<typeof target.send>[0]) => {
          const input = command.input as { TransactItems?: unknown[] };
          commands.push(
            `${command.constructor.name}${input.TransactItems ? `×${input.TransactItems.length}` : ''}`,
          );
          return target.send(command);
        };
      },
    });
    const stats = new DynamoCampaignStats({ client: counting, tableName });
    const ana = recipient();
    const of = (type: 'Send' | 'Delivery') => ({
      messageId: ana.messageId,
      type,
      recipient: ana.email,
      at: sentPlus(type === 'Send' ? 0 : 1),
      subject: { kind: 'campaign' as const, campaignId },
      contactId: ana.contactId,
      provider: 'gmail' as const,
    });

    // Act
    const sent = await stats.recordEvent(orgId, of('Send'));
    const delivered = await stats.recordEvent(orgId, of('Delivery'));
    const before = await scanTable(tableName);
    const again = await stats.recordEvent(orgId, of('Send'));

    // Assert
    expect([sent, delivered, again]).toEqual([true, true, false]);
    // The campaign's recipient layout is read once (its send's item).
    expect(commands.slice(0, 5)).toEqual([
      'GetCommand',
      'UpdateCommand',
      'TransactWriteCommand×3',
      'UpdateCommand',
      'TransactWriteCommand×3',
    ]);
    expect(await scanTable(tableName)).toEqual(before);
    const { counters } = await read();
    expect(base(counters)).toEqual({ ...NONE, delivered: 1 });
    expect(counters).toMatchObject({
      sent: 1,
      gmailSent: 1,
      gmailDelivered: 1,
    });
  });

  it('concurrent events of one recipient count exactly: distinct opens each, one unique; copies once', async () => {
    // Arrange
    const { record, read, recipient } = await setup();
    const ana = recipient();
    const link = 'https://acme.example/sale';

    // Act: each open assumes it is the first; all but one learn otherwise.
    await Promise.all([
      ...[1, 2, 3, 4, 5, 6].map((s) => record(ses.open(ana, s))),
      ...[1, 2, 3].map(() => record(ses.click(ana, link, 30))),
      ...[1, 2, 3].map(() => record(ses.delivery(ana))),
    ]);

    // Assert
    const { counters, links } = await read();
    expect(base(counters)).toEqual({
      ...NONE,
      delivered: 1,
      opensTotal: 6,
      opensUnique: 1,
      clicksTotal: 1,
      clicksUnique: 1,
    });
    expect(links).toEqual([{ url: link, clicksTotal: 1, clicksUnique: 1 }]);
  });
});

describe('campaign statistics counted per batch of events', () => {
  /** The campaign events of a recipient, as the tally records them. */
  const eventOf = (
    r: Recipient,
    type: 'Delivery' | 'Open' | 'Click',
    s = 1,
  ) => ({
    messageId: r.messageId,
    type,
    recipient: r.email,
    at: sentPlus(s),
    subject: { kind: 'campaign' as const, campaignId: r.campaignId },
    contactId: r.contactId,
    provider: 'other' as const,
  });

  /** The statistics over a client that counts its transactions. */
  const counted = (
    dynamo: ReturnType<typeof localDynamo>,
    tableName: string,
  ) => {
    const transactions: number[] = [];
    const client = new Proxy(dynamo, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return (command: Parameters<typeof target.send>[0]) => {
          if (command instanceof TransactWriteCommand) {
            transactions.push(command.input.TransactItems?.length ?? 0);
          }
          return target.send(command);
        };
      },
    });
    return {
      stats: new DynamoCampaignStats({ client, tableName }),
      transactions,
    };
  };

  it('counts a batch in one transaction, and a duplicate event in the same batch once', async () => {
    // Arrange
    const { orgId, campaignId, dynamo, tableName, recipient, read, clock } =
      await setup();
    const { stats, transactions } = counted(dynamo, tableName);
    const recipients = Array.from({ length: 20 }, () => recipient());
    const link = 'https://acme.example/sale';
    const tally = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );

    // Act: every event twice, at once, as a batch with duplicates does.
    const results = await Promise.all(
      recipients.flatMap((r) => [
        tally.record(eventOf(r, 'Delivery')),
        tally.record(eventOf(r, 'Delivery')),
        tally.record(eventOf(r, 'Click', 20), link),
        tally.record(eventOf(r, 'Click', 20), link),
      ]),
    );
    await tally.commit();

    // Assert: one transaction: its fate, a shard, the organization's
    // month's, the link.
    expect(results.filter(Boolean)).toHaveLength(40);
    expect(transactions).toEqual([4]);
    const { counters, links } = await read();
    expect(base(counters)).toEqual({
      ...NONE,
      delivered: 20,
      clicksTotal: 20,
      clicksUnique: 20,
    });
    expect(links).toEqual([{ url: link, clicksTotal: 20, clicksUnique: 20 }]);
  });

  it('the same events redelivered in another batch after the first was counted change nothing', async () => {
    // Arrange
    const { orgId, campaignId, dynamo, tableName, recipient, read, clock } =
      await setup();
    const { stats } = counted(dynamo, tableName);
    const recipients = Array.from({ length: 5 }, () => recipient());
    const first = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    for (const r of recipients) await first.record(eventOf(r, 'Open', 10));
    await first.commit();
    const before = await scanTable(tableName);

    // Act
    const second = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    const again = await Promise.all(
      recipients.map((r) => second.record(eventOf(r, 'Open', 10))),
    );
    await second.commit();

    // Assert
    expect(again).toEqual([false, false, false, false, false]);
    expect(await scanTable(tableName)).toEqual(before);
    expect(base((await read()).counters)).toEqual({
      ...NONE,
      opensTotal: 5,
      opensUnique: 5,
    });
  });

  it('a batch that died between recording and counting: another batch takes its events over, counts them once, and the dead one can no longer count', async () => {
    // Arrange: a batch records its events, then its process dies (no commit).
    const { orgId, campaignId, dynamo, tableName, recipient, read, clock } =
      await setup();
    const { stats } = counted(dynamo, tableName);
    const [ana, bob] = [recipient('ana'), recipient('bob')];
    const link = 'https://acme.example/a';
    const dead = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    await dead.record(eventOf(ana, 'Delivery'));
    await dead.record(eventOf(ana, 'Click', 20), link);
    await dead.record(eventOf(bob, 'Delivery'));
    const recordedOnly = (await read()).counters;

    // Act: ana's messages come again in another batch, past the time a
    // batch may run; bob's not yet.
    clock.advance(LIVE_BATCH_MS + 1_000);
    const retry = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    const retried = [
      await retry.record(eventOf(ana, 'Delivery')),
      await retry.record(eventOf(ana, 'Click', 20), link),
    ];
    await retry.commit();
    const lateCommit = dead.commit();
    await expect(lateCommit).rejects.toThrow('taken over');
    // bob's message comes again too (its batch failed), in a third batch.
    const third = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    const bobAgain = await third.record(eventOf(bob, 'Delivery'));
    await third.commit();

    // Assert
    expect(base(recordedOnly)).toEqual(NONE);
    expect(retried).toEqual([true, true]);
    expect(bobAgain).toBe(true);
    const { counters, links } = await read();
    expect(base(counters)).toEqual({
      ...NONE,
      delivered: 2,
      clicksTotal: 1,
      clicksUnique: 1,
    });
    expect(links).toEqual([{ url: link, clicksTotal: 1, clicksUnique: 1 }]);
  });

  it("a burst recorded by a batch that died is counted once by the batch that takes it over, the earlier clicks' flips included", async () => {
    // Arrange: ana's delivery counted; her three clicks of a burst recorded
    // by a batch that dies before its commit.
    const { orgId, campaignId, dynamo, tableName, recipient, read, clock } =
      await setup();
    const { stats } = counted(dynamo, tableName);
    const ana = recipient('ana');
    const subject = { kind: 'campaign' as const, campaignId };
    const clicks = [
      [30, 'https://acme.example/a'],
      [30.5, 'https://acme.example/b'],
      [31, 'https://acme.example/c'],
    ] as const;
    await stats.recordEvent(orgId, eventOf(ana, 'Delivery'));
    const dead = stats.tally(orgId, subject, clock.now());
    for (const [s, link] of clicks) {
      await dead.record(eventOf(ana, 'Click', s), link);
    }
    const recordedOnly = (await read()).counters;

    // Act: the three come again, after the time a batch may run; again.
    clock.advance(LIVE_BATCH_MS + 1_000);
    const retry = stats.tally(orgId, subject, clock.now());
    for (const [s, link] of clicks) {
      await retry.record(eventOf(ana, 'Click', s), link);
    }
    await retry.commit();
    const third = stats.tally(orgId, subject, clock.now());
    const again = [];
    for (const [s, link] of clicks) {
      again.push(await third.record(eventOf(ana, 'Click', s), link));
    }
    await third.commit();

    // Assert: counted once, as the burst it is.
    expect(recordedOnly.clicksTotal).toBe(0);
    expect(again).toEqual([false, false, false]);
    expect((await read()).counters).toMatchObject({
      clicksTotal: 3,
      clicksUnique: 1,
      clicksHuman: 0,
      clicksHumanUnique: 0,
      clicksScanner: 3,
      clicksScannerUnique: 1,
      otherClicks: 0,
    });
  });

  it('the clicks of one burst recorded by two batches at once count as the recipient’s history ends: every click a scanner’s', async () => {
    // Arrange
    const { orgId, campaignId, dynamo, tableName, recipient, read, clock } =
      await setup();
    const { stats } = counted(dynamo, tableName);
    const ana = recipient('ana');
    const subject = { kind: 'campaign' as const, campaignId };
    await stats.recordEvent(orgId, eventOf(ana, 'Delivery'));
    const first = stats.tally(orgId, subject, clock.now());
    const second = stats.tally(orgId, subject, clock.now());

    // Act: four links within a second, spread over two batches in parallel.
    await Promise.all([
      first.record(eventOf(ana, 'Click', 40), 'https://acme.example/a'),
      second.record(eventOf(ana, 'Click', 40.2), 'https://acme.example/b'),
      first.record(eventOf(ana, 'Click', 40.4), 'https://acme.example/c'),
      second.record(eventOf(ana, 'Click', 40.6), 'https://acme.example/d'),
    ]);
    await Promise.all([first.commit(), second.commit()]);

    // Assert
    expect((await read()).counters).toMatchObject({
      clicksTotal: 4,
      clicksHuman: 0,
      clicksHumanUnique: 0,
      clicksScanner: 4,
      clicksScannerUnique: 1,
      otherClicks: 0,
    });
  });

  it('a copy of a message of a batch still running waits for it', async () => {
    // Arrange: two batches hold copies of the same event (a message seen
    // twice at once).
    const { orgId, campaignId, dynamo, tableName, recipient, read, clock } =
      await setup();
    const { stats } = counted(dynamo, tableName);
    const ana = recipient();
    const first = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    const second = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );

    // Act
    await first.record(eventOf(ana, 'Delivery'));
    const copy = second.record(eventOf(ana, 'Delivery'));
    await expect(copy).rejects.toThrow('may still be running');
    await first.commit();
    await second.commit();
    const later = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    const again = await later.record(eventOf(ana, 'Delivery'));

    // Assert
    expect(again).toBe(false);
    expect(base((await read()).counters)).toEqual({ ...NONE, delivered: 1 });
  });

  it('a batch whose events are taken over while it commits, after its time, counts nothing of them twice', async () => {
    // Arrange: a batch outlives its time (a process frozen, then back) and
    // a redelivery of one of its messages voids it meanwhile.
    const { orgId, campaignId, dynamo, tableName, recipient, read, clock } =
      await setup();
    const { stats } = counted(dynamo, tableName);
    const recipients = Array.from({ length: 4 }, () => recipient());
    const first = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    clock.advance(LIVE_BATCH_MS + 1_000);
    const second = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );

    // Act
    for (const r of recipients) await first.record(eventOf(r, 'Delivery'));
    const taken = await second.record(
      eventOf(recipients[0] as Recipient, 'Delivery'),
    );
    const outcomes = await Promise.allSettled([
      first.commit(),
      second.commit(),
    ]);
    // The first batch's messages come again: the rest is counted then.
    const third = stats.tally(
      orgId,
      { kind: 'campaign', campaignId },
      clock.now(),
    );
    for (const r of recipients) await third.record(eventOf(r, 'Delivery'));
    await third.commit();

    // Assert
    expect(taken).toBe(true);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(base((await read()).counters)).toEqual({ ...NONE, delivered: 4 });
  });
});

describe('the sender’s evidence on the recipient', () => {
  /** The sender's claim, as it writes it before calling SES. */
  const claim = (
    dynamo: ReturnType<typeof localDynamo>,
    tableName: string,
    r: Recipient,
    now: number,
  ) =>
    dynamo.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.campaignRecipient(r.orgId, r.campaignId, r.contactId),
          _type: 'CampaignRecipient',
          contactId: r.contactId,
          email: r.email,
          batch: 3,
          owner: 'sender-1',
          leaseUntil: now + 60_000,
          claimedAt: new Date(now).toISOString(),
        },
        ConditionExpression:
          'attribute_not_exists(PK) OR (leaseUntil < :now AND attribute_not_exists(messageId))',
        ExpressionAttributeValues: { ':now': now },
      }),
    );

  const recipientItem = async (
    dynamo: ReturnType<typeof localDynamo>,
    tableName: string,
    r: Recipient,
  ) =>
    (
      await dynamo.send(
        new GetCommand({
          TableName: tableName,
          Key: keys.campaignRecipient(r.orgId, r.campaignId, r.contactId),
        }),
      )
    ).Item;

  it('the first event sets the message id on the claim, which stays; a later message id never replaces it', async () => {
    // Arrange
    const { record, recipient, dynamo, tableName } = await setup();
    const ana = recipient();
    const now = Date.parse(AT);
    await claim(dynamo, tableName, ana, now);

    // Act: SES's events of the message, then one of a second message.
    await record(ses.delivery(ana), ses.open(ana));
    await record(ses.open({ ...ana, messageId: 'ses-second' }, 40));

    // Assert
    const item = await recipientItem(dynamo, tableName, ana);
    expect(item).toMatchObject({
      _type: 'CampaignRecipient',
      contactId: ana.contactId,
      email: ana.email,
      batch: 3,
      owner: 'sender-1',
      leaseUntil: now + 60_000,
      messageId: ana.messageId,
      deliveredAt: sentPlus(1),
      openedAt: sentPlus(10),
    });
    // The lease ran out: the sender may not claim it again, SES took it.
    await expect(
      claim(dynamo, tableName, ana, now + 120_000),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
  });

  it('an event before any claim creates the recipient with its message id: the sender never claims it', async () => {
    // Arrange
    const { record, recipient, dynamo, tableName } = await setup();
    const ana = recipient();

    // Act
    await record(ses.send(ana));

    // Assert
    expect(await recipientItem(dynamo, tableName, ana)).toMatchObject({
      _type: 'CampaignRecipient',
      contactId: ana.contactId,
      messageId: ana.messageId,
    });
    await expect(
      claim(dynamo, tableName, ana, Date.parse(AT)),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
  });
});

describe('unsubscribes through a campaign’s links', () => {
  /** A contact, a campaign's message to it, and its unsubscribe token. */
  const mailed = async (
    deps: Deps,
    orgId: string,
    listId: string,
    campaignId: string,
    options: { test?: boolean } = {},
  ) => {
    const { contact } = await addContact(deps, orgId, listId, {
      email: uniqueEmail(),
    });
    const message = await composeMessage(deps, {
      orgId,
      contact: { id: contact.id, email: contact.email },
      subject: 's',
      html: '<a href="{{unsubscribeUrl}}">Unsubscribe</a>',
      from: 'news@acme.example',
      campaignId,
      ...(options.test ? { test: true } : {}),
    });
    const url = message.headers?.['List-Unsubscribe']?.slice(1, -1) ?? '';
    const token = new URL(url).searchParams.get('token') ?? '';
    const r: Recipient = {
      orgId,
      campaignId,
      contactId: contact.id,
      email: contact.email,
      messageId: `ses-${randomUUID()}`,
    };
    return { contact, token, recipient: r };
  };

  it('counts the unsubscribe of a recipient once, however often its link is used', async () => {
    // Arrange
    const { deps, orgId, listId, campaignId, record, read } = await setup();
    const { contact, token, recipient } = await mailed(
      deps,
      orgId,
      listId,
      campaignId,
    );
    await record(ses.send(recipient));

    // Act
    await unsubscribeByLink(deps, token);
    await unsubscribeByLink(deps, token);

    // Assert
    expect((await getContact(deps, orgId, contact.id)).status).toBe(
      'unsubscribed',
    );
    expect(base((await read()).counters)).toEqual({ ...NONE, unsubscribes: 1 });
  });

  it('counts nothing for a contact unsubscribed before, nor for one who was not a recipient', async () => {
    // Arrange
    const { deps, orgId, listId, campaignId, record, read } = await setup();
    const earlier = await mailed(deps, orgId, listId, randomUUID());
    const later = await mailed(deps, orgId, listId, campaignId);
    await record(ses.send(later.recipient));
    const stranger = await mailed(deps, orgId, listId, campaignId);

    // Act: the contact left through an earlier campaign's link first.
    await unsubscribeByLink(deps, earlier.token);
    const sameContact = await deps.links.sign(
      LINK_PURPOSES.unsubscribe,
      { o: orgId, c: earlier.contact.id, k: campaignId },
      MESSAGE_LINK_TTL_SECONDS,
    );
    await unsubscribeByLink(deps, sameContact);
    // A link naming the campaign for a contact it never mailed.
    await unsubscribeByLink(deps, stranger.token);

    // Assert
    expect((await read()).counters.unsubscribes).toBe(0);
    expect(
      await deps.campaignStats.recordUnsubscribe(
        orgId,
        campaignId,
        stranger.contact.id,
        AT,
      ),
    ).toBe(false);
  });

  it('a test link counts nothing and unsubscribes nobody', async () => {
    // Arrange
    const { deps, orgId, listId, campaignId, record, read } = await setup();
    const { contact, token, recipient } = await mailed(
      deps,
      orgId,
      listId,
      campaignId,
      { test: true },
    );
    await record(ses.send(recipient));

    // Act
    const target = await unsubscribeByLink(deps, token);

    // Assert
    expect(target).toEqual({ kind: 'test' });
    expect((await getContact(deps, orgId, contact.id)).status).toBe(
      'subscribed',
    );
    expect((await read()).counters.unsubscribes).toBe(0);
  });
});

describe('the statistics view', () => {
  const progress = { total: 100, sent: 90, failed: 4, skipped: 6 };
  const NO_PROVIDER_FIGURES = {
    sent: 0,
    delivered: 0,
    bounces: 0,
    complaints: 0,
    opens: 0,
    clicks: 0,
    rates: { bounce: 0, complaint: 0, open: 0, click: 0 },
  };

  it('shows the counters, the links most clicked first, and the rates', async () => {
    // Arrange
    const { deps, orgId, campaignId, record, recipient } = await setup();
    const [ana, bob, cy] = [recipient(), recipient(), recipient()];
    await record(
      ...[ana, bob, cy].map((r) => ses.delivery(r)),
      ses.open(ana),
      ses.open(ana, 11),
      ses.open(bob),
      ses.click(ana, 'https://acme.example/a'),
      ses.click(ana, 'https://acme.example/b', 21),
      ses.click(bob, 'https://acme.example/b', 21),
    );

    // Act
    const view = await readCampaignStats(deps, orgId, {
      id: campaignId,
      progress,
    });

    // Assert
    expect(v.is(CampaignStatsView, view)).toBe(true);
    expect(view).toEqual({
      campaignId,
      recipients: 100,
      sent: 90,
      failed: 4,
      skipped: 6,
      delivered: 3,
      bounces: { hard: 0, soft: 0, total: 0 },
      complaints: 0,
      rejected: 0,
      unsubscribes: 0,
      opens: {
        total: 3,
        unique: 2,
        human: { total: 3, unique: 2 },
        machine: { total: 0, unique: 0 },
      },
      clicks: {
        total: 3,
        unique: 2,
        links: [
          { url: 'https://acme.example/b', total: 2, unique: 2 },
          { url: 'https://acme.example/a', total: 1, unique: 1 },
        ],
        human: { total: 3, unique: 2 },
        scanner: { total: 0, unique: 0 },
      },
      rates: {
        open: 0.6667,
        click: 0.6667,
        clickToOpen: 1,
        bounce: 0,
        complaint: 0,
        unsubscribe: 0,
        basis: 'human',
      },
      byProvider: {
        gmail: NO_PROVIDER_FIGURES,
        microsoft: NO_PROVIDER_FIGURES,
        yahoo: NO_PROVIDER_FIGURES,
        apple: NO_PROVIDER_FIGURES,
        // Their addresses are at example.test: no known provider.
        other: {
          sent: 0,
          delivered: 3,
          bounces: 0,
          complaints: 0,
          opens: 2,
          clicks: 2,
          rates: { bounce: 0, complaint: 0, open: 0.6667, click: 0.6667 },
        },
      },
    });
  });

  it('rounds each rate to 4 decimals, caps it at 1, and gives 0 over nothing; a campaign counted before the split rates every open and click', () => {
    // Arrange: opens and clicks, none classified (counted before the split).
    const counters: CampaignCounters = {
      ...noCounters(),
      delivered: 7,
      bouncesHard: 2,
      bouncesSoft: 1,
      complaints: 1,
      opensTotal: 5,
      opensUnique: 3,
      clicksTotal: 5,
      clicksUnique: 4,
      unsubscribes: 2,
    };

    // Act
    const view = campaignStatsView(
      { id: randomUUID(), progress },
      { counters, links: [] },
    );
    const empty = campaignStatsView(
      {
        id: randomUUID(),
        progress: { total: 0, sent: 0, failed: 0, skipped: 0 },
      },
      { counters: noCounters(), links: [] },
    );

    // Assert
    expect(view.rates).toEqual({
      open: 0.4286,
      click: 0.5714,
      // More clickers than openers (images blocked): capped.
      clickToOpen: 1,
      bounce: 0.0333,
      complaint: 0.1429,
      unsubscribe: 0.2857,
      basis: 'all',
    });
    expect(view.bounces).toEqual({ hard: 2, soft: 1, total: 3 });
    expect(empty.rates).toEqual({
      open: 0,
      click: 0,
      clickToOpen: 0,
      bounce: 0,
      complaint: 0,
      unsubscribe: 0,
      basis: 'human',
    });
    expect(rate(1, 3)).toBe(0.3333);
    expect(rate(2, 3)).toBe(0.6667);
  });
});
