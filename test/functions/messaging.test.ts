import { beforeAll, describe, expect, it } from 'vitest';
import { JoseLinkSigner } from '../../shared/adapters/jose-link-signer.ts';
import { systemClock } from '../../shared/adapters/system.ts';
import {
  LINK_PURPOSES,
  MESSAGE_LINK_TTL_SECONDS,
  publicLinkUrl,
} from '../../shared/links/public-links.ts';
import {
  createInProcessStack,
  type InProcessStack,
} from '../support/api-client.ts';
import { TEST_LINK_SECRET } from '../support/dynamo.ts';
import { mailTo } from '../support/mailbox.ts';

// The mailbox is shared by the run: an address of this run only.
const qa = `qa-${Date.now()}@demo.test`;

const CONTENT =
  '<p>Hi {{firstName}} *|FNAME|*</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

describe('templates, rendering, unsubscribe and topics through the pipeline (in process)', () => {
  let stack: InProcessStack;
  let key: string;
  let orgId: string;
  let memberKey: string;
  let links: JoseLinkSigner;
  let listId: string;

  beforeAll(async () => {
    stack = await createInProcessStack('Messaging');
    key = stack.demoKey;
    orgId = stack.orgId;
    await stack.admin(
      'member',
      'add',
      '--org',
      orgId,
      '--email',
      'reader@demo.test',
      '--role',
      'member',
    );
    memberKey =
      (
        await stack.admin(
          'key',
          'create',
          '--org',
          orgId,
          '--email',
          'reader@demo.test',
        )
      ).apiKey ?? '';
    links = new JoseLinkSigner(async () => TEST_LINK_SECRET, systemClock);
    listId = (
      await stack.call('/lists', {
        key,
        method: 'POST',
        body: { name: 'Messaging e2e' },
      })
    ).json.data.id;
  });

  /** A link of a real message for a contact, signed as the composer signs. */
  const linkFor = async (
    kind: 'unsubscribe' | 'topicOptOut',
    contactId: string,
    extra: Record<string, string> = {},
  ) =>
    publicLinkUrl(
      stack.info.api,
      kind,
      await links.sign(
        LINK_PURPOSES[kind],
        { o: orgId, c: contactId, ...extra },
        MESSAGE_LINK_TTL_SECONDS,
      ),
    );

  const oneClick = (url: string) =>
    stack.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });

  describe('templates', () => {
    it('creates (201, unsupportedTags), lists without HTML, reads, updates and deletes', async () => {
      const created = await stack.call('/templates', {
        key,
        method: 'POST',
        body: {
          name: 'Welcome',
          defaultSubject: 'Hi {{firstName}}',
          content: CONTENT,
        },
      });
      const id = created.json.data.id;
      const list = await stack.call('/templates', { key });
      const one = await stack.call(`/templates/${id}`, { key: memberKey });
      const patched = await stack.call(`/templates/${id}`, {
        key,
        method: 'PATCH',
        body: { name: 'Welcome 2' },
      });
      const deleted = await stack.call(`/templates/${id}`, {
        key,
        method: 'DELETE',
      });
      const gone = await stack.call(`/templates/${id}`, { key });
      expect(created.status).toBe(201);
      expect(created.json.data).toMatchObject({
        id: expect.any(String),
        unsupportedTags: ['*|FNAME|*'],
      });
      expect(list.json.data[0]).not.toHaveProperty('content');
      expect(list.json.pagination.total).toBeGreaterThanOrEqual(1);
      expect(one.json.data.content).toBe(CONTENT);
      expect(patched.json.data.name).toBe('Welcome 2');
      expect(deleted.json.data).toEqual({ id });
      expect(gone.status).toBe(404);
    });

    it('answers 400 naming the field for a syntax error, 403 to a member writing', async () => {
      const broken = await stack.call('/templates', {
        key,
        method: 'POST',
        body: { name: 'B', defaultSubject: 's', content: '{% if %}' },
      });
      const member = await stack.call('/templates', {
        key: memberKey,
        method: 'POST',
        body: { name: 'M', defaultSubject: 's', content: CONTENT },
      });
      expect(broken.status).toBe(400);
      expect(broken.json.details[0].field).toBe('content');
      expect(member.status).toBe(403);
    });

    it('renders for a member (POST /render), and answers 400 without {{unsubscribeUrl}}', async () => {
      const good = await stack.call('/templates', {
        key,
        method: 'POST',
        body: {
          name: 'R',
          defaultSubject: 'For {{firstName}}',
          content: `${CONTENT}{{ promo }}`,
        },
      });
      const bad = await stack.call('/templates', {
        key,
        method: 'POST',
        body: { name: 'R2', defaultSubject: 's', content: '<p>no way out</p>' },
      });
      const rendered = await stack.call('/render', {
        key: memberKey,
        method: 'POST',
        body: {
          templateId: good.json.data.id,
          variables: { firstName: 'Mo', promo: 'X1' },
        },
      });
      const refused = await stack.call('/render', {
        key: memberKey,
        method: 'POST',
        body: { templateId: bad.json.data.id },
      });
      expect(rendered.status).toBe(200);
      expect(rendered.json.data).toMatchObject({
        subject: 'For Mo',
        unknownVariables: ['promo'],
        unsupportedTags: ['*|FNAME|*'],
      });
      expect(rendered.json.data.html).toContain('X1');
      expect(rendered.json.data.text).toContain('Hi Mo');
      expect(refused.status).toBe(400);
      expect(refused.json.code).toBe('template.unsubscribeMissing');
    });

    it('test-sends one real email to the local mailbox, whose links change nothing', async () => {
      const template = await stack.call('/templates', {
        key,
        method: 'POST',
        body: {
          name: 'TS',
          defaultSubject: 'Issue {{firstName}}',
          content: CONTENT,
        },
      });
      const sent = await stack.call(
        `/templates/${template.json.data.id}/test-send`,
        {
          key,
          method: 'POST',
          body: { email: qa, variables: { firstName: 'Q' } },
        },
      );
      const [mail] = await mailTo(qa, stack.info.mailbox);
      const header =
        mail?.headers?.find((h) => h.name === 'List-Unsubscribe')?.value ?? '';
      const url = /^<(.+)>$/.exec(header)?.[1] ?? '';
      const page = await oneClick(url);
      expect(sent.json.data).toEqual({ status: 'sent', to: qa });
      expect(mail?.subject).toBe('[Test] Issue Q');
      expect(
        url.startsWith(`${stack.info.api}/public/unsubscribe?token=`),
      ).toBe(true);
      expect(await page.text()).toContain('This is a test email');
    });

    it('a test send and a preview carry the postal address, its lines kept in HTML and text (issue 29, defect 7)', async () => {
      // Arrange
      const to = `qa-postal-${Date.now()}@demo.test`;
      const set = await stack.call('/settings/sending', {
        key,
        method: 'PATCH',
        body: { postalAddress: 'Acme Ltd\n1 Main Street\nSpringfield' },
      });
      expect(set.status).toBe(200);
      const template = await stack.call('/templates', {
        key,
        method: 'POST',
        body: {
          name: 'Postal',
          defaultSubject: 'Postal',
          content:
            '<p>News</p><p>{{postalAddress}}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
        },
      });
      // Act
      await stack.call(`/templates/${template.json.data.id}/test-send`, {
        key,
        method: 'POST',
        body: { email: to },
      });
      const preview = await stack.call('/render', {
        key,
        method: 'POST',
        body: { templateId: template.json.data.id },
      });
      const [mail] = await mailTo(to, stack.info.mailbox);
      // Assert
      const lines = 'Acme Ltd<br>\n1 Main Street<br>\nSpringfield';
      expect(mail?.body.html).toContain(lines);
      expect(mail?.body.text).toContain('Acme Ltd\n1 Main Street\nSpringfield');
      expect(preview.json.data.html).toContain(lines);
    });

    it('answers 400 template.invalid when a merge value makes the content fail to render (preview and test send)', async () => {
      // Arrange: renders with sample values, not with a huge loop bound.
      const template = await stack.call('/templates', {
        key,
        method: 'POST',
        body: {
          name: 'Loop',
          defaultSubject: 's',
          content: `${CONTENT}{% for i in (1..n) %}x{% endfor %}`,
        },
      });
      const templateId = template.json.data.id;
      const variables = { n: 1_000_000_000 };
      // Act
      const preview = await stack.call('/render', {
        key,
        method: 'POST',
        body: { templateId, variables },
      });
      const test = await stack.call(`/templates/${templateId}/test-send`, {
        key,
        method: 'POST',
        body: { email: qa, variables },
      });
      // Assert
      expect(template.status).toBe(201);
      expect([preview.status, preview.json.code]).toEqual([
        400,
        'template.invalid',
      ]);
      expect([test.status, test.json.code]).toEqual([400, 'template.invalid']);
    });
  });

  describe('unsubscribe links (RFC 8058)', () => {
    it('shows a confirm page on GET and unsubscribes nobody; one-click POST unsubscribes; replays are harmless', async () => {
      // Arrange
      const added = await stack.call(`/lists/${listId}/contacts`, {
        key,
        method: 'POST',
        body: { email: 'leaver@demo.test' },
      });
      const id = added.json.data.id;
      const url = await linkFor('unsubscribe', id);
      // Act
      const get = await stack.fetch(url);
      const getHtml = await get.text();
      const afterGet = await stack.call(`/contacts/${id}`, { key });
      const post = await oneClick(url);
      const replay = await oneClick(url);
      const afterPost = await stack.call(`/contacts/${id}`, { key });
      // Assert
      expect(get.status).toBe(200);
      // Back to the same link, marked as the page's button (`from=page`).
      expect(getHtml).toMatch(
        /<form method="post" action="\?token=[\w.-]+&amp;from=page">/,
      );
      expect(getHtml).toContain('name="List-Unsubscribe" value="One-Click"');
      expect(afterGet.json.data.status).toBe('subscribed');
      expect(post.status).toBe(200);
      expect(await post.text()).toContain('You are unsubscribed');
      expect(replay.status).toBe(200);
      expect(afterPost.json.data.status).toBe('unsubscribed');
    });

    it('shows a clear page for a tampered, foreign-purpose or missing token', async () => {
      const added = await stack.call(`/lists/${listId}/contacts`, {
        key,
        method: 'POST',
        body: { email: 'tamper@demo.test' },
      });
      const url = new URL(await linkFor('unsubscribe', added.json.data.id));
      const token = url.searchParams.get('token') ?? '';
      url.searchParams.set('token', `${token.slice(0, -6)}AAAAAA`);
      const tampered = await oneClick(url.toString());
      const wrongPurpose = await oneClick(
        (await linkFor('topicOptOut', added.json.data.id, { t: 'x' })).replace(
          'topic-opt-out',
          'unsubscribe',
        ),
      );
      const missing = await stack.fetch(`${stack.info.api}/public/unsubscribe`);
      expect(tampered.status).toBe(400);
      expect(await tampered.text()).toContain('This link is not valid');
      expect(wrongPurpose.status).toBe(400);
      expect(missing.status).toBe(400);
      expect(
        (await stack.call(`/contacts/${added.json.data.id}`, { key })).json.data
          .status,
      ).toBe('subscribed');
    });
  });

  describe('topics and opt-outs', () => {
    it('creates, lists, renames and deletes topics; 409 on a taken name', async () => {
      const created = await stack.call('/topics', {
        key,
        method: 'POST',
        body: { name: 'Events', description: 'Meetups' },
      });
      const taken = await stack.call('/topics', {
        key,
        method: 'POST',
        body: { name: 'events' },
      });
      const listed = await stack.call('/topics', { key: memberKey });
      const renamed = await stack.call(`/topics/${created.json.data.id}`, {
        key,
        method: 'PATCH',
        body: { name: 'Meetups' },
      });
      const deleted = await stack.call(`/topics/${created.json.data.id}`, {
        key,
        method: 'DELETE',
      });
      const gone = await stack.call(`/topics/${created.json.data.id}`, { key });
      expect(created.status).toBe(201);
      expect(created.json.data).toMatchObject({
        name: 'Events',
        description: 'Meetups',
        optOutCount: 0,
      });
      expect(taken.status).toBe(409);
      expect(listed.json.data.map((t: { name: string }) => t.name)).toContain(
        'Events',
      );
      expect(renamed.json.data.name).toBe('Meetups');
      expect(deleted.status).toBe(200);
      expect(gone.status).toBe(404);
    });

    it('records and undoes opt-outs by API, and by the link of an email (GET page, POST acts)', async () => {
      // Arrange
      const topic = (
        await stack.call('/topics', {
          key,
          method: 'POST',
          body: { name: 'Offers' },
        })
      ).json.data;
      const a = (
        await stack.call(`/lists/${listId}/contacts`, {
          key,
          method: 'POST',
          body: { email: 'a@topics.test' },
        })
      ).json.data;
      const b = (
        await stack.call(`/lists/${listId}/contacts`, {
          key,
          method: 'POST',
          body: { email: 'b@topics.test' },
        })
      ).json.data;
      // Act: a by API; b by its link.
      const byApi = await stack.call(`/topics/${topic.id}/opt-outs`, {
        key,
        method: 'POST',
        body: { contactId: a.id },
      });
      const byApiAgain = await stack.call(`/topics/${topic.id}/opt-outs`, {
        key,
        method: 'POST',
        body: { contactId: a.id },
      });
      const link = await linkFor('topicOptOut', b.id, { t: topic.id });
      const page = await (await stack.fetch(link)).text();
      const afterGet = await stack.call(`/topics/${topic.id}/opt-outs`, {
        key,
      });
      const post = await oneClick(link);
      const afterPost = await stack.call(`/topics/${topic.id}/opt-outs`, {
        key,
      });
      const undone = await stack.call(`/topics/${topic.id}/opt-outs/${a.id}`, {
        key,
        method: 'DELETE',
      });
      const final = await stack.call(`/topics/${topic.id}`, { key });
      // Assert
      expect([byApi.status, byApiAgain.status]).toEqual([201, 200]);
      expect(page).toContain('Stop emails about “Offers”?');
      expect(afterGet.json.data.map((o: { email: string }) => o.email)).toEqual(
        ['a@topics.test'],
      );
      expect(await post.text()).toContain('will no longer receive emails');
      expect(
        afterPost.json.data.map((o: { email: string }) => o.email),
      ).toEqual(['a@topics.test', 'b@topics.test']);
      expect(undone.json.data.removed).toBe(true);
      expect(final.json.data.optOutCount).toBe(1);
      expect(
        (await stack.call(`/contacts/${b.id}`, { key })).json.data.status,
      ).toBe('subscribed');
    });
  });
});
