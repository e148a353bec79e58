/**
 * Sign-up pages asking custom fields (issue 31), through the pipeline (in
 * process): a page names the organization's fields it asks (checked on
 * write), its hosted form draws an input per field, a submission checks
 * the values as people type them and keeps them on the new contact, and
 * the consent record keeps what was asked. A field deleted since is no
 * longer asked; a stranger's text never reaches the confirmation.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import { MAX_ASKED_FIELDS } from '../../shared/signup/signup.schema.ts';
import { elements, parse } from '../shared/signup/dom.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { uniqueEmail } from '../support/audience.ts';
import { fixedClock } from '../support/dynamo.ts';
import { mailTo } from '../support/mailbox.ts';

/** The value of a named input of a page. */
const inputValue = (html: string, name: string): string => {
  const input = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0];
  const value = input && /value="([^"]*)"/.exec(input)?.[1];
  if (value === undefined) throw new Error(`no input ${name} in the page`);
  return value.replaceAll('&amp;', '&');
};

/** The controls of a page's form that post a custom field, in order. */
const customControls = (html: string) =>
  elements(parse(html))
    .filter(
      (e) =>
        (e.name === 'input' || e.name === 'select') &&
        (e.attribs.name ?? '').startsWith('fields.'),
    )
    .map((e): Record<string, string> => ({ tag: e.name, ...e.attribs }));

const HOSTILE_LABEL = 'Plan <b>"&\'';
const HOSTILE_OPTION = 'Pro <script>alert(1)</script>';

describe('sign-up pages asking custom fields (issue 31)', () => {
  const clock = fixedClock('2036-11-23T10:00:00.000Z');
  let client: ApiClient;
  let org: TestOrganization;
  let other: TestOrganization;
  let listId: string;
  const fieldIds: Record<string, string> = {};

  const define = async (key: string, body: Record<string, unknown>) => {
    const answer = await client.post('/fields', {
      key: org.ownerKey,
      body: { key, label: key[0]?.toUpperCase() + key.slice(1), ...body },
    });
    expect(answer.status, answer.body).toBe(201);
    fieldIds[key] = answer.json.data.id;
  };

  /** A page made with `body` (a theme by default), published: its id and path. */
  const publishedPage = async (body: Record<string, unknown>) => {
    const made = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { name: 'With fields', listId, theme: 'classic', ...body },
    });
    expect(made.status, made.body).toBe(201);
    await client.post(`/signup-pages/${made.json.data.id}/publish`, {
      key: org.ownerKey,
    });
    return {
      id: made.json.data.id as string,
      path: new URL(made.json.data.publicUrl).pathname,
      view: made.json.data,
    };
  };

  /** Opens the form, waits like a person, sends it as a browser does. */
  const signUp = async (path: string, fields: Record<string, string>) => {
    const shown = await client.get(path, { origin: 'pages' });
    clock.advance(8000);
    return client.post(path, {
      origin: 'pages',
      rawBody: new URLSearchParams({
        form_token: inputValue(shown.body, 'form_token'),
        website: '',
        ...fields,
      }).toString(),
      contentType: 'application/x-www-form-urlencoded',
      sourceIp: '198.51.100.20',
      headers: { 'user-agent': 'Mozilla/5.0 (test)' },
    });
  };

  const contactOf = async (email: string) => {
    const found = await client.get('/contacts', {
      key: org.ownerKey,
      query: { listId, search: email },
    });
    return found.json.data[0];
  };

  beforeAll(async () => {
    client = await createApiClient({
      clock,
      groups: [...endpointGroups, ...pageGroups],
      signupForms: {
        minFillSeconds: 3,
        maxPerIpPerHour: 1000,
        maxPerEmailPerHour: 1000,
      },
    });
    org = await createOrganizationWithKeys(client, 'Asking');
    other = await createOrganizationWithKeys(client, 'Elsewhere');
    listId = (
      await client.post('/lists', { key: org.ownerKey, body: { name: 'News' } })
    ).json.data.id;
    await define('company', { type: 'text' });
    await define('seats', { type: 'number' });
    await define('birthday', { type: 'date' });
    await define('vip', { type: 'boolean', label: 'I am a VIP' });
    await define('plan', {
      type: 'option',
      label: HOSTILE_LABEL,
      options: ['Free', HOSTILE_OPTION],
    });
    const theirs = await client.post('/fields', {
      key: other.ownerKey,
      body: { key: 'secret', label: 'Secret', type: 'text' },
    });
    expect(theirs.status).toBe(201);
    // Opt-in content that would show a stranger's text if it merged any.
    const optin = await client.patch('/settings/optin', {
      key: org.ownerKey,
      body: {
        subject: 'Confirm {{ fields.company }}',
        content:
          '<p>[{{ fields.company }}] [{{ fields.plan }}]</p><a href="{{confirmationUrl}}">Confirm</a>',
      },
    });
    expect(optin.status, optin.body).toBe(200);
  });

  it('a page names the fields it asks: shown in order with its labels (null for the field’s own), required false by default', async () => {
    // Act
    const made = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: {
        name: 'Ask',
        listId,
        theme: 'bold',
        customFields: [
          { key: 'plan', required: true },
          { key: 'company', label: 'Your company' },
        ],
      },
    });
    const read = await client.get(`/signup-pages/${made.json.data.id}`, {
      key: org.memberKey,
    });
    const plain = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: { name: 'Plain', listId, theme: 'bold' },
    });
    // Assert
    expect(made.status, made.body).toBe(201);
    const asked = [
      { key: 'plan', label: null, required: true },
      { key: 'company', label: 'Your company', required: false },
    ];
    expect(made.json.data.content.customFields).toEqual(asked);
    expect(read.json.data.content.customFields).toEqual(asked);
    expect(plain.json.data.content.customFields).toEqual([]);
  });

  it('refuses an unknown key, another organization’s, a repeat, more than the maximum, a bad label or an unknown property — 400 naming it, nothing written', async () => {
    // Arrange
    const before = await client.scan();
    const create = (customFields: unknown) =>
      client.post('/signup-pages', {
        key: org.ownerKey,
        body: { name: 'Bad', listId, theme: 'classic', customFields },
      });
    // Act
    const answers = await Promise.all([
      create([{ key: 'company' }, { key: 'nickname' }]),
      create([{ key: 'secret' }]),
      create([{ key: 'company' }, { key: 'seats' }, { key: 'company' }]),
      create(
        Array.from({ length: MAX_ASKED_FIELDS + 1 }, () => ({
          key: 'company',
        })),
      ),
      create([{ key: 'company', label: '' }]),
      create([{ key: 'company', required: 'yes' }]),
      create([{ key: 'company', type: 'text' }]),
      create({ company: true }),
    ]);
    // Assert
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(400));
    expect(answers.map((a) => a.json.code).slice(0, 3)).toEqual(
      Array(3).fill('signupPage.fieldsInvalid'),
    );
    expect(
      answers.map((a) => a.json.details.map((d: { field: string }) => d.field)),
    ).toEqual([
      ['customFields.1.key'],
      ['customFields.0.key'],
      ['customFields.2.key'],
      ['customFields'],
      ['customFields.0.label'],
      ['customFields.0.required'],
      ['customFields.0.type'],
      ['customFields'],
    ]);
    expect(answers[1]?.json.details[0].message).toBe(
      'is not a field of the organization (see GET /fields)',
    );
    expect(answers[2]?.json.details[0].message).toBe('is asked twice');
    expect(await client.scan()).toEqual(before);
  });

  it('PATCH replaces the list (version bumped), [] asks none, a PATCH without it keeps it; a pasted page refuses it (400 naming customFields) and asks none', async () => {
    // Arrange
    const { id } = await publishedPage({
      name: 'Changing',
      customFields: [{ key: 'company' }],
    });
    const patch = (body: Record<string, unknown>) =>
      client.patch(`/signup-pages/${id}`, { key: org.ownerKey, body });
    // Act
    const replaced = await patch({
      customFields: [{ key: 'seats', required: true }, { key: 'vip' }],
    });
    const kept = await patch({ headline: 'New headline' });
    const same = await patch({
      customFields: [{ key: 'seats', required: true }, { key: 'vip' }],
    });
    const refused = await patch({ customFields: [{ key: 'nickname' }] });
    const emptied = await patch({ customFields: [] });
    const pastedWith = await client.post('/signup-pages', {
      key: org.ownerKey,
      body: {
        name: 'Pasted',
        listId,
        html: '<form><input name="email"><button>Go</button></form>',
        customFields: [{ key: 'company' }],
      },
    });
    const asking = await patch({ customFields: [{ key: 'company' }] });
    const toPasted = await patch({
      html: '<form><input name="email"><button>Go</button></form>',
    });
    const pastedAsked = await patch({ customFields: [{ key: 'company' }] });
    // Assert
    expect(replaced.json.data.content.customFields).toEqual([
      { key: 'seats', label: null, required: true },
      { key: 'vip', label: null, required: false },
    ]);
    expect(replaced.json.data.version).toBe(2);
    expect(kept.json.data.content.customFields).toEqual(
      replaced.json.data.content.customFields,
    );
    expect(same.json.data.version).toBe(kept.json.data.version);
    expect(refused.status).toBe(400);
    expect(refused.json.details[0].field).toBe('customFields.0.key');
    expect(emptied.json.data.content.customFields).toEqual([]);
    expect(emptied.json.data.version).toBe(kept.json.data.version + 1);
    expect(pastedWith.status).toBe(400);
    expect(
      pastedWith.json.details.map((d: { field: string }) => d.field),
    ).toEqual(['customFields']);
    expect(asking.json.data.content.customFields).toHaveLength(1);
    expect(toPasted.json.data.content.customFields).toEqual([]);
    expect(pastedAsked.status).toBe(400);
    expect(pastedAsked.json.details[0].field).toBe('customFields');
  });

  it('the hosted form draws a control per field, fitting its type, labelled, required as asked, the organization’s labels and options escaped', async () => {
    // Arrange
    const { path } = await publishedPage({
      name: 'Drawn',
      customFields: [
        { key: 'company', required: true },
        { key: 'seats' },
        { key: 'birthday' },
        { key: 'vip' },
        { key: 'plan' },
      ],
    });
    // Act
    const shown = await client.get(path, { origin: 'pages' });
    // Assert
    expect(shown.status).toBe(200);
    expect(
      customControls(shown.body).map((c) => [
        c.name,
        c.tag === 'select' ? 'select' : c.type,
        'required' in c,
      ]),
    ).toEqual([
      ['fields.company', 'text', true],
      ['fields.seats', 'number', false],
      ['fields.birthday', 'date', false],
      ['fields.vip', 'checkbox', false],
      ['fields.plan', 'select', false],
    ]);
    expect(shown.body).toContain(
      '<label for="signup-field-plan">Plan &lt;b&gt;&quot;&amp;&#39; <span class="optional">(optional)</span></label>',
    );
    expect(shown.body).toContain(
      '<option value="Pro &lt;script&gt;alert(1)&lt;/script&gt;">Pro &lt;script&gt;alert(1)&lt;/script&gt;</option>',
    );
    expect(shown.body).not.toContain('<script>');
  });

  it('a sign-up keeps the values on the new contact, and its consent record keeps what was asked (keys, labels shown, required)', async () => {
    // Arrange
    const { path, id } = await publishedPage({
      name: 'Kept',
      customFields: [
        { key: 'company', required: true, label: 'Employer' },
        { key: 'seats' },
        { key: 'birthday' },
        { key: 'vip' },
        { key: 'plan', required: true },
      ],
    });
    const email = uniqueEmail('asked');
    const bare = uniqueEmail('bare');
    // Act
    const answer = await signUp(path, {
      email,
      firstName: 'Ada',
      'fields.company': '  Analytical Engines ',
      'fields.seats': '12',
      'fields.birthday': '1815-12-10',
      'fields.vip': 'true',
      'fields.plan': HOSTILE_OPTION,
      'fields.secret': 'not asked',
    });
    const minimal = await signUp(path, {
      email: bare,
      'fields.company': 'Babbage & Co',
      'fields.plan': 'Free',
    });
    const contact = await contactOf(email);
    // Assert
    expect(answer.status, answer.body).toBe(200);
    expect(minimal.status, minimal.body).toBe(200);
    expect(contact.status).toBe('pending');
    expect(contact.fields).toEqual({
      company: 'Analytical Engines',
      seats: 12,
      birthday: '1815-12-10',
      vip: true,
      plan: HOSTILE_OPTION,
    });
    expect((await contactOf(bare)).fields).toEqual({
      company: 'Babbage & Co',
      vip: false,
      plan: 'Free',
    });
    expect(contact.consents).toHaveLength(1);
    expect(contact.consents[0]).toMatchObject({
      pageId: id,
      askedFields: [
        { key: 'company', label: 'Employer', required: true },
        { key: 'seats', label: 'Seats', required: false },
        { key: 'birthday', label: 'Birthday', required: false },
        { key: 'vip', label: 'I am a VIP', required: false },
        { key: 'plan', label: HOSTILE_LABEL, required: true },
      ],
    });
    // The confirmation renders none of it, whatever its content says.
    const [mail] = await mailTo(email);
    expect(mail?.subject.trim()).toBe('Confirm');
    expect(mail?.body.html).toContain('[] []');
    expect(`${mail?.subject}${mail?.body.html}${mail?.body.text}`).not.toMatch(
      /Analytical|alert/,
    );
  });

  it('a value that does not fit its field answers 400 with the form, the field named beside its input and in the summary, what was typed kept; nothing written or sent', async () => {
    // Arrange
    const { path } = await publishedPage({
      name: 'Checked',
      customFields: [
        { key: 'company' },
        { key: 'seats' },
        { key: 'birthday' },
        { key: 'vip', required: true },
        { key: 'plan', required: true },
      ],
    });
    const email = uniqueEmail('mistaken');
    const before = await client.scan();
    // Act
    const answer = await signUp(path, {
      email,
      'fields.company': 'Visit www.prizes.example now',
      'fields.seats': 'a dozen',
      'fields.birthday': '2026-02-30',
      'fields.plan': 'Enterprise',
    });
    // Assert
    expect(answer.status).toBe(400);
    const controls = Object.fromEntries(
      customControls(answer.body).map((c) => [c.name, c]),
    );
    for (const key of ['company', 'seats', 'birthday', 'vip', 'plan']) {
      expect(controls[`fields.${key}`]?.['aria-invalid'], key).toBe('true');
      expect(controls[`fields.${key}`]?.['aria-describedby']).toBe(
        `signup-field-${key}-error`,
      );
    }
    for (const message of [
      'Company: no web or email address, no phone number.',
      'Seats: enter a number, like 42 or 3.5.',
      'Birthday: enter a date that exists, like 2026-03-31.',
      'I am a VIP: tick this box to continue.',
      'Plan &lt;b&gt;&quot;&amp;&#39;: choose one of the options.',
    ]) {
      expect(answer.body).toContain(message);
    }
    expect(answer.body).toContain('href="#signup-field-company"');
    expect(controls['fields.company']?.value).toBe(
      'Visit www.prizes.example now',
    );
    expect(controls['fields.seats']?.value).toBe('a dozen');
    expect(controls['fields.company']).toHaveProperty('autofocus');
    expect(await client.scan()).toEqual(before);
    expect(await mailTo(email)).toEqual([]);
  });

  it('a repeat sign-up of a pending address records what was asked but never overwrites its values (an unconfirmed form)', async () => {
    // Arrange
    const { path } = await publishedPage({
      name: 'Again',
      customFields: [{ key: 'company' }],
    });
    const email = uniqueEmail('again');
    await signUp(path, { email, 'fields.company': 'First Ltd' });
    // Act: the next day (one confirmation per address per page a day).
    clock.advance(25 * 3600 * 1000);
    const again = await signUp(path, { email, 'fields.company': 'Second Ltd' });
    const contact = await contactOf(email);
    // Assert
    expect(again.status).toBe(200);
    expect(contact.fields).toEqual({ company: 'First Ltd' });
    expect(contact.consents).toHaveLength(2);
    expect(contact.consents[1].askedFields).toEqual([
      { key: 'company', label: 'Company', required: false },
    ]);
  });

  it('a field deleted after a page asks it: the form no longer draws it, a value posted for it is ignored, the record does not name it; the page still reads, changes and names it', async () => {
    // Arrange
    const gone = await client.post('/fields', {
      key: org.ownerKey,
      body: { key: 'nickname', label: 'Nickname', type: 'text' },
    });
    const { path, id } = await publishedPage({
      name: 'Outlived',
      customFields: [{ key: 'nickname', required: true }, { key: 'company' }],
    });
    const deleted = await client.delete(`/fields/${gone.json.data.id}`, {
      key: org.ownerKey,
    });
    const email = uniqueEmail('outlived');
    // Act
    const shown = await client.get(path, { origin: 'pages' });
    const answer = await signUp(path, {
      email,
      'fields.nickname': 'Nick',
      'fields.company': 'Kept Ltd',
    });
    const read = await client.get(`/signup-pages/${id}`, {
      key: org.ownerKey,
    });
    const changed = await client.patch(`/signup-pages/${id}`, {
      key: org.ownerKey,
      body: { headline: 'Still here' },
    });
    const renamed = await client.patch(`/signup-pages/${id}`, {
      key: org.ownerKey,
      body: { customFields: [{ key: 'nickname' }, { key: 'company' }] },
    });
    const contact = await contactOf(email);
    // Assert
    expect(deleted.status).toBe(200);
    expect(shown.status).toBe(200);
    expect(customControls(shown.body).map((c) => c.name)).toEqual([
      'fields.company',
    ]);
    expect(answer.status, answer.body).toBe(200);
    expect(contact.fields).toEqual({ company: 'Kept Ltd' });
    expect(contact.consents[0].askedFields).toEqual([
      { key: 'company', label: 'Company', required: false },
    ]);
    expect(
      read.json.data.content.customFields.map((f: { key: string }) => f.key),
    ).toEqual(['nickname', 'company']);
    expect(changed.status).toBe(200);
    expect(renamed.status).toBe(400);
    expect(renamed.json.details[0].field).toBe('customFields.0.key');
  });

  it('a page asking no field reads and answers as before: no control, no record of fields', async () => {
    // Arrange
    const { path } = await publishedPage({ name: 'Nothing asked' });
    const email = uniqueEmail('plain');
    // Act
    const shown = await client.get(path, { origin: 'pages' });
    const answer = await signUp(path, {
      email,
      'fields.company': 'Sneaky Ltd',
    });
    const contact = await contactOf(email);
    // Assert
    expect(customControls(shown.body)).toEqual([]);
    expect(shown.body).not.toMatch(/field-checkbox|<select/);
    expect(answer.status).toBe(200);
    expect(contact.fields).toEqual({});
    expect(contact.consents[0].askedFields).toEqual([]);
  });
});
