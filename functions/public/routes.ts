/**
 * Routes of the `public` group: pages reached from links in emails, without
 * an API key. The links are signed; nothing here trusts anything else.
 */
import * as v from 'valibot';
import {
  type ConfirmResult,
  confirmSubscription,
} from '../../shared/audience/confirmation.ts';
import { renderPage } from '../../shared/http/pages.ts';
import { htmlPage } from '../../shared/http/responses.ts';
import { route } from '../../shared/http/route.ts';

const PAGES: Record<ConfirmResult, { heading: string; paragraph: string }> = {
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

/** GET /public/confirm. */
export const publicRoutes = [
  route({
    method: 'GET',
    path: '/public/confirm',
    role: 'public',
    summary:
      'Confirms a double opt-in subscription from its signed, single-use link, and shows a page',
    query: v.object({
      token: v.pipe(
        v.string('is required'),
        v.minLength(1, 'is required'),
        v.maxLength(2048, 'is too long'),
      ),
    }),
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
];
