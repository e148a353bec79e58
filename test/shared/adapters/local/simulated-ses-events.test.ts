import { randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import {
  afterAll,
  afterEach,
  beforeEach,
  describe,
  expect,
  inject,
  it,
} from 'vitest';
import { SesMailer } from '../../../../shared/adapters/aws/ses-mailer.ts';
import {
  APPLE_PROXY,
  drawn,
  GATEWAY_SCANNER,
  linksOf,
  NO_SIMULATION,
  type SimulationRates,
} from '../../../../shared/adapters/local/simulated-engagement.ts';
import {
  appendSentMessage,
  engagementEventOf,
  readSentLog,
  type SentMessage,
  SimulatedSesEvents,
  simulatorScenarioOf,
} from '../../../../shared/adapters/local/simulated-ses-events.ts';
import {
  queueUrlOf,
  sqsEventPublisher,
} from '../../../../shared/adapters/local/sqs-event-publisher.ts';
import { SesEvent } from '../../../../shared/delivery/ses-event.ts';
import type {
  Clock,
  Mailer,
  OutgoingMessage,
} from '../../../../shared/ports.ts';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  localSes,
} from '../../../../shared/runtime/local.ts';

const NOW = new Date('2026-03-01T10:00:00.000Z');
const clock: Clock = { now: () => NOW };

const TAGS = {
  org: '01a20000-0000-7000-8000-000000000001',
  kind: 'campaign',
  contact: '01a20000-0000-7000-8000-000000000002',
  campaign: '01a20000-0000-7000-8000-000000000003',
};

/** The `mail.tags` every event of a message with TAGS carries. */
const MAIL_TAGS = {
  org: [TAGS.org],
  kind: ['campaign'],
  contact: [TAGS.contact],
  campaign: [TAGS.campaign],
  'ses:from-domain': ['acme.example'],
  'ses:configuration-set': ['tenant-1'],
};

const messageTo = (to: string): OutgoingMessage => ({
  from: 'Acme <news@acme.example>',
  to,
  subject: 'News',
  html: '<p>News</p>',
  text: 'News',
  tenantName: 'tenant-1',
  tags: TAGS,
});

/** A mailer that accepts everything, with ids msg-1, msg-2… */
const acceptingMailer = (): Mailer & { sent: OutgoingMessage[] } => {
  const sent: OutgoingMessage[] = [];
  return {
    sent,
    send: async (message) => {
      sent.push(message);
      return { messageId: `msg-${sent.length}` };
    },
  };
};

describe('SimulatedSesEvents', () => {
  let dataDir: string;
  let sentLogFile: string;
  let published: SesEvent[];
  const publish = async (event: SesEvent) => {
    published.push(event);
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'simulated-ses-events-'));
    sentLogFile = join(dataDir, 'sent.jsonl');
    published = [];
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const mailer = (inner: Mailer = acceptingMailer()) =>
    new SimulatedSesEvents(inner, { publish, clock, sentLogFile });

  /** What the published events say, in order. */
  const outline = () =>
    published.map((event) => {
      switch (event.eventType) {
        case 'Bounce':
          return `Bounce ${event.bounce.bounceType}/${event.bounce.bounceSubType} ${event.bounce.bouncedRecipients[0]?.emailAddress}`;
        case 'Complaint':
          return `Complaint ${event.complaint.complainedRecipients[0]?.emailAddress}`;
        case 'Delivery':
          return `Delivery ${event.delivery.recipients.join(',')}`;
        default:
          return event.eventType;
      }
    });

  it.each([
    [
      'success@simulator.amazonses.com',
      ['Send', 'Delivery success@simulator.amazonses.com'],
    ],
    [
      'bounce@simulator.amazonses.com',
      ['Send', 'Bounce Permanent/General bounce@simulator.amazonses.com'],
    ],
    [
      'complaint@simulator.amazonses.com',
      [
        'Send',
        'Delivery complaint@simulator.amazonses.com',
        'Complaint complaint@simulator.amazonses.com',
      ],
    ],
    [
      'suppressionlist@simulator.amazonses.com',
      [
        'Send',
        'Bounce Permanent/Suppressed suppressionlist@simulator.amazonses.com',
      ],
    ],
    [
      'bounce+list-7@simulator.amazonses.com',
      [
        'Send',
        'Bounce Permanent/General bounce+list-7@simulator.amazonses.com',
      ],
    ],
    [
      'complaint+a.b@simulator.amazonses.com',
      [
        'Send',
        'Delivery complaint+a.b@simulator.amazonses.com',
        'Complaint complaint+a.b@simulator.amazonses.com',
      ],
    ],
    [
      'ooto@simulator.amazonses.com',
      ['Send', 'Delivery ooto@simulator.amazonses.com'],
    ],
    ['ana@example.com', ['Send', 'Delivery ana@example.com']],
    [
      'bounce@example.com',
      // Only the simulator's domain plays scenarios.
      ['Send', 'Delivery bounce@example.com'],
    ],
  ])('publishes, for a send to %s, %j', async (to, expected) => {
    // Act
    const result = await mailer().send(messageTo(to));

    // Assert
    expect(result).toEqual({ messageId: 'msg-1' });
    expect(outline()).toEqual(expected);
    for (const event of published) {
      expect(v.safeParse(SesEvent, event).issues).toBeUndefined();
      expect(event.mail).toEqual({
        messageId: 'msg-1',
        timestamp: NOW.toISOString(),
        destination: [to],
        tags: MAIL_TAGS,
      });
    }
  });

  describe('at the rates of the simulation', () => {
    const simulating = (rates: Partial<SimulationRates>) =>
      new SimulatedSesEvents(acceptingMailer(), {
        publish,
        clock,
        sentLogFile,
        simulation: async () => ({ ...NO_SIMULATION, ...rates }),
      });
    const withLinks = (to: string): OutgoingMessage => ({
      ...messageTo(to),
      html: '<p>News</p><a href="https://acme.example/sale">Sale</a><a href=\'https://acme.example/blog?a=1&amp;b=2\'>Blog</a><a href="https://acme.example/sale">Again</a><a href="mailto:hi@acme.example">Mail</a>',
    });

    it("bounces or complains ordinary addresses at their shares, never the simulator's own", async () => {
      // Act
      await simulating({ bounces: 1 }).send(messageTo('ana@example.com'));
      await simulating({ complaints: 1 }).send(messageTo('bob@example.com'));
      await simulating({ bounces: 1, complaints: 1 }).send(
        messageTo('success@simulator.amazonses.com'),
      );

      // Assert
      expect(outline()).toEqual([
        'Send',
        'Bounce Permanent/General ana@example.com',
        'Send',
        'Delivery bob@example.com',
        'Complaint bob@example.com',
        'Send',
        'Delivery success@simulator.amazonses.com',
      ]);
    });

    it("opens a delivered message through Apple's privacy proxy, or scans it as a gateway: its pixel, then every link once", async () => {
      // Act
      await simulating({ machineOpens: 1 }).send(withLinks('cy@example.com'));
      const apple = published.splice(0);
      await simulating({ scannerClicks: 1 }).send(withLinks('dee@example.com'));
      const scanner = published.splice(0);
      await simulating({ machineOpens: 1, scannerClicks: 1, bounces: 1 }).send(
        withLinks('eve@example.com'),
      );

      // Assert
      expect(apple.slice(2)).toEqual([
        expect.objectContaining({
          eventType: 'Open',
          open: { timestamp: NOW.toISOString(), ...APPLE_PROXY },
        }),
      ]);
      expect(scanner.slice(2).map((e) => e.eventType)).toEqual([
        'Open',
        'Click',
        'Click',
      ]);
      expect(
        scanner.flatMap((e) => (e.eventType === 'Click' ? [e.click] : [])),
      ).toEqual([
        {
          timestamp: NOW.toISOString(),
          link: 'https://acme.example/sale',
          ...GATEWAY_SCANNER,
        },
        {
          timestamp: NOW.toISOString(),
          link: 'https://acme.example/blog?a=1&b=2',
          ...GATEWAY_SCANNER,
        },
      ]);
      for (const event of [...apple, ...scanner]) {
        expect(v.safeParse(SesEvent, event).issues).toBeUndefined();
      }
      // A bounced message is read by nobody.
      expect(outline()).toEqual([
        'Send',
        'Bounce Permanent/General eve@example.com',
      ]);
    });

    it('draws a share of the messages by their ids, the same each time', () => {
      // Act
      const ids = Array.from({ length: 2000 }, (_, i) => `msg-${i}`);
      const share = (rate: number) =>
        ids.filter((id) => drawn(id, 'apple', rate)).length / ids.length;

      // Assert
      expect(share(0)).toBe(0);
      expect(share(1)).toBe(1);
      expect(share(0.3)).toBeGreaterThan(0.27);
      expect(share(0.3)).toBeLessThan(0.33);
      expect(drawn('msg-7', 'apple', 0.5)).toBe(drawn('msg-7', 'apple', 0.5));
      expect(
        linksOf('<a href="ftp://x">x</a><a href = "http://a.example">a</a>'),
      ).toEqual(['http://a.example']);
    });

    it('simulates nothing when the rates cannot be read', async () => {
      // Arrange
      const broken = new SimulatedSesEvents(acceptingMailer(), {
        publish,
        clock,
        sentLogFile,
        simulation: () => Promise.reject(new Error('unreadable')),
      });

      // Act
      await broken.send(withLinks('fay@example.com'));

      // Assert
      expect(outline()).toEqual(['Send', 'Delivery fay@example.com']);
    });
  });

  it('gives every event the clock time and its SES details', async () => {
    // Act
    await mailer().send(messageTo('complaint@simulator.amazonses.com'));

    // Assert
    const [send, delivery, complaint] = published;
    expect(send).toMatchObject({ eventType: 'Send', send: {} });
    expect(delivery).toMatchObject({
      delivery: { timestamp: NOW.toISOString() },
    });
    expect(complaint).toMatchObject({
      complaint: {
        timestamp: NOW.toISOString(),
        complaintFeedbackType: 'abuse',
        feedbackId: 'msg-1-complaint',
      },
    });
  });

  it('carries only the ses: tags SES adds when the message has no tags', async () => {
    // Act
    await mailer().send({
      from: 'no-reply@mail.localhost.test',
      to: 'ana@example.com',
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: 'Hi',
    });

    // Assert
    expect(published[0]?.mail.tags).toEqual({
      'ses:from-domain': ['mail.localhost.test'],
    });
  });

  it('does not fail the send when publishing fails, and goes on with the next event', async () => {
    // Arrange
    const attempts: string[] = [];
    const failingFirst = new SimulatedSesEvents(acceptingMailer(), {
      clock,
      sentLogFile,
      publish: async (event) => {
        attempts.push(event.eventType);
        if (event.eventType === 'Send') throw new Error('queue unreachable');
      },
    });

    // Act
    const result = await failingFirst.send(
      messageTo('bounce@simulator.amazonses.com'),
    );

    // Assert
    expect(result).toEqual({ messageId: 'msg-1' });
    expect(attempts).toEqual(['Send', 'Bounce']);
    expect(await readSentLog(sentLogFile)).toHaveLength(1);
  });

  it('does not fail the send when the sent log cannot be written', async () => {
    // Arrange: the log's "directory" is a file.
    const blocked = new SimulatedSesEvents(acceptingMailer(), {
      clock,
      publish,
      sentLogFile: join(sentLogFile, 'nested.jsonl'),
    });
    await appendFile(sentLogFile, '');

    // Act
    const result = await blocked.send(messageTo('ana@example.com'));

    // Assert
    expect(result).toEqual({ messageId: 'msg-1' });
    expect(outline()).toEqual(['Send', 'Delivery ana@example.com']);
  });

  it('publishes nothing and logs nothing when the inner mailer refuses', async () => {
    // Arrange
    const refusing: Mailer = {
      send: async () => {
        throw new Error('MessageRejected');
      },
    };

    // Act
    const failure = await mailer(refusing)
      .send(messageTo('ana@example.com'))
      .catch((error: unknown) => error);

    // Assert
    expect(failure).toEqual(new Error('MessageRejected'));
    expect(published).toEqual([]);
    expect(await readSentLog(sentLogFile)).toEqual([]);
  });

  it('appends each accepted message to the sent log', async () => {
    // Arrange
    const simulated = mailer();

    // Act
    await simulated.send(messageTo('ana@example.com'));
    await simulated.send(messageTo('bounce+x@simulator.amazonses.com'));

    // Assert
    const lines = (await readFile(sentLogFile, 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        messageId: 'msg-1',
        to: 'ana@example.com',
        tags: MAIL_TAGS,
        sentAt: NOW.toISOString(),
      },
      {
        messageId: 'msg-2',
        to: 'bounce+x@simulator.amazonses.com',
        tags: MAIL_TAGS,
        sentAt: NOW.toISOString(),
      },
    ]);
    expect(await readSentLog(sentLogFile)).toHaveLength(2);
  });
});

describe('simulatorScenarioOf', () => {
  it.each([
    ['success@simulator.amazonses.com', 'success'],
    ['Bounce@Simulator.AmazonSES.com', 'bounce'],
    ['bounce+label1@simulator.amazonses.com', 'bounce'],
    ['suppressionlist+@simulator.amazonses.com', 'suppressionlist'],
    ['complaint+x.y-z@simulator.amazonses.com', 'complaint'],
    ['bounced@simulator.amazonses.com', undefined],
    ['bounce@simulator.amazonses.com.example', undefined],
    ['bounce@amazonses.com', undefined],
    ['ana@example.com', undefined],
  ])('reads %s as %s', (address, scenario) => {
    expect(simulatorScenarioOf(address)).toBe(scenario);
  });
});

describe('the sent log', () => {
  let dataDir: string;
  let file: string;
  const entry: SentMessage = {
    messageId: 'msg-1',
    to: 'ana@example.com',
    tags: { campaign: ['c-1'] },
    sentAt: NOW.toISOString(),
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'sent-log-'));
    file = join(dataDir, 'nested', 'sent.jsonl');
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is empty before the first send', async () => {
    expect(await readSentLog(file)).toEqual([]);
  });

  it('skips a last line cut short by a crash', async () => {
    // Arrange
    await appendSentMessage(file, entry);
    await appendFile(file, '{"messageId":"msg-2","to":"b@exa');

    // Act
    const messages = await readSentLog(file);

    // Assert
    expect(messages).toEqual([entry]);
  });

  it.each([
    ['not JSON', 'nonsense\n', 'sent.jsonl:2 is not valid JSON'],
    [
      'not a sent message',
      '{"messageId":"msg-2","to":"b@example.com","tags":{},"sentAt":"yesterday"}\n',
      'sent.jsonl:2 is not a sent message',
    ],
  ])('refuses a line that is %s, naming it', async (_, line, message) => {
    // Arrange
    await appendSentMessage(file, entry);
    await appendFile(file, line);

    // Act
    const failure = await readSentLog(file).catch((error: Error) => error);

    // Assert
    expect(String(failure)).toContain(message);
  });
});

describe('engagementEventOf', () => {
  const entry: SentMessage = {
    messageId: 'msg-1',
    to: 'ana@example.com',
    tags: { org: ['o-1'], campaign: ['c-1'] },
    sentAt: '2026-02-01T08:00:00.000Z',
  };

  it('makes an Open and a Click of the message, at the clock time', () => {
    // Act
    const open = engagementEventOf(entry, { type: 'Open' }, clock);
    const click = engagementEventOf(
      entry,
      { type: 'Click', link: 'https://acme.example/sale' },
      clock,
    );

    // Assert
    const mail = {
      messageId: 'msg-1',
      timestamp: entry.sentAt,
      destination: ['ana@example.com'],
      tags: entry.tags,
    };
    expect(v.parse(SesEvent, open)).toMatchObject({
      eventType: 'Open',
      mail,
      open: { timestamp: NOW.toISOString() },
    });
    expect(v.parse(SesEvent, click)).toMatchObject({
      eventType: 'Click',
      mail,
      click: {
        timestamp: NOW.toISOString(),
        link: 'https://acme.example/sale',
      },
    });
  });
});

describe('SimulatedSesEvents over the mailbox emulator and the SQS engine', () => {
  const sqs = new SQSClient({
    endpoint: inject('sqsEndpoint'),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  const ses = localSes(inject('mailboxUrl'));
  afterAll(() => {
    sqs.destroy();
    ses.destroy();
  });

  it('sends through the emulator and puts the events, in order, on the queue', async () => {
    // Arrange
    const dataDir = await mkdtemp(join(tmpdir(), 'simulated-ses-events-'));
    const queueName = `events-${randomUUID()}`;
    await sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    const QueueUrl = await queueUrlOf(sqs, queueName);
    const mailer = new SimulatedSesEvents(new SesMailer(ses), {
      publish: sqsEventPublisher(sqs, QueueUrl),
      clock,
      sentLogFile: join(dataDir, 'sent.jsonl'),
    });
    const to = `complaint+${randomUUID()}@simulator.amazonses.com`;

    try {
      // Act
      const { messageId } = await mailer.send(messageTo(to));
      const received = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );

      // Assert
      const events = (received.Messages ?? []).map((m) =>
        v.parse(SesEvent, JSON.parse(m.Body ?? '')),
      );
      expect(events.map((e) => e.eventType)).toEqual([
        'Send',
        'Delivery',
        'Complaint',
      ]);
      expect(events.every((e) => e.mail.messageId === messageId)).toBe(true);
      expect(await readSentLog(join(dataDir, 'sent.jsonl'))).toMatchObject([
        { messageId, to },
      ]);
    } finally {
      await sqs.send(new DeleteQueueCommand({ QueueUrl }));
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
