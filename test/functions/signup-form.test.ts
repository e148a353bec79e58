/**
 * The hosted sign-up form through the pipeline (in process): always double
 * opt-in, the same answer whatever the address (no enumeration), the
 * consent record, and the defences (honeypot, fill time, CAPTCHA, limits
 * per address and per email, one confirmation per address per page a day).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import type { CaptchaVerifier } from '../../shared/signup/ports.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { uniqueEmail } from '../support/audience.ts';
import { fixedClock } from '../support/dynamo.ts';
import { confirmationLinkOf, mailTo, tokenOf } from '../support/mailbox.ts';

/** The value of a named input of a page. */
const inputValue = (html: string, name: string): string => {
  const input = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0];
  const value = input && /value="([^"]*)"/.exec(input)?.[1];
  if (value === undefined) throw new Error(`no input ${name} in the page`);
  return value.replaceAll('&amp;', '&');
};

/** A page's body without what differs on every view (the form token). */
const stable = (html: string) =>
  html.replace(
    /(name="form_token"[^>]*value=")[^"]*"|(value=")[^"]*("[^>]*name="form_token")/g,
    '$1$2…"$3',
  );

interface Harness {
  client: ApiClient;
  clock: ReturnType<typeof fixedClock>;
  org: TestOrganization;
  listId: string;
  path: string;
  pageId: string;
}

const harness = async (
  options: {
    captcha?: CaptchaVerifier;
    maxPerIpPerHour?: number;
    maxPerEmailPerHour?: number;
  } = {},
): Promise<Harness> => {
  // In the future: DynamoDB Local deletes items whose TTL is past, and the
  // form's counters expire two hours after their window.
  const clock = fixedClock('2036-11-23T10:00:00.000Z');
  const client = await createApiClient({
    clock,
    groups: [...endpointGroups, ...pageGroups],
    signupForms: {
      minFillSeconds: 3,
      maxPerIpPerHour: options.maxPerIpPerHour ?? 1000,
      maxPerEmailPerHour: options.maxPerEmailPerHour ?? 1000,
      ...(options.captcha ? { captcha: options.captcha } : {}),
    },
  });
  const org = await createOrganizationWithKeys(client, 'Forms');
  const listId = (
    await client.post('/lists', { key: org.ownerKey, body: { name: 'News' } })
  ).json.data.id;
  const page = (
    await client.post('/signup-pages', {
      key: org.ownerKey,
      body: {
        name: 'Newsletter',
        listId,
        theme: 'classic',
        fields: { firstName: true, lastName: true },
        consentText: 'Yes, send me the monthly letter.',
      },
    })
  ).json.data;
  await client.post(`/signup-pages/${page.id}/publish`, { key: org.ownerKey });
  return {
    client,
    clock,
    org,
    listId,
    path: new URL(page.publicUrl).pathname,
    pageId: page.id,
  };
};

/**
 * Opens the form (coming from a blog post unless `referrer` says
 * otherwise), waits `seconds` like a person, and sends it as a browser
 * does from our pages: without a Referer.
 */
const signUp = async (
  h: Harness,
  fields: Record<string, string>,
  options: {
    seconds?: number;
    ip?: string;
    token?: string;
    path?: string;
    referrer?: string | null;
    postHeaders?: Record<string, string>;
  } = {},
) => {
  const path = options.path ?? h.path;
  const referrer =
    options.referrer === undefined
      ? 'https://blog.example.test/post'
      : options.referrer;
  const shown = await h.client.get(path, {
    origin: 'pages',
    ...(referrer === null ? {} : { headers: { referer: referrer } }),
  });
  h.clock.advance((options.seconds ?? 8) * 1000);
  const form = new URLSearchParams({
    form_token: options.token ?? inputValue(shown.body, 'form_token'),
    website: '',
    ...fields,
  });
  return h.client.post(path, {
    origin: 'pages',
    rawBody: form.toString(),
    contentType: 'application/x-www-form-urlencoded',
    sourceIp: options.ip ?? '198.51.100.20',
    headers: { 'user-agent': 'Mozilla/5.0 (test)', ...options.postHeaders },
  });
};

/** Another published page of the harness's organization and list: its path. */
const anotherPage = async (h: Harness, name: string): Promise<string> => {
  const page = (
    await h.client.post('/signup-pages', {
      key: h.org.ownerKey,
      body: { name, listId: h.listId, theme: 'minimal' },
    })
  ).json.data;
  await h.client.post(`/signup-pages/${page.id}/publish`, {
    key: h.org.ownerKey,
  });
  return new URL(page.publicUrl).pathname;
};

/** Asserts answers are the normal success: its status, its body (but the token). */
const expectNeutral = (
  answers: { status: number; body: string }[],
  normal: { status: number; body: string } | undefined,
) => {
  expect(answers.length).toBeGreaterThan(0);
  expect(normal?.status).toBe(200);
  for (const answer of answers) {
    expect(answer.status).toBe(normal?.status);
    expect(stable(answer.body)).toBe(stable(normal?.body ?? ''));
  }
};

const contactOf = async (h: Harness, email: string) => {
  const found = await h.client.get('/contacts', {
    key: h.org.ownerKey,
    query: { listId: h.listId, search: email },
  });
  return found.json.data[0];
};

describe('the hosted sign-up form', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await harness();
  });

  it('a sign-up is pending with its consent record and gets the confirmation email; following it subscribes (and records the confirmation)', async () => {
    // Arrange
    const email = uniqueEmail('signup');
    // Act
    const answer = await signUp(h, {
      email: email.toUpperCase(),
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    const pending = await contactOf(h, email);
    const [mail] = await mailTo(email);
    const confirmed = await h.client.get('/public/confirm', {
      query: { token: tokenOf(confirmationLinkOf(mail)) },
    });
    const after = (
      await h.client.get(`/contacts/${pending.id}`, { key: h.org.memberKey })
    ).json.data;
    const facts = await h.client.events.settle();
    // Assert
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('role="status"');
    expect(pending).toMatchObject({
      email,
      firstName: 'Ada',
      lastName: 'Lovelace',
      status: 'pending',
      optinIp: '198.51.100.20',
    });
    expect(pending.consents).toEqual([
      {
        pageId: h.pageId,
        pageVersion: 1,
        consentText: 'Yes, send me the monthly letter.',
        ip: '198.51.100.20',
        userAgent: 'Mozilla/5.0 (test)',
        referrer: 'https://blog.example.test/post',
        // The page asks no custom field.
        askedFields: [],
        signedUpAt: '2036-11-23T10:00:08.000Z',
        confirmedAt: null,
      },
    ]);
    expect(confirmed.status).toBe(200);
    expect(after.status).toBe('subscribed');
    expect(after.consents[0].confirmedAt).toBe(after.confirmedAt);
    // Confirmed: it joined the list, the fact sequences enrol on.
    expect(
      facts.filter(
        (fact) =>
          fact.type === 'contact.joinedList' && fact.contactId === pending.id,
      ),
    ).toHaveLength(1);
    expect(after.confirmedAt).not.toBeNull();
  });

  it('the consent record names the page that sent the visitor (the Referer of the page view, carried by the form token), never the post’s own; a non-http(s) or overlong one is none', async () => {
    // Arrange
    const [fromNews, spoofed, scripted, overlong, none] = [
      uniqueEmail('ref-news'),
      uniqueEmail('ref-spoofed'),
      uniqueEmail('ref-script'),
      uniqueEmail('ref-long'),
      uniqueEmail('ref-none'),
    ];
    const long = `https://long.example.test/${'a'.repeat(2048)}`;
    // Act
    await signUp(
      h,
      { email: fromNews },
      { referrer: 'https://news.example.test/issue?id=7#top' },
    );
    await signUp(
      h,
      { email: spoofed },
      {
        referrer: null,
        postHeaders: { referer: 'https://spoofed.example.test/' },
      },
    );
    await signUp(h, { email: scripted }, { referrer: 'javascript:alert(1)' });
    await signUp(h, { email: overlong }, { referrer: long });
    await signUp(h, { email: none }, { referrer: null });
    // Assert
    const referrerOf = async (email: string) =>
      (await contactOf(h, email)).consents[0].referrer;
    expect(await referrerOf(fromNews)).toBe(
      'https://news.example.test/issue?id=7#top',
    );
    for (const email of [spoofed, scripted, overlong, none]) {
      expect(await referrerOf(email), email).toBeNull();
    }
  });

  it('a pasted page records the text of its form as the consent wording, and takes the names its form asks (read from its HTML)', async () => {
    // Arrange: a form asking both names, its wording in its own HTML.
    const created = await h.client.post('/signup-pages', {
      key: h.org.ownerKey,
      body: {
        name: 'Pasted',
        listId: h.listId,
        html: `<h1>Letters</h1><form><p>We write <em>once</em> a month.</p>
          <label>Email <input type="email" name="email"></label>
          <label>First <input name="firstName"></label>
          <label>Last <input name="lastName"></label>
          <p>You can unsubscribe at any time.</p><button>Join</button></form>`,
      },
    });
    await h.client.post(`/signup-pages/${created.json.data.id}/publish`, {
      key: h.org.ownerKey,
    });
    const email = uniqueEmail('pasted');
    const wording =
      'We write once a month. Email First Last You can unsubscribe at any time. Join';
    // Act
    const answer = await signUp(
      h,
      { email, firstName: 'Grace', lastName: 'Hopper' },
      { path: new URL(created.json.data.publicUrl).pathname },
    );
    // Assert
    expect(created.json.data.content).toMatchObject({
      fields: { firstName: true, lastName: true },
      consentText: wording,
    });
    expect(answer.status).toBe(200);
    expect(await contactOf(h, email)).toMatchObject({
      firstName: 'Grace',
      lastName: 'Hopper',
      consents: [
        expect.objectContaining({
          pageId: created.json.data.id,
          consentText: wording,
        }),
      ],
    });
  });

  it('always double opt-in: with optin.required false the contact is still pending', async () => {
    // Arrange
    await h.client.patch('/settings/optin', {
      key: h.org.ownerKey,
      body: { required: false },
    });
    const email = uniqueEmail('optional');
    // Act
    await signUp(h, { email });
    // Assert
    expect((await contactOf(h, email)).status).toBe('pending');
    expect(await mailTo(email)).toHaveLength(1);
  });

  it('answers a new, pending, subscribed and unsubscribed address alike (no enumeration); an unsubscribed one stays unsubscribed until it confirms', async () => {
    // Arrange: one address of each state.
    const fresh = uniqueEmail('fresh');
    const pending = uniqueEmail('pending');
    const subscribed = uniqueEmail('subscribed');
    const unsubscribed = uniqueEmail('unsubscribed');
    await h.client.post(`/lists/${h.listId}/contacts/bulk`, {
      key: h.org.ownerKey,
      body: {
        contacts: [
          { email: pending, status: 'pending' },
          { email: subscribed, status: 'subscribed', firstName: 'Sub' },
          { email: unsubscribed, status: 'unsubscribed' },
        ],
      },
    });
    // Act
    const answers = [];
    for (const email of [fresh, pending, subscribed, unsubscribed]) {
      answers.push(await signUp(h, { email, firstName: 'Eve', lastName: 'X' }));
    }
    // Assert
    const bodies = answers.map((a) => stable(a.body));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(bodies).size).toBe(1);
    expect((await contactOf(h, subscribed)).firstName).toBe('Sub');
    expect(await mailTo(subscribed)).toEqual([]);
    const stillOut = await contactOf(h, unsubscribed);
    expect(stillOut.status).toBe('unsubscribed');
    const [mail] = await mailTo(unsubscribed);
    await h.client.get('/public/confirm', {
      query: { token: tokenOf(confirmationLinkOf(mail)) },
    });
    expect((await contactOf(h, unsubscribed)).status).toBe('subscribed');
    expect(await mailTo(pending)).toHaveLength(1);
  });

  it('a repeat sign-up of a pending or unsubscribed address takes this sign-up’s optinAt and optinIp (its new link confirms it), and keeps the names', async () => {
    // Arrange: both signed up long ago, from elsewhere.
    const [pending, unsubscribed] = [
      uniqueEmail('again-pending'),
      uniqueEmail('again-unsub'),
    ];
    const old = { optinAt: '2026-01-05T09:00:00.000Z', optinIp: '203.0.113.5' };
    await h.client.post(`/lists/${h.listId}/contacts/bulk`, {
      key: h.org.ownerKey,
      body: {
        contacts: [
          { email: pending, status: 'pending', firstName: 'Old', ...old },
          { email: unsubscribed, status: 'unsubscribed', ...old },
        ],
      },
    });
    // Act
    await signUp(
      h,
      { email: pending, firstName: 'New' },
      { ip: '198.51.100.77' },
    );
    const pendingAt = h.clock.now().toISOString();
    await signUp(h, { email: unsubscribed }, { ip: '198.51.100.78' });
    const unsubscribedAt = h.clock.now().toISOString();
    // Assert
    expect(await contactOf(h, pending)).toMatchObject({
      status: 'pending',
      firstName: 'Old',
      optinAt: pendingAt,
      optinIp: '198.51.100.77',
    });
    expect(await contactOf(h, unsubscribed)).toMatchObject({
      status: 'unsubscribed',
      optinAt: unsubscribedAt,
      optinIp: '198.51.100.78',
    });
  });

  it('a mistake a person can fix answers 400 with the form, the error beside its field and the values kept; nothing is written', async () => {
    // Arrange
    const before = await h.client.scan();
    // Act
    const answer = await signUp(h, {
      email: 'not-an-address',
      firstName: 'Bo',
    });
    const tooLong = await signUp(h, {
      email: uniqueEmail(),
      firstName: 'x'.repeat(101),
    });
    // Assert
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('aria-invalid="true"');
    expect(answer.body).toContain('value="not-an-address"');
    expect(answer.body).toContain('value="Bo"');
    expect(tooLong.status).toBe(400);
    const writes = (await h.client.scan()).filter(
      (item) => !before.some((b) => b.PK === item.PK && b.SK === item.SK),
    );
    expect(writes).toEqual([]);
  });

  it('a form shown again with its errors keeps the time it was first shown: fixing a typo within a second is accepted', async () => {
    // Arrange: a typo sent after 8 s.
    const email = uniqueEmail('typo');
    const first = await signUp(h, { email: email.replace('@', '') });
    expect(first.status).toBe(400);
    // Act: fixed and sent again half a second later.
    h.clock.advance(500);
    const again = await h.client.post(h.path, {
      origin: 'pages',
      rawBody: new URLSearchParams({
        form_token: inputValue(first.body, 'form_token'),
        website: '',
        email,
      }).toString(),
      contentType: 'application/x-www-form-urlencoded',
      sourceIp: '198.51.100.20',
    });
    // Assert: it keeps where the visitor came from, too.
    expect(again.status).toBe(200);
    const contact = await contactOf(h, email);
    expect(contact?.status).toBe('pending');
    expect(contact?.consents[0].referrer).toBe(
      'https://blog.example.test/post',
    );
  });

  it('a form open for more than a day is shown again (400, "please send it again", nothing written); sent again, it signs up', async () => {
    // Arrange
    const email = uniqueEmail('stale');
    const before = await h.client.scan();
    // Act: sent a day and a second after it was shown.
    const stale = await signUp(h, { email }, { seconds: 24 * 3600 + 1 });
    const afterStale = await h.client.scan();
    const mailAfterStale = await mailTo(email);
    h.clock.advance(8000);
    const again = await h.client.post(h.path, {
      origin: 'pages',
      rawBody: new URLSearchParams({
        form_token: inputValue(stale.body, 'form_token'),
        website: '',
        email,
      }).toString(),
      contentType: 'application/x-www-form-urlencoded',
      sourceIp: '198.51.100.20',
    });
    // Assert
    expect(stale.status).toBe(400);
    expect(stale.body).toContain(
      'This form was open for more than a day: please send it again.',
    );
    expect(stale.body).toContain(`value="${email}"`);
    expect(afterStale).toEqual(before);
    expect(mailAfterStale).toEqual([]);
    expect(again.status).toBe(200);
    expect((await contactOf(h, email)).status).toBe('pending');
    expect(await mailTo(email)).toHaveLength(1);
  });

  it('a confirmation that could not go out (the organization cannot send) does not hold the next one back for a day', async () => {
    // Arrange: the organization taken off the sending allowlist.
    const email = uniqueEmail('blocked');
    await h.client.admin('org', 'disallow', '--org', h.org.orgId);
    try {
      // Act: a sign-up while it cannot send, then one after it can again.
      await signUp(h, { email });
      const whileBlocked = await mailTo(email);
      await h.client.admin('org', 'allow', '--org', h.org.orgId);
      await signUp(h, { email });
      // Assert
      expect(whileBlocked).toEqual([]);
      expect(await mailTo(email)).toHaveLength(1);
      expect((await contactOf(h, email)).status).toBe('pending');
    } finally {
      await h.client.admin('org', 'allow', '--org', h.org.orgId);
    }
  });

  it('bots are told the same as people and change nothing: a filled honeypot, a form sent too fast, a missing or forged token', async () => {
    // Arrange
    const emails = [
      uniqueEmail('pot'),
      uniqueEmail('fast'),
      uniqueEmail('none'),
      uniqueEmail('forged'),
    ];
    const reference = stable(
      (await signUp(h, { email: uniqueEmail('ref') })).body,
    );
    const before = await h.client.scan();
    // Act
    const answers = [
      await signUp(h, {
        email: emails[0] as string,
        website: 'http://spam.example',
      }),
      await signUp(h, { email: emails[1] as string }, { seconds: 1 }),
      await signUp(h, { email: emails[2] as string }, { token: '' }),
      await signUp(
        h,
        { email: emails[3] as string },
        { token: 'eyJhbGciOiJIUzI1NiJ9.e30.forged' },
      ),
    ];
    // Assert
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(stable(answer.body)).toBe(reference);
    }
    const added = (await h.client.scan()).filter(
      (item) => !before.some((b) => b.PK === item.PK && b.SK === item.SK),
    );
    expect(added).toEqual([]);
    for (const email of emails) expect(await mailTo(email)).toEqual([]);
  });

  it('at most one confirmation email per address per page in 24 hours; the next day a new one, and only the newest link confirms', async () => {
    // Arrange
    const email = uniqueEmail('repeat');
    // Act
    await signUp(h, { email });
    await signUp(h, { email });
    await signUp(h, { email });
    const sameDay = await mailTo(email);
    h.clock.advance(24 * 3600 * 1000);
    await signUp(h, { email });
    const [first, second] = await mailTo(email);
    const old = await h.client.get('/public/confirm', {
      query: { token: tokenOf(confirmationLinkOf(first)) },
    });
    const fresh = await h.client.get('/public/confirm', {
      query: { token: tokenOf(confirmationLinkOf(second)) },
    });
    // Assert
    expect(sameDay).toHaveLength(1);
    expect(old.body).toContain('A newer link was sent');
    expect(fresh.body).toContain('Subscription confirmed');
    expect((await contactOf(h, email)).consents).toHaveLength(2);
  });
});

describe('a stranger’s text never becomes the organization’s mail (issue 29, defect 1)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await harness();
    // Opt-in content that asks for every name there is.
    const set = await h.client.patch('/settings/optin', {
      key: h.org.ownerKey,
      body: {
        subject: 'Confirm, {{firstName}} {{lastName}}',
        content:
          '<p>Dear [{{firstName}}] [{{lastName}}]</p><a href="{{confirmationUrl}}">Confirm</a>',
      },
    });
    expect(set.status, set.body).toBe(200);
  });

  it.each([
    ['a web address', 'WIN $500 now: https://evil.example/claim'],
    ['a bare domain with a path', 'claim at evil.com/win'],
    ['www.', 'see www.prizes'],
    ['an @', 'write to win@evil'],
    ['a phone-like run', 'Call +1 (555) 123-4567'],
  ])(
    'a name carrying %s is refused beside its field (400, the form again), and nothing is written or sent',
    async (_, name) => {
      // Arrange
      const email = uniqueEmail('relay');
      const before = await h.client.scan();
      // Act
      const answer = await signUp(h, {
        email,
        firstName: 'Ada',
        lastName: name,
      });
      // Assert
      expect(answer.status).toBe(400);
      expect(answer.body).toContain(
        'Enter a name only: no web or email address, no phone number.',
      );
      expect(answer.body).toMatch(
        /name="lastName"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*name="lastName"/,
      );
      expect(await h.client.scan()).toEqual(before);
      expect(await mailTo(email)).toEqual([]);
    },
  );

  it('an email whose subaddress carries a web address, or two names that make a number together, are refused beside their field', async () => {
    const before = await h.client.scan();
    const tagged = await signUp(h, {
      email: `victim+visit-www.evil.com-${Date.now()}@example.test`,
    });
    const split = await signUp(h, {
      email: uniqueEmail('split'),
      firstName: 'Call 800 55',
      lastName: '5 0100',
    });
    expect(tagged.status).toBe(400);
    expect(tagged.body).toContain(
      'Enter your email address without a web address after the +.',
    );
    expect(split.status).toBe(400);
    expect(split.body).toContain(
      'Enter a name only: no web or email address, no phone number.',
    );
    expect(await h.client.scan()).toEqual(before);
  });

  it('names typed on the form are kept but never merged into a confirmation, even by custom content; names the organization gives are', async () => {
    // Arrange: a sign-up with names; a pending contact the API adds.
    const stranger = uniqueEmail('stranger');
    const added = uniqueEmail('added');
    // Act
    await signUp(h, { email: stranger, firstName: 'Eve', lastName: 'Mallory' });
    await h.client.post(`/lists/${h.listId}/contacts`, {
      key: h.org.ownerKey,
      body: {
        email: added,
        firstName: 'Ada',
        lastName: 'Lovelace',
        doubleOptIn: true,
      },
    });
    // The organization names the stranger's contact (a re-add with names
    // sends a fresh link): the first name is now its own, the last is not.
    h.clock.advance(1000);
    await h.client.post(`/lists/${h.listId}/contacts`, {
      key: h.org.ownerKey,
      body: { email: stranger, firstName: 'Evelyn', doubleOptIn: true },
    });
    const [fromForm, named] = await mailTo(stranger);
    const [fromApi] = await mailTo(added);
    const stored = await contactOf(h, stranger);
    // Assert
    expect(stored).toMatchObject({ firstName: 'Evelyn', lastName: 'Mallory' });
    expect(fromForm?.subject.trim()).toBe('Confirm,');
    expect(fromForm?.body.html).toContain('Dear [] []');
    expect(`${fromForm?.body.html}${fromForm?.body.text}`).not.toMatch(
      /Eve|Mallory/,
    );
    expect(named?.body.html).toContain('Dear [Evelyn] []');
    expect(fromApi?.subject).toBe('Confirm, Ada Lovelace');
    expect(fromApi?.body.html).toContain('Dear [Ada] [Lovelace]');
  });
});

describe('the hosted sign-up form: limits and CAPTCHA', () => {
  it('limits sign-ups per source address per hour, across addresses, answering the refused one as any other, then admits again the next hour', async () => {
    // Arrange
    const h = await harness({ maxPerIpPerHour: 2 });
    const emails = [uniqueEmail('ip1'), uniqueEmail('ip2'), uniqueEmail('ip3')];
    // Act
    const answers = [];
    for (const email of emails) {
      answers.push(await signUp(h, { email }, { ip: '192.0.2.9' }));
    }
    const otherSource = uniqueEmail('ip-other');
    await signUp(h, { email: otherSource }, { ip: '192.0.2.10' });
    h.clock.advance(3600 * 1000);
    const nextHour = uniqueEmail('ip-later');
    await signUp(h, { email: nextHour }, { ip: '192.0.2.9' });
    // Assert
    expect((await contactOf(h, emails[0] as string)).status).toBe('pending');
    expect((await contactOf(h, emails[1] as string)).status).toBe('pending');
    expect(await contactOf(h, emails[2] as string)).toBeUndefined();
    expect(await contactOf(h, otherSource)).toBeDefined();
    expect(await contactOf(h, nextHour)).toBeDefined();
    expectNeutral(answers.slice(2), answers[0]);
  });

  it('counts an IPv6 source by its /64 (issue 29, defect 5): two addresses of one /64 share the limit; another /64 and IPv4-mapped addresses count apart', async () => {
    // Arrange
    const h = await harness({ maxPerIpPerHour: 2 });
    const emails = [uniqueEmail('v6a'), uniqueEmail('v6b'), uniqueEmail('v6c')];
    const sameLine = [
      '2001:db8:5:6::1',
      '2001:db8:5:6:ffff:1:2:3',
      '2001:db8:5:6::abcd',
    ];
    // Act
    for (const [i, email] of emails.entries()) {
      await signUp(h, { email }, { ip: sameLine[i] as string });
    }
    const otherLine = uniqueEmail('v6-other');
    await signUp(h, { email: otherLine }, { ip: '2001:db8:5:7::1' });
    // Assert
    expect((await contactOf(h, emails[0] as string)).status).toBe('pending');
    expect((await contactOf(h, emails[1] as string)).status).toBe('pending');
    expect(await contactOf(h, emails[2] as string)).toBeUndefined();
    expect(await contactOf(h, otherLine)).toBeDefined();
  });

  it('a form token signs up once (issue 29, defect 5): replayed with another address it is answered as any other and changes nothing', async () => {
    // Arrange: a page view, its token used once.
    const h = await harness();
    const shown = await h.client.get(h.path, { origin: 'pages' });
    const token = inputValue(shown.body, 'form_token');
    const first = uniqueEmail('once');
    const replayed = uniqueEmail('replayed');
    // Act
    const answers = [
      await signUp(h, { email: first }, { token }),
      await signUp(h, { email: replayed }, { token }),
    ];
    // Assert
    expect((await contactOf(h, first)).status).toBe('pending');
    expect(await contactOf(h, replayed)).toBeUndefined();
    expect(await mailTo(replayed)).toEqual([]);
    expectNeutral(answers.slice(1), answers[0]);
  });

  it('limits sign-ups per email address per hour in the organization, across its pages, answering the refused one as any other, then admits again the next hour', async () => {
    // Arrange: three pages, so the one-confirmation-per-page-a-day rule
    // holds nothing back: only the per-email limit (2) can.
    const h = await harness({ maxPerEmailPerHour: 2 });
    const pages = [
      h.path,
      await anotherPage(h, 'Second'),
      await anotherPage(h, 'Third'),
    ];
    const email = uniqueEmail('bombed');
    // Act: each from its own address, so no per-address limit applies.
    const answers = [];
    for (const [i, path] of pages.entries()) {
      answers.push(
        await signUp(h, { email }, { path, ip: `192.0.2.${i + 1}` }),
      );
    }
    const sameHour = await mailTo(email);
    const normal = await signUp(
      h,
      { email: uniqueEmail('third-page') },
      { path: pages[2], ip: '192.0.2.5' },
    );
    h.clock.advance(3600 * 1000);
    await signUp(h, { email }, { path: pages[2], ip: '192.0.2.4' });
    // Assert: two emails, the third page's sign-up dropped, sent next hour.
    expect(sameHour).toHaveLength(2);
    expect(await mailTo(email)).toHaveLength(3);
    expectNeutral(answers.slice(2), normal);
  });

  it('asks the configured CAPTCHA: the widget and its sources are on the page, and a refused or missing answer changes nothing', async () => {
    // Arrange
    const checked: string[] = [];
    const captcha: CaptchaVerifier = {
      provider: 'turnstile',
      siteKey: 'site-key-123',
      verify: async (response, ip) => {
        checked.push(`${response}@${ip}`);
        return response === 'human';
      },
    };
    const h = await harness({ captcha });
    const [robot, nobody, human] = [
      uniqueEmail('robot'),
      uniqueEmail('nobody'),
      uniqueEmail('human'),
    ];
    // Act
    const page = await h.client.get(h.path, { origin: 'pages' });
    const refused = [
      await signUp(h, { email: robot, 'cf-turnstile-response': 'bot' }),
      await signUp(h, { email: nobody }),
    ];
    const accepted = await signUp(h, {
      email: human,
      'cf-turnstile-response': 'human',
    });
    // Assert
    expect(page.body).toContain('site-key-123');
    expect(page.headers['content-security-policy']).toContain(
      'challenges.cloudflare.com',
    );
    expect(checked).toEqual(['bot@198.51.100.20', 'human@198.51.100.20']);
    expect(await contactOf(h, robot)).toBeUndefined();
    expect(await contactOf(h, nobody)).toBeUndefined();
    expect((await contactOf(h, human)).status).toBe('pending');
    expectNeutral(refused, accepted);
  });
});
