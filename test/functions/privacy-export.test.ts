/**
 * The export of a person through the API, in process, with the
 * asynchronous half as the local stack runs it: a person signed up
 * through a hosted page in one list (and confirmed), added with fields and
 * a tag to another, opted out of a topic, enrolled in a sequence, sent a
 * campaign that SES delivered and that the person opened and clicked.
 * Everything comes back in the one document; another organization's
 * address is as unknown as one never held.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import { injectProviderEvent } from '../../infra/admin/local-provider-events.ts';
import { type LocalAsync, prepareLocalAsync } from '../../infra/local/async.ts';
import { sqsEventPublisher } from '../../shared/adapters/local/sqs-event-publisher.ts';
import { exportPerson } from '../../shared/privacy/export.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { confirmationLinkOf, mailTo, tokenOf } from '../support/mailbox.ts';

const CONTENT =
  '<p>Hello {{firstName}}</p><a href="https://example.com/read">Read</a><a href="{{unsubscribeUrl}}">Unsubscribe</a>';
const LINK = 'https://example.com/read';
const CONSENT = 'Yes, send me the monthly letter.';

/** Waits until `check` holds, polling; returns the last value read. */
const eventually = async <T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 30_000,
): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** The value of a named input of a page. */
const inputValue = (html: string, name: string): string => {
  const input = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0];
  const value = input && /value="([^"]*)"/.exec(input)?.[1];
  if (value === undefined) throw new Error(`no input ${name} in the page`);
  return value.replaceAll('&amp;', '&');
};

/** A document without its one moving part, the instant of the export. */
const timeless = (document: Record<string, unknown>) => ({
  ...document,
  exportedAt: '(now)',
});

interface World {
  client: ApiClient;
  asyncHalf: LocalAsync;
  org: TestOrganization;
  other: TestOrganization;
  email: string;
  otherEmail: string;
  otherContactId: string;
  newsletterId: string;
  customersId: string;
  pageId: string;
  topicId: string;
  sequenceId: string;
  campaignId: string;
  addedId: string;
}

let w: World;

/** The export of the person by email, as the owner asks for it. */
const exportOf = (email: string, key = w.org.ownerKey) =>
  w.client.post('/exports', { key, body: { email } });

beforeAll(async () => {
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
    queuePrefix: `x${id}-`,
  });
  const client = await createApiClient({
    clock: Object.assign(clock, { advance: () => {}, set: () => {} }) as never,
    groups: [...endpointGroups, ...pageGroups],
    signupForms: { minFillSeconds: 1 },
    asyncHalf: { ...asyncHalf, sentLogFile },
  });
  asyncHalf.start(client.deps);
  const org = await createOrganizationWithKeys(client, 'Export Co');
  const other = await createOrganizationWithKeys(client, 'Other Co');
  const key = org.ownerKey;
  const post = async (path: string, body?: unknown, as = key) => {
    const answer = await client.post(path, {
      key: as,
      ...(body === undefined ? {} : { body }),
    });
    if (answer.status >= 300) {
      throw new Error(`${path}: ${answer.status} ${answer.body}`);
    }
    return answer.json.data;
  };
  const run = randomUUID().slice(0, 8);
  const email = `pat-${run}@example.test`;
  const otherEmail = `sam-${run}@example.test`;

  // The organization's setup: a field, two lists, a topic, a template, a
  // sign-up page on one list and a sequence on the other.
  await post('/fields', {
    key: 'plan',
    label: 'Plan',
    type: 'option',
    options: ['free', 'pro'],
  });
  const newsletterId = (await post('/lists', { name: 'Newsletter' })).id;
  const customersId = (await post('/lists', { name: 'Customers' })).id;
  const topicId = (await post('/topics', { name: 'Tips' })).id;
  const templateId = (
    await post('/templates', {
      name: 'News',
      defaultSubject: 'News for {{firstName}}',
      content: CONTENT,
    })
  ).id;
  const page = await post('/signup-pages', {
    name: 'Join',
    listId: newsletterId,
    theme: 'classic',
    fields: { firstName: true },
    consentText: CONSENT,
  });
  await post(`/signup-pages/${page.id}/publish`);
  const sequenceId = (
    await post('/sequences', {
      name: 'Welcome',
      triggerType: 'list_joined',
      triggerTargetId: customersId,
    })
  ).id;
  const draft = (await client.get(`/sequences/${sequenceId}`, { key })).json
    .data.draftVersionId;
  await post(`/sequences/${sequenceId}/versions/${draft}/nodes`, {
    type: 'send_email',
    templateId,
  });
  await post(`/sequences/${sequenceId}/versions/${draft}/publish`);
  const activated = await client.patch(`/sequences/${sequenceId}`, {
    key,
    body: { status: 'active' },
  });
  if (activated.status !== 200) throw new Error(activated.body);

  // The person signs up through the hosted page, and confirms.
  const path = new URL(page.publicUrl).pathname;
  const shown = await client.get(path, {
    origin: 'pages',
    headers: { referer: 'https://blog.example.test/post' },
  });
  offset += 5_000;
  const signedUp = await client.post(path, {
    origin: 'pages',
    rawBody: new URLSearchParams({
      form_token: inputValue(shown.body, 'form_token'),
      website: '',
      email,
      firstName: 'Pat',
    }).toString(),
    contentType: 'application/x-www-form-urlencoded',
    sourceIp: '198.51.100.20',
    headers: { 'user-agent': 'Mozilla/5.0 (test)' },
  });
  if (signedUp.status !== 200) throw new Error(signedUp.body);
  const [confirmation] = await eventually(
    () => mailTo(email),
    (mail) => mail.length > 0,
  );
  await client.get('/public/confirm', {
    query: { token: tokenOf(confirmationLinkOf(confirmation)) },
  });
  // Then the organization adds the address to its customers, with a
  // field and a tag; it joins the list (and the sequence enrols it).
  const added = await post(`/lists/${customersId}/contacts`, {
    email,
    firstName: 'Pat',
    lastName: 'Doe',
    tags: ['vip'],
    fields: { plan: 'pro' },
    doubleOptIn: false,
  });
  await client.events.settle();
  await post(`/topics/${topicId}/opt-outs`, { contactId: added.id });

  // A campaign to the customers, sent; the person opens it and clicks.
  const campaignId = (
    await post('/campaigns', {
      name: 'November',
      templateId,
      listId: customersId,
    })
  ).id;
  await post(`/campaigns/${campaignId}/send`);
  await eventually(
    () => client.get(`/campaigns/${campaignId}`, { key }),
    (read) => read.json.data.status === 'sent',
  );
  const publish = sqsEventPublisher(
    asyncHalf.client,
    asyncHalf.queues.events?.url ?? '',
  );
  for (const type of ['open', 'click']) {
    await injectProviderEvent(
      { sentLogFile, clock, publish },
      {
        type,
        campaign: campaignId,
        email,
        ...(type === 'click' ? { link: LINK } : {}),
      },
    );
  }

  // Another organization holds an address of its own.
  const otherList = (
    await post('/lists', { name: 'Elsewhere' }, other.ownerKey)
  ).id;
  const otherContact = await post(
    `/lists/${otherList}/contacts`,
    { email: otherEmail, doubleOptIn: false },
    other.ownerKey,
  );

  w = {
    client,
    asyncHalf,
    org,
    other,
    email,
    otherEmail,
    otherContactId: otherContact.id,
    newsletterId,
    customersId,
    pageId: page.id,
    topicId,
    sequenceId,
    campaignId,
    addedId: added.id,
  };
  // Settled: the mail delivered, opened and clicked, the journey's step
  // done, so that two exports read the same.
  await eventually(
    () => exportOf(email),
    (answer) =>
      answer.json.data?.mail?.[0]?.clickedLinks?.length === 1 &&
      answer.json.data?.mail?.[0]?.openedAt !== null &&
      answer.json.data?.mail?.[0]?.deliveredAt !== null &&
      answer.json.data?.journeys?.[0]?.status === 'completed',
  );
}, 180_000);

afterAll(async () => {
  await w?.asyncHalf.stop();
});

describe('privacy: the export of a person', () => {
  it('POST /exports holds each contact of the address (fields, tags, the sign-up’s consent record), its topic opt-outs, its journeys and the campaign mail with what became of it', async () => {
    // Act
    const answer = await exportOf(`  ${w.email.toUpperCase()} `);
    // Assert
    expect(answer.status).toBe(200);
    const document = answer.json.data;
    expect(document.email).toBe(w.email);
    expect(document.organization).toEqual({
      id: w.org.orgId,
      name: 'Export Co',
    });
    expect(Date.parse(document.exportedAt)).not.toBeNaN();
    // Oldest first: the sign-up, then the add.
    const [signedUp, added] = document.contacts;
    expect(document.contacts).toHaveLength(2);
    expect(signedUp).toMatchObject({
      listId: w.newsletterId,
      listName: 'Newsletter',
      email: w.email,
      firstName: 'Pat',
      status: 'subscribed',
      optinIp: '198.51.100.20',
      fields: {},
      tags: [],
    });
    expect(signedUp.confirmedAt).not.toBeNull();
    expect(signedUp.consents).toEqual([
      {
        pageId: w.pageId,
        pageVersion: 1,
        consentText: CONSENT,
        ip: '198.51.100.20',
        userAgent: 'Mozilla/5.0 (test)',
        referrer: 'https://blog.example.test/post',
        askedFields: [],
        signedUpAt: expect.any(String),
        confirmedAt: signedUp.confirmedAt,
      },
    ]);
    expect(added).toMatchObject({
      id: w.addedId,
      listId: w.customersId,
      listName: 'Customers',
      firstName: 'Pat',
      lastName: 'Doe',
      status: 'subscribed',
      fields: { plan: 'pro' },
      tags: [{ id: expect.any(String), name: 'vip' }],
      consents: [],
    });
    expect(document.topics).toEqual([
      {
        topicId: w.topicId,
        name: 'Tips',
        contactId: w.addedId,
        optedOutAt: expect.any(String),
      },
    ]);
    expect(document.journeys).toEqual([
      expect.objectContaining({
        sequenceId: w.sequenceId,
        name: 'Welcome',
        contactId: w.addedId,
        listId: w.customersId,
        status: 'completed',
        exitReason: null,
        stepsSent: 1,
        lastStep: expect.objectContaining({
          position: 0,
          outcome: 'sent',
          messageId: expect.any(String),
        }),
      }),
    ]);
    expect(document.mail).toEqual([
      {
        campaignId: w.campaignId,
        campaignName: 'November',
        subject: 'News for {{firstName}}',
        seriesId: null,
        contactId: w.addedId,
        listId: w.customersId,
        outcome: 'sent',
        messageId: expect.any(String),
        sentAt: expect.any(String),
        deliveredAt: expect.any(String),
        openedAt: expect.any(String),
        clickedAt: expect.any(String),
        clickedLinks: [LINK],
        bouncedAt: null,
        complainedAt: null,
        rejectedAt: null,
        unsubscribedAt: null,
      },
    ]);
    // Each contact's activity, whole; the address is not suppressed.
    const events = (contactId: string) =>
      document.activity
        .find((entry: { contactId: string }) => entry.contactId === contactId)
        ?.events.map((event: { type: string }) => event.type);
    expect(events(w.addedId)).toEqual(
      expect.arrayContaining(['subscribed', 'tagged']),
    );
    expect(events(signedUp.id)).toEqual(
      expect.arrayContaining(['signed_up', 'confirmed']),
    );
    expect(document.suppression).toBeNull();
  });

  it('GET /contacts/{contactId}/export is the export of the contact’s address, every list included, exactly as by email', async () => {
    // Act
    const byEmail = await exportOf(w.email);
    const byIdOfOne = await w.client.get(`/contacts/${w.addedId}/export`, {
      key: w.org.ownerKey,
    });
    // Assert
    expect(byIdOfOne.status).toBe(200);
    // The activity may gain an event between the two reads (SES's events
    // arrive in the background): its contacts are compared, not its events.
    const { activity: idActivity, ...byId } = byIdOfOne.json.data;
    const { activity: emailActivity, ...byAddress } = byEmail.json.data;
    expect(timeless(byId)).toEqual(timeless(byAddress));
    const contactsOf = (activity: { contactId: string }[]) =>
      activity.map((entry) => entry.contactId);
    expect(contactsOf(idActivity)).toEqual(contactsOf(emailActivity));
    expect(byIdOfOne.json.data.contacts).toHaveLength(2);
  });

  it('another organization’s address answers 404 person.notFound exactly as an address never held', async () => {
    // Act
    const foreign = await exportOf(w.otherEmail);
    const unknown = await exportOf(`nobody-${randomUUID()}@example.test`);
    const ownedByOther = await exportOf(w.otherEmail, w.other.ownerKey);
    // Assert
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe('person.notFound');
    expect(foreign.body).toBe(unknown.body);
    expect(foreign.body).not.toContain(w.otherEmail);
    // The address is its own organization's to export.
    expect(ownedByOther.status).toBe(200);
    expect(ownedByOther.json.data.contacts).toHaveLength(1);
  });

  it('another organization’s contact id answers 404 contact.notFound exactly as an unknown id', async () => {
    // Arrange
    const unknownId = randomUUID();
    // Act
    const foreign = await w.client.get(`/contacts/${w.otherContactId}/export`, {
      key: w.org.ownerKey,
    });
    const unknown = await w.client.get(`/contacts/${unknownId}/export`, {
      key: w.org.ownerKey,
    });
    // Assert
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe('contact.notFound');
    expect(foreign.body.replaceAll(w.otherContactId, unknownId)).toBe(
      unknown.body,
    );
  });

  it('a member key answers 403 on both routes, before the body is read; a malformed address answers 400 naming email', async () => {
    // Act
    const byEmail = await exportOf(w.email, w.org.memberKey);
    const malformedByMember = await w.client.post('/exports', {
      key: w.org.memberKey,
      body: { email: 'not an address' },
    });
    const byId = await w.client.get(`/contacts/${w.addedId}/export`, {
      key: w.org.memberKey,
    });
    const malformed = await exportOf('not an address');
    // Assert
    for (const refused of [byEmail, malformedByMember, byId]) {
      expect(refused.status).toBe(403);
      expect(refused.json.code).toBe('auth.roleTooLow');
    }
    expect(malformed.status).toBe(400);
    expect(malformed.json.details).toEqual([
      { field: 'email', message: expect.any(String) },
    ]);
  });

  it('an export larger than one answer carries is refused with 413 export.tooLarge, never a failed answer', async () => {
    // Act
    const whole = await exportPerson(w.client.deps, w.org.orgId, {
      email: w.email,
    });
    const bounded = exportPerson(
      w.client.deps,
      w.org.orgId,
      { email: w.email },
      { maxBytes: 2_000 },
    );
    // Assert
    expect(whole.mail).toHaveLength(1);
    await expect(bounded).rejects.toMatchObject({
      code: 'export.tooLarge',
    });
  });
});
