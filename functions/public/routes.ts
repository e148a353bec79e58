/**
 * Routes of the `public` group: pages reached from links in emails, without
 * an API key. The links are signed; nothing here trusts anything else.
 */

import * as v from 'valibot';
import {
  type ConfirmResult,
  confirmSubscription,
} from '../../shared/audience/confirmation.ts';
import {
  type LinkTarget,
  optOutByLink,
  readTopicOptOutLink,
  readUnsubscribeLink,
  unsubscribeByLink,
} from '../../shared/audience/link-actions.ts';
import {
  type DepsOf,
  endpoints,
  linkSecret,
  table,
} from '../../shared/bindings.ts';
import { type PageForm, renderPage } from '../../shared/http/pages.ts';
import { type HtmlResult, htmlPage } from '../../shared/http/responses.ts';
import { html, routeFor } from '../../shared/http/route.ts';

/** What the `public` group's function may use. */
export const publicBindings = [
  // No key, no rate counter: reads contacts and topics, confirms,
  // unsubscribes and records topic opt-outs.
  table({
    stores: ['organizations', 'contacts', 'topics', 'campaignStats'],
    actions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
  linkSecret,
  endpoints,
] as const;

/** The deps of the `public` group's function. */
export type PublicDeps = DepsOf<typeof publicBindings>;

const route = routeFor<PublicDeps>();

const TokenQuery = v.object({
  token: v.pipe(
    v.string('is required'),
    v.minLength(1, 'is required'),
    v.maxLength(2048, 'is too long'),
  ),
});

/** RFC 8058: the body mail clients post for a one-click unsubscribe. */
const ONE_CLICK: PageForm['fields'] = { 'List-Unsubscribe': 'One-Click' };

/**
 * The unsubscribe link's query: its token and, on the POST of the link's
 * own page (its button), `from=page`, so that the contact's activity tells
 * the page's button (`link`) from a mail client's one-click (`one_click`),
 * which posts to the link as the email's header gives it.
 */
const UnsubscribeQuery = v.object({
  ...TokenQuery.entries,
  from: v.optional(v.picklist(['page'], 'must be page when given')),
});

const page = async (
  heading: string,
  paragraph: string,
  form?: PageForm,
): Promise<HtmlResult<200>> =>
  htmlPage(
    200,
    await renderPage({
      title: heading,
      heading,
      paragraphs: [paragraph],
      ...(form ? { form } : {}),
    }),
  );

/** The page of a link that needs no action (test emails, gone contacts). */
const plainPage = (target: LinkTarget) =>
  target.kind === 'test'
    ? page('This is a test email', 'Links in test emails change nothing.')
    : page('Nothing to change', 'This address is no longer on the list.');

const PAGES: Record<ConfirmResult, { heading: string; paragraph: string }> = {
  test: {
    heading: 'This is a test email',
    paragraph: 'Links in test emails change nothing.',
  },
  confirmed: {
    heading: 'Subscription confirmed',
    paragraph: 'Thank you: {email} will receive our emails.',
  },
  already_confirmed: {
    heading: 'Already confirmed',
    paragraph:
      'This link was already used: {email} is subscribed. Nothing else to do.',
  },
  superseded: {
    heading: 'A newer link was sent',
    paragraph:
      'This confirmation link was replaced by a newer one. Please use the link in the latest email sent to {email}.',
  },
  not_pending: {
    heading: 'Nothing to confirm',
    paragraph: '{email} is not waiting for a confirmation.',
  },
};

const unsubscribed = (email: string, org: string) =>
  page(
    'You are unsubscribed',
    `${email} no longer receives emails from ${org} sent to this list.`,
  );

const declined = (email: string, org: string, topic: string) =>
  page(
    'Done',
    `${email} will no longer receive emails from ${org} about “${topic}”. Other emails keep coming.`,
  );

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** How every link page answers (our decisions). */
const LINK_PAGES =
  'Public, without a key: the link is signed and names its organization and contact; nothing else is trusted. Every answer is an HTML page (`Cache-Control: no-store`, `Referrer-Policy: no-referrer`, a strict Content-Security-Policy; never framed): 200 for every outcome it explains, 400 for a tampered link, a link of another kind or a missing token, 410 for an expired link.';

/** What reading a link never does. */
const GET_CHANGES_NOTHING =
  'Opening the link (GET) changes nothing, so mail scanners that follow links do no harm: the page names the address and the sender, with one button that POSTs back to the same address. Links of test emails and previews show "This is a test email"; a link whose contact no longer exists shows "Nothing to change".';

/** The public pages: confirmation, unsubscribe and topic opt-out links. */
export const publicRoutes = [
  route({
    method: 'GET',
    path: '/public/confirm',
    role: 'public',
    summary:
      'Confirms a double opt-in subscription from its signed, single-use link, and shows a page',
    description: md(
      'The `{{confirmationUrl}}` of the confirmation email. Opening it confirms (a GET, as the industry does; mail scanners that prefetch links can confirm): the contact becomes `subscribed`, with `confirmedAt` and `confirmedIp` (the address the gateway saw) recorded, and `joinedAt` on its first subscription.',
      'A link lasts 7 days and works once: opened again it shows "Already confirmed"; when a newer link was sent to the contact (it was added again), the older one shows "A newer link was sent"; a contact no longer pending shows "Nothing to confirm"; the fake link of an opt-in test send confirms nobody. A link whose subscription no longer exists answers 400 (`link.contactGone`).',
      LINK_PAGES,
      'The confirmation is one conditional write, retried on a race: 409 if it keeps losing.',
    ),
    query: TokenQuery,
    responses: { 200: html('A page saying what the link did') },
    errors: [
      'link.invalid',
      'link.expired',
      'link.contactGone',
      'contact.changed',
      'audience.targetGone',
    ],
    handle: async (deps, { query, sourceIp }) => {
      const { result, email } = await confirmSubscription(
        deps,
        query.token,
        sourceIp,
      );
      const page = PAGES[result];
      return htmlPage(
        200,
        await renderPage({
          title: page.heading,
          heading: page.heading,
          paragraphs: [page.paragraph.replace('{email}', email)],
        }),
      );
    },
  }),
  route({
    method: 'GET',
    path: '/public/unsubscribe',
    role: 'public',
    summary:
      'The unsubscribe link: a page with a confirm button (a GET never unsubscribes)',
    description: md(
      'The `{{unsubscribeUrl}}` of an email: a page asking to confirm, or saying the address is already unsubscribed.',
      GET_CHANGES_NOTHING,
      LINK_PAGES,
    ),
    query: TokenQuery,
    responses: { 200: html('The confirm page, or what the link leads to') },
    errors: ['link.invalid', 'link.expired'],
    handle: async (deps, { query }) => {
      const target = await readUnsubscribeLink(deps, query.token);
      if (target.kind !== 'contact') return plainPage(target);
      if (target.done) {
        return unsubscribed(target.email, target.organizationName);
      }
      return page(
        'Unsubscribe?',
        `${target.email} will stop receiving emails from ${target.organizationName} sent to this list.`,
        {
          button: 'Unsubscribe',
          fields: ONE_CLICK,
          query: { token: query.token, from: 'page' },
        },
      );
    },
  }),
  route({
    method: 'POST',
    path: '/public/unsubscribe',
    role: 'public',
    summary:
      'Unsubscribes at once: the confirm button, and RFC 8058 one-click (body List-Unsubscribe=One-Click)',
    description: md(
      'Unsubscribes the contact of the link from its list (status `unsubscribed`, `unsubscribedAt` set): the button of the GET page, and the one-click unsubscribe of mail clients (RFC 8058), which POST `List-Unsubscribe=One-Click`. Any POST to a valid link acts, whatever its body. Idempotent: a replay shows the same page.',
      "The page's button posts with `from=page` added to the link's query: the contact's activity says `link` for it and `one_click` for any other POST (a mail client's). Any other value of `from` answers 400.",
      'Links of test emails change nothing; a link whose contact no longer exists shows "Nothing to change".',
      LINK_PAGES,
      'The change is one conditional write, retried on a race: 409 if it keeps losing.',
    ),
    query: UnsubscribeQuery,
    responses: { 200: html('The page saying the address is unsubscribed') },
    errors: [
      'link.invalid',
      'link.expired',
      'contact.notFound',
      'contact.changed',
      'audience.targetGone',
    ],
    handle: async (deps, { query }) => {
      const target = await unsubscribeByLink(
        deps,
        query.token,
        query.from === 'page' ? 'link' : 'one_click',
      );
      if (target.kind !== 'contact') return plainPage(target);
      return unsubscribed(target.email, target.organizationName);
    },
  }),
  route({
    method: 'GET',
    path: '/public/topic-opt-out',
    role: 'public',
    summary:
      'The topic opt-out link: a page with a confirm button (a GET changes nothing)',
    description: md(
      'The `{{topicOptOutUrl}}` of an email sent with a topic: a page asking to confirm that the address stops receiving emails about that topic (and keeps the others), or saying it already did.',
      GET_CHANGES_NOTHING.replace(
        'whose contact no longer exists',
        'whose contact or topic no longer exists',
      ),
      LINK_PAGES,
    ),
    query: TokenQuery,
    responses: { 200: html('The confirm page, or what the link leads to') },
    errors: ['link.invalid', 'link.expired'],
    handle: async (deps, { query }) => {
      const target = await readTopicOptOutLink(deps, query.token);
      if (target.kind !== 'contact') return plainPage(target);
      const topic = target.topicName ?? '';
      if (target.done) {
        return declined(target.email, target.organizationName, topic);
      }
      return page(
        `Stop emails about “${topic}”?`,
        `${target.email} will stop receiving emails from ${target.organizationName} about “${topic}”, and keep receiving the others.`,
        { button: 'Stop these emails', fields: ONE_CLICK },
      );
    },
  }),
  route({
    method: 'POST',
    path: '/public/topic-opt-out',
    role: 'public',
    summary: 'Records the topic opt-out at once (idempotent)',
    description: md(
      'Records the opt-out of the link: the address stops receiving emails of the organization about the topic, from any list, and keeps receiving the others. The button of the GET page POSTs here; any POST to a valid link acts. Idempotent: a replay shows the same page.',
      'Links of test emails change nothing; a link whose contact or topic no longer exists shows "Nothing to change", and 404 when the topic is deleted while the opt-out is recorded.',
      LINK_PAGES,
    ),
    query: TokenQuery,
    responses: { 200: html('The page saying the opt-out is recorded') },
    errors: [
      'link.invalid',
      'link.expired',
      'topic.notFound',
      'write.contended',
    ],
    handle: async (deps, { query }) => {
      const target = await optOutByLink(deps, query.token);
      if (target.kind !== 'contact') return plainPage(target);
      return declined(
        target.email,
        target.organizationName,
        target.topicName ?? '',
      );
    },
  }),
];
