/**
 * Test support for campaigns over HTTP with the asynchronous half running
 * (dispatcher, senders, the local clock): a stack per test, stopped after
 * it; an allowed organization with a list, contacts and a template; a
 * draft campaign; a poll until a condition holds.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, inject } from 'vitest';
import { type LocalAsync, prepareLocalAsync } from '../../infra/local/async.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from './api-client.ts';

const started: LocalAsync[] = [];
// Each test's pollers stop with it: stacks left polling would slow the
// later tests of the file down (15 long polls each).
afterEach(async () => {
  await Promise.all(started.splice(0).map((half) => half.stop()));
});

export const CONTENT =
  '<p>Hello {{firstName}}</p><a href="https://example.com/read">Read</a><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

/** Waits until `check` holds, polling; returns the last value read. */
export const eventually = async <T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 20_000,
): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

/** A client over a fresh table with the asynchronous half running. */
export const campaignStack = async () => {
  const scratch = inject('scratchDir');
  const id = randomUUID().slice(0, 8);
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };
  const sentLogFile = join(scratch, `sent-${id}.jsonl`);
  const asyncHalf = await prepareLocalAsync({
    sqsEndpoint: inject('sqsEndpoint'),
    sentLogFile,
    schedulesFile: join(scratch, `schedules-${id}.json`),
    clock,
    queuePrefix: `c${id}-`,
  });
  const client = await createApiClient({
    clock: Object.assign(clock, { advance: () => {}, set: () => {} }) as never,
    asyncHalf: { ...asyncHalf, sentLogFile },
  });
  asyncHalf.start(client.deps);
  started.push(asyncHalf);
  return {
    client,
    sentLogFile,
    advanceMinutes: (minutes: number) => {
      offset += minutes * 60_000;
    },
  };
};

/** An allowed organization with a list of subscribed contacts and a template. */
export const organization = async (
  client: ApiClient,
  options: { contacts?: string[]; content?: string } = {},
) => {
  const org = await createOrganizationWithKeys(client, 'Campaign Co');
  const key = org.ownerKey;
  const list = await client.post('/lists', { key, body: { name: 'Readers' } });
  const listId = list.json.data.id as string;
  const run = randomUUID().slice(0, 8);
  const emails = options.contacts ?? [
    `ann-${run}@example.test`,
    `bob-${run}@example.test`,
    `cy-${run}@example.test`,
  ];
  const contactIds: string[] = [];
  for (const email of emails) {
    const added = await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email, firstName: email.split('@')[0], doubleOptIn: false },
    });
    contactIds.push(added.json.data.id);
  }
  const template = await client.post('/templates', {
    key,
    body: {
      name: 'Newsletter',
      defaultSubject: 'News for {{firstName}}',
      content: options.content ?? CONTENT,
    },
  });
  return {
    ...org,
    key,
    listId,
    contactIds,
    emails,
    templateId: template.json.data.id as string,
  };
};

export const createCampaign = async (
  client: ApiClient,
  org: Awaited<ReturnType<typeof organization>>,
  body: Record<string, unknown> = {},
) => {
  const answer = await client.post('/campaigns', {
    key: org.key,
    body: {
      name: 'November',
      templateId: org.templateId,
      listId: org.listId,
      ...body,
    },
  });
  if (answer.status !== 201) throw new Error(answer.body);
  return answer.json.data.id as string;
};
