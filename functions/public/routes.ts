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
import { type PageForm, renderPage } from '../../shared/http/pages.ts';
import { type HttpResult, htmlPage } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';

const TokenQuery = v.object({
  token: v.pipe(
    v.string('is required'),
    v.minLength(1, 'is required'),
    v.maxLength(2048, 'is too long'),
  ),
});

/** RFC 8058: the body mail clients post for a one-click unsubscribe. */
const ONE_CLICK: PageForm['fields'] = { 'List-Unsubscribe': 'One-Click' };

const page = async (
  heading: string,
  paragraph: string,
  form?: PageForm,
): Promise<HttpResult> =>
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

/** The public pages: confirmation, unsubscribe and topic opt-out links. */
export const publicRoutes = [
  route({
    method: 'GET',
    path: '/public/confirm',
    role: 'public',
    summary:
      'Confirms a double opt-in subscription from its signed, single-use link, and shows a page',
    query: TokenQuery,
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
    query: TokenQuery,
    handle: async (deps, { query }) => {
      const target = await readUnsubscribeLink(deps, query.token);
      if (target.kind !== 'contact') return plainPage(target);
      if (target.done) {
        return unsubscribed(target.email, target.organizationName);
      }
      return page(
        'Unsubscribe?',
        `${target.email} will stop receiving emails from ${target.organizationName} sent to this list.`,
        { button: 'Unsubscribe', fields: ONE_CLICK },
      );
    },
  }),
  route({
    method: 'POST',
    path: '/public/unsubscribe',
    role: 'public',
    summary:
      'Unsubscribes at once: the confirm button, and RFC 8058 one-click (body List-Unsubscribe=One-Click)',
    query: TokenQuery,
    handle: async (deps, { query }) => {
      const target = await unsubscribeByLink(deps, query.token);
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
    query: TokenQuery,
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
    query: TokenQuery,
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
