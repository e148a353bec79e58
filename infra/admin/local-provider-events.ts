/**
 * `admin local provider event`: an open or a click of a message the local
 * stack sent, published to the running stack's events queue as SES would
 * publish it. On AWS the recipient's mail client makes these events; on the
 * laptop nobody reads the mailbox, so the operator (or a test) plays the
 * reader. The message is found in the sent log the simulated SES keeps in
 * the data dir, so the event carries the message's own id and tags.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import {
  engagementEventOf,
  readSentLog,
  type SentMessage,
  type SesEventPublisher,
} from '../../shared/adapters/local/simulated-ses-events.ts';
import {
  LOCAL_EVENTS_QUEUE_NAME,
  queueUrlOf,
  sqsEventPublisher,
} from '../../shared/adapters/local/sqs-event-publisher.ts';
import { systemClock } from '../../shared/adapters/system.ts';
import type { SesEvent } from '../../shared/delivery/ses-event.ts';
import { ValidationError } from '../../shared/errors.ts';
import { EMAIL_TAGS } from '../../shared/mail/tags.ts';
import type { Clock } from '../../shared/ports.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../shared/runtime/local.ts';
import { EmailAddress, parse } from '../../shared/validation.ts';
import { readStackFile } from '../local/stack-file.ts';

const HttpUrl = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  // One check: valibot runs every action of a pipe, so a separate v.url()
  // would not spare this one an unparsable URL.
  v.check(
    (url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol),
    'must be an http(s) URL',
  ),
);

const NonEmpty = v.pipe(v.string(), v.trim(), v.nonEmpty('must not be empty'));

const EventInput = v.object({
  type: v.pipe(
    v.string(),
    v.trim(),
    v.toLowerCase(),
    v.picklist(['open', 'click'], 'must be open or click'),
  ),
  message: v.optional(NonEmpty),
  campaign: v.optional(NonEmpty),
  email: v.optional(EmailAddress),
  link: v.optional(HttpUrl),
});

/** The flags of the command, as the CLI gives them. */
export interface ProviderEventFlags {
  type?: string;
  message?: string;
  campaign?: string;
  email?: string;
  link?: string;
}

/** Which sent message the event is about. */
export type SentMessageQuery =
  | { messageId: string }
  | { campaignId: string; email: string };

/** No message of the sent log matches the query. */
export class SentMessageNotFoundError extends Error {}

/** What injecting an event needs: the sent log, the time, the queue. */
export interface ProviderEventDeps {
  sentLogFile: string;
  clock: Clock;
  publish: SesEventPublisher;
}

const invalid = (field: string, message: string) =>
  new ValidationError(`Invalid input: ${field}: ${message}`, [
    { field, message },
  ]);

/**
 * Validates the flags: the type; the message by id, or by campaign and
 * recipient (not both); a link for a click (an http(s) URL: the sent log
 * keeps no body to take a link from, so there is no default) and none for
 * an open.
 */
export const parseProviderEventFlags = (
  flags: ProviderEventFlags,
): { type: 'Open' | 'Click'; query: SentMessageQuery; link?: string } => {
  const input = parse(EventInput, flags);
  const byCampaign = input.campaign !== undefined || input.email !== undefined;
  if (input.message !== undefined && byCampaign) {
    throw invalid(
      'message',
      'give either --message, or --campaign and --email, not both',
    );
  }
  if (input.message === undefined && !byCampaign) {
    throw invalid(
      'message',
      'is required (or --campaign <campaignId> and --email <address>)',
    );
  }
  if (byCampaign && input.campaign === undefined) {
    throw invalid('campaign', 'is required with --email');
  }
  if (byCampaign && input.email === undefined) {
    throw invalid('email', 'is required with --campaign');
  }
  if (input.type === 'click' && input.link === undefined) {
    throw invalid('link', 'is required for a click: the http(s) URL clicked');
  }
  if (input.type === 'open' && input.link !== undefined) {
    throw invalid('link', 'only a click has a link');
  }
  const query: SentMessageQuery =
    input.message !== undefined
      ? { messageId: input.message }
      : { campaignId: input.campaign ?? '', email: input.email ?? '' };
  return {
    type: input.type === 'open' ? 'Open' : 'Click',
    query,
    ...(input.link !== undefined ? { link: input.link } : {}),
  };
};

/**
 * The message of the sent log the query names: by id, or the latest (last
 * sent) to that recipient with that campaign tag.
 */
export const findSentMessage = (
  messages: readonly SentMessage[],
  query: SentMessageQuery,
): SentMessage | undefined =>
  'messageId' in query
    ? messages.find((m) => m.messageId === query.messageId)
    : messages.findLast(
        (m) =>
          m.to.toLowerCase() === query.email &&
          m.tags[EMAIL_TAGS.campaign]?.[0] === query.campaignId,
      );

/**
 * Publishes an open or a click of a sent message and returns the event.
 * 1. Validate the flags (nothing is read before they are right).
 * 2. Find the message in the sent log; a clear error when it is not there.
 * 3. Make the event at the clock's time and publish it.
 */
export const injectProviderEvent = async (
  deps: ProviderEventDeps,
  flags: ProviderEventFlags,
): Promise<SesEvent> => {
  const { type, query, link } = parseProviderEventFlags(flags);
  const sent = findSentMessage(await readSentLog(deps.sentLogFile), query);
  if (!sent) {
    throw new SentMessageNotFoundError(
      'messageId' in query
        ? `No message ${query.messageId} in the sent log ${deps.sentLogFile}: only messages the local stack sent have events`
        : `No message of campaign ${query.campaignId} to ${query.email} in the sent log ${deps.sentLogFile}`,
    );
  }
  const event = engagementEventOf(
    sent,
    type === 'Open' ? { type } : { type, link: link ?? '' },
    deps.clock,
  );
  await deps.publish(event);
  return event;
};

/**
 * Publishes one event to the events queue of the local stack running on
 * `dataDir` (its SQS endpoint from stack.json, the queue by name).
 */
export const publishToLocalStack = async (
  dataDir: string,
  event: SesEvent,
): Promise<void> => {
  const stack = await readStackFile(dataDir).catch((error: unknown) => {
    throw new Error(
      `No local stack is running for ${dataDir} (no stack.json): the event goes to a running stack's events queue. Start it with "npm start".`,
      { cause: error },
    );
  });
  const client = new SQSClient({
    endpoint: stack.sqs,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    const queueUrl = await queueUrlOf(client, LOCAL_EVENTS_QUEUE_NAME).catch(
      (error: unknown) => {
        throw new Error(
          `The local stack at ${stack.sqs} has no "${LOCAL_EVENTS_QUEUE_NAME}" queue: ${(error as Error).message}`,
          { cause: error },
        );
      },
    );
    await sqsEventPublisher(client, queueUrl)(event);
  } finally {
    client.destroy();
  }
};

/**
 * The command on a data dir: finds the message in its sent log and
 * publishes the event to its running stack.
 */
export const injectLocalProviderEvent = (
  files: { dataDir: string; sentLogFile: string },
  flags: ProviderEventFlags,
  clock: Clock = systemClock,
): Promise<SesEvent> =>
  injectProviderEvent(
    {
      sentLogFile: files.sentLogFile,
      clock,
      publish: (event) => publishToLocalStack(files.dataDir, event),
    },
    flags,
  );
