import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseInvocation, USAGE } from '../../../infra/admin/commands.ts';
import {
  injectLocalProviderEvent,
  injectProviderEvent,
  type ProviderEventFlags,
  parseProviderEventFlags,
  SentMessageNotFoundError,
} from '../../../infra/admin/local-provider-events.ts';
import { localFilesOf } from '../../../infra/admin/targets.ts';
import { startSqs } from '../../../infra/local/sqs.ts';
import { writeStackFile } from '../../../infra/local/stack-file.ts';
import {
  appendSentMessage,
  type SentMessage,
} from '../../../shared/adapters/local/simulated-ses-events.ts';
import { SesEvent } from '../../../shared/delivery/ses-event.ts';
import { ValidationError } from '../../../shared/errors.ts';
import type { Clock } from '../../../shared/ports.ts';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
} from '../../../shared/runtime/local.ts';

const run = promisify(execFile);
const NOW = new Date('2026-03-02T09:30:00.000Z');
const clock: Clock = { now: () => NOW };
const CAMPAIGN = '01a20000-0000-7000-8000-0000000000c1';

const sentMessage = (
  messageId: string,
  to: string,
  campaign?: string,
): SentMessage => ({
  messageId,
  to,
  tags: {
    org: ['01a20000-0000-7000-8000-000000000001'],
    kind: [campaign ? 'campaign' : 'confirmation'],
    ...(campaign ? { campaign: [campaign] } : {}),
    'ses:from-domain': ['acme.example'],
  },
  sentAt: '2026-03-01T10:00:00.000Z',
});

describe('admin local provider event: the command line', () => {
  it('parses the command with its optional flags', () => {
    // Act
    const invocation = parseInvocation(
      'local provider event --type click --campaign c --email a@b.test --link https://a.test/x'.split(
        ' ',
      ),
    );

    // Assert
    expect(invocation.command).toMatchObject({
      words: 'local provider event',
      local: true,
    });
    expect(invocation.flags).toEqual({
      type: 'click',
      campaign: 'c',
      email: 'a@b.test',
      link: 'https://a.test/x',
    });
  });

  it('shows its flags in the usage text', () => {
    expect(USAGE).toContain(
      'local provider event --type <open|click> [--message <messageId>] [--campaign <campaignId>] [--email <address>] [--link <url>]',
    );
    // The other commands keep their placeholders.
    expect(USAGE).toContain(
      'local dns set --name <name> --type <TXT|CNAME|MX>',
    );
  });

  it.each<[string, ProviderEventFlags, string, string]>([
    [
      'an unknown type',
      { type: 'bounce', message: 'm' },
      'type',
      'open or click',
    ],
    ['no message at all', { type: 'open' }, 'message', 'is required'],
    [
      'a message id and a campaign',
      { type: 'open', message: 'm', campaign: 'c', email: 'a@b.test' },
      'message',
      'not both',
    ],
    [
      'a campaign without an email',
      { type: 'open', campaign: 'c' },
      'email',
      'is required with --campaign',
    ],
    [
      'an email without a campaign',
      { type: 'open', email: 'a@b.test' },
      'campaign',
      'is required with --email',
    ],
    [
      'an invalid email',
      { type: 'open', campaign: 'c', email: 'nope' },
      'email',
      'must be an email address',
    ],
    [
      'a click without a link',
      { type: 'click', message: 'm' },
      'link',
      'is required for a click',
    ],
    [
      'a link that is not http(s)',
      { type: 'click', message: 'm', link: 'javascript:alert(1)' },
      'link',
      'http(s) URL',
    ],
    [
      'a link that is no URL',
      { type: 'click', message: 'm', link: 'acme.example/sale' },
      'link',
      'http(s) URL',
    ],
    [
      'an open with a link',
      { type: 'open', message: 'm', link: 'https://a.test' },
      'link',
      'only a click',
    ],
    ['an empty message id', { type: 'open', message: ' ' }, 'message', 'empty'],
  ])('refuses %s, naming the flag', (_, flags, field, message) => {
    // Act
    const failure = (() => {
      try {
        parseProviderEventFlags(flags);
      } catch (error) {
        return error;
      }
    })();

    // Assert
    expect(failure).toBeInstanceOf(ValidationError);
    expect((failure as ValidationError).details[0]).toEqual({
      field,
      message: expect.stringContaining(message),
    });
  });

  it('normalizes the type and the email', () => {
    expect(
      parseProviderEventFlags({
        type: ' OPEN ',
        campaign: 'c',
        email: ' Ana@Example.COM ',
      }),
    ).toEqual({
      type: 'Open',
      query: { campaignId: 'c', email: 'ana@example.com' },
    });
  });
});

describe('admin local provider event: finding the message', () => {
  let dataDir: string;
  let sentLogFile: string;
  let published: SesEvent[];
  const inject = (flags: ProviderEventFlags) =>
    injectProviderEvent(
      {
        sentLogFile,
        clock,
        publish: async (event) => {
          published.push(event);
        },
      },
      flags,
    );

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'provider-events-'));
    sentLogFile = join(dataDir, 'sent.jsonl');
    published = [];
    for (const message of [
      sentMessage('msg-1', 'ana@example.com', CAMPAIGN),
      sentMessage('msg-2', 'ana@example.com'),
      sentMessage('msg-3', 'bob@example.com', CAMPAIGN),
      sentMessage('msg-4', 'Ana@Example.com', CAMPAIGN),
      sentMessage('msg-5', 'ana@example.com', 'another-campaign'),
    ]) {
      await appendSentMessage(sentLogFile, message);
    }
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('publishes an open of the message with that id, with its tags', async () => {
    // Act
    const event = await inject({ type: 'open', message: 'msg-2' });

    // Assert
    expect(published).toEqual([event]);
    expect(v.parse(SesEvent, event)).toEqual({
      eventType: 'Open',
      mail: {
        messageId: 'msg-2',
        timestamp: '2026-03-01T10:00:00.000Z',
        destination: ['ana@example.com'],
        tags: sentMessage('msg-2', 'ana@example.com').tags,
      },
      open: {
        timestamp: NOW.toISOString(),
        ipAddress: '127.0.0.1',
        userAgent: expect.any(String),
      },
    });
  });

  it('publishes a click of the latest message of the campaign to that address', async () => {
    // Act
    const event = await inject({
      type: 'click',
      campaign: CAMPAIGN,
      email: 'ANA@example.com',
      link: 'https://acme.example/sale?utm=1',
    });

    // Assert
    expect(v.parse(SesEvent, event)).toMatchObject({
      eventType: 'Click',
      mail: { messageId: 'msg-4', tags: { campaign: [CAMPAIGN] } },
      click: {
        timestamp: NOW.toISOString(),
        link: 'https://acme.example/sale?utm=1',
      },
    });
    expect(published).toEqual([event]);
  });

  it.each<[string, ProviderEventFlags, string]>([
    [
      'an unknown message id',
      { type: 'open', message: 'msg-404' },
      'No message msg-404 in the sent log',
    ],
    [
      'a campaign that never went to the address',
      { type: 'open', campaign: CAMPAIGN, email: 'cy@example.com' },
      `No message of campaign ${CAMPAIGN} to cy@example.com`,
    ],
  ])('says so for %s, and publishes nothing', async (_, flags, message) => {
    // Act
    const failure = await inject(flags).catch((error: unknown) => error);

    // Assert
    expect(failure).toBeInstanceOf(SentMessageNotFoundError);
    expect(String(failure)).toContain(message);
    expect(published).toEqual([]);
  });

  it('says no stack is running when the data dir has no stack.json', async () => {
    // Act
    const failure = await injectLocalProviderEvent(
      localFilesOf(dataDir),
      { type: 'open', message: 'msg-1' },
      clock,
    ).catch((error: unknown) => error);

    // Assert
    expect(String(failure)).toContain(
      `No local stack is running for ${dataDir}`,
    );
  });
});

describe('admin local provider event: as a process, against a running stack', () => {
  let dataDir: string;
  let sqsEngine: Awaited<ReturnType<typeof startSqs>>;
  let sqs: SQSClient;

  // An SQS engine of its own: its "events" queue is this file's alone.
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'provider-events-cli-'));
    sqsEngine = await startSqs();
    sqs = new SQSClient({
      endpoint: sqsEngine.endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    await writeStackFile(dataDir, {
      api: 'http://127.0.0.1:9',
      dynamodb: 'http://127.0.0.1:9',
      mailbox: 'http://127.0.0.1:9',
      dns: '127.0.0.1:9',
      sqs: sqsEngine.endpoint,
      tableName: 'unused',
      pid: process.pid,
    });
  });

  afterEach(async () => {
    sqs.destroy();
    await sqsEngine.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const admin = (...args: string[]) =>
    run('npm', [
      'run',
      '--silent',
      'admin',
      '--',
      'local',
      'provider',
      'event',
      ...args,
      '--data-dir',
      dataDir,
    ]);

  it('publishes the event to the events queue and prints it; exits 1 for an unknown message, naming it', async () => {
    // Arrange
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: 'events' }),
    );
    await appendSentMessage(
      localFilesOf(dataDir).sentLogFile,
      sentMessage('msg-1', 'ana@example.com', CAMPAIGN),
    );

    // Act
    const ok = await admin(
      '--type',
      'click',
      '--campaign',
      CAMPAIGN,
      '--email',
      'ana@example.com',
      '--link',
      'https://acme.example/sale',
    );
    const unknown = await admin('--type', 'open', '--message', 'msg-9').catch(
      (error: { code: number; stderr: string }) => error,
    );
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      }),
    );

    // Assert
    const printed = JSON.parse(ok.stdout);
    expect(v.parse(SesEvent, printed)).toMatchObject({
      eventType: 'Click',
      mail: { messageId: 'msg-1' },
      click: { link: 'https://acme.example/sale' },
    });
    expect(received.Messages?.map((m) => JSON.parse(m.Body ?? ''))).toEqual([
      printed,
    ]);
    expect(unknown).toMatchObject({ code: 1 });
    expect((unknown as { stderr: string }).stderr).toContain(
      'No message msg-9 in the sent log',
    );
  }, 30_000);

  it('says the stack has no events queue when there is none', async () => {
    // Arrange
    await appendSentMessage(
      localFilesOf(dataDir).sentLogFile,
      sentMessage('msg-1', 'ana@example.com'),
    );

    // Act
    const failure = await injectLocalProviderEvent(
      localFilesOf(dataDir),
      { type: 'open', message: 'msg-1' },
      clock,
    ).catch((error: unknown) => error);

    // Assert
    expect(String(failure)).toContain('has no "events" queue');
  });
});
