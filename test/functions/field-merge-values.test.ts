/**
 * Custom fields as merge values (issue 31), through the API in process,
 * with the asynchronous half as the local stack runs it: a field, a
 * contact holding a value, a template reading it; the template's report,
 * the preview, a test send and a campaign send read in the local mailbox;
 * then the field deleted.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type LocalAsync, prepareLocalAsync } from '../../infra/local/async.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
} from '../support/api-client.ts';
import { mailTo, type StoredEmail } from '../support/mailbox.ts';

const started: LocalAsync[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((half) => half.stop()));
});

/** Waits until `check` holds, polling; returns the last value read. */
const eventually = async <T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 20_000,
): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** A client over a fresh table with the asynchronous half running. */
const stack = async (): Promise<ApiClient> => {
  const scratch = inject('scratchDir');
  const id = randomUUID().slice(0, 8);
  const asyncHalf = await prepareLocalAsync({
    sqsEndpoint: inject('sqsEndpoint'),
    sentLogFile: join(scratch, `sent-${id}.jsonl`),
    schedulesFile: join(scratch, `schedules-${id}.json`),
    clock: { now: () => new Date() },
    queuePrefix: `f${id}-`,
  });
  const client = await createApiClient({
    asyncHalf: { ...asyncHalf, sentLogFile: join(scratch, `sent-${id}.jsonl`) },
  });
  asyncHalf.start(client.deps);
  started.push(asyncHalf);
  return client;
};

const SUBJECT = 'For {{ fields.company }} ({{ fields.plan }})';
const CONTENT = [
  '<p>Hi {{ firstName }} of {{ fields.company }}</p>',
  '<p>Plan {{ fields.plan }}, {{ fields.seats | default: "no" }} seats, VIP {{ fields.vip }}, {{ fields.nope | default: "none" }}</p>',
  '<a href="{{ unsubscribeUrl }}">Unsubscribe</a>',
].join('');

/** The one mail an address received, once it has. */
const theMailOf = async (address: string): Promise<StoredEmail> => {
  const mails = await eventually(
    () => mailTo(address),
    (found) => found.length > 0,
  );
  const [mail] = mails;
  if (!mail || mails.length !== 1) {
    throw new Error(`${address} received ${mails.length} mails`);
  }
  return mail;
};

describe('custom fields as merge values, through the pipeline', () => {
  it('a field’s value reaches the template’s report, the preview, a test send and a campaign’s mail, escaped as names are; a contact without one gets the default; a deleted field renders empty and is reported unknown', async () => {
    // Arrange: fields, a list of two contacts (one holding values), a template.
    const client = await stack();
    const org = await createOrganizationWithKeys(client, 'Merge Co');
    const key = org.ownerKey;
    const define = (body: object) => client.post('/fields', { key, body });
    await define({ key: 'company', label: 'Company', type: 'text' });
    const plan = await define({
      key: 'plan',
      label: 'Plan',
      type: 'option',
      options: ['free', 'pro'],
      defaultValue: 'free',
    });
    await define({ key: 'seats', label: 'Seats', type: 'number' });
    await define({ key: 'vip', label: 'VIP', type: 'boolean' });
    const list = await client.post('/lists', {
      key,
      body: { name: 'Readers' },
    });
    const listId = list.json.data.id as string;
    const run = randomUUID().slice(0, 8);
    const ann = `ann-${run}@example.test`;
    const bob = `bob-${run}@example.test`;
    const qa = `qa-${run}@example.test`;
    await client.post(`/lists/${listId}/contacts`, {
      key,
      body: {
        email: ann,
        firstName: 'Ann',
        doubleOptIn: false,
        fields: { company: '<b>&"', plan: 'pro', seats: 12, vip: true },
      },
    });
    await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email: bob, firstName: 'Bob', doubleOptIn: false },
    });

    // Act: the template (an unknown field is saved, as any unknown
    // variable), its preview, a test send, a campaign sent.
    const template = await client.post('/templates', {
      key,
      body: { name: 'Fields', defaultSubject: SUBJECT, content: CONTENT },
    });
    const templateId = template.json.data.id as string;
    const preview = await client.post('/render', {
      key: org.memberKey,
      body: {
        templateId,
        variables: { 'fields.company': 'Preview <Co>', 'fields.seats': 3 },
      },
    });
    const namespace = await client.post('/render', {
      key: org.memberKey,
      body: { templateId, variables: { fields: 'x', 'fields.Bad': 'y' } },
    });
    const tested = await client.post(`/templates/${templateId}/test-send`, {
      key,
      body: { email: qa },
    });
    const campaign = await client.post('/campaigns', {
      key,
      body: { name: 'November', templateId, listId },
    });
    const campaignId = campaign.json.data.id as string;
    const sent = await client.post(`/campaigns/${campaignId}/send`, { key });
    await eventually(
      () => client.get(`/campaigns/${campaignId}`, { key }),
      (read) => read.json.data.status === 'sent',
    );

    // Assert: what the template reports and the preview shows.
    expect(template.status).toBe(201);
    expect(template.json.data.unknownVariables).toEqual(['fields.nope']);
    expect(preview.status).toBe(200);
    expect(preview.json.data).toMatchObject({
      subject: 'For Preview <Co> (free)',
      unknownVariables: ['fields.nope'],
    });
    expect(preview.json.data.html).toContain(
      '<p>Hi  of Preview &lt;Co&gt;</p><p>Plan free, 3 seats, VIP , none</p>',
    );
    expect(preview.json.data.text).toContain('Hi of Preview <Co>');
    expect(namespace.status).toBe(400);
    expect(
      namespace.json.details.map((d: { field: string }) => d.field),
    ).toEqual(['variables.fields', 'variables.fields.Bad']);
    // The test send: a reader without values sees each field's default.
    expect(tested.json.data).toEqual({ status: 'sent', to: qa });
    const test = await theMailOf(qa);
    expect(test.subject).toBe('[Test] For  (free)');
    expect(test.body.html).toContain('Plan free, no seats, VIP , none');
    // The campaign: each contact's values, escaped in HTML, plain in the
    // subject and the text part; the default for a contact without one.
    expect(sent.status).toBe(202);
    const annMail = await theMailOf(ann);
    expect(annMail.subject).toBe('For <b>&" (pro)');
    expect(annMail.body.html).toContain(
      '<p>Hi Ann of &lt;b&gt;&amp;&#34;</p><p>Plan pro, 12 seats, VIP true, none</p>',
    );
    expect(annMail.body.text).toContain('Hi Ann of <b>&"');
    const bobMail = await theMailOf(bob);
    expect(bobMail.subject).toBe('For  (free)');
    expect(bobMail.body.html).toContain(
      '<p>Hi Bob of </p><p>Plan free, no seats, VIP , none</p>',
    );

    // Act: the field `plan` deleted (Ann still holds a value under it).
    const deleted = await client.delete(`/fields/${plan.json.data.id}`, {
      key,
    });
    const after = await client.post('/render', {
      key,
      body: { templateId },
    });
    const again = await client.post('/campaigns', {
      key,
      body: { name: 'December', templateId, listId },
    });
    const againId = again.json.data.id as string;
    await client.post(`/campaigns/${againId}/send`, { key });
    await eventually(
      () => client.get(`/campaigns/${againId}`, { key }),
      (read) => read.json.data.status === 'sent',
    );
    const annAgain = await eventually(
      () => mailTo(ann),
      (found) => found.length === 2,
    );

    // Assert: unknown to the report, empty in the mail, never an error.
    expect(deleted.status).toBe(200);
    expect(after.json.data.unknownVariables).toEqual([
      'fields.nope',
      'fields.plan',
    ]);
    expect(after.json.data.subject).toBe('For  ()');
    expect(annAgain[1]?.subject).toBe('For <b>&" ()');
    expect(annAgain[1]?.body.html).toContain('Plan , 12 seats, VIP true');
  });
});
