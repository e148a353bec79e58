/**
 * Routes of the `pages` group: the hosted sign-up pages, public and
 * keyless, served from their own origin (customer HTML never shares one
 * with the API). A published page is shown at `/p/{orgSlug}/{pageSlug}`
 * and its form posts back to the same address.
 */
import * as v from 'valibot';
import {
  addressKey,
  type DepsOf,
  endpoints,
  linkSecret,
  mail,
  sendingStatus,
  signupForms,
  table,
} from '../../shared/bindings.ts';
import {
  HtmlAnswerError,
  type HtmlResult,
  htmlPage,
} from '../../shared/http/responses.ts';
import { html, routeFor } from '../../shared/http/route.ts';
import type { SignupFormSettings } from '../../shared/signup/ports.ts';
import {
  type ShownPage,
  showSignupPage,
  submitSignup,
} from '../../shared/signup/submissions.ts';
import { captchaSources, renderThemePage } from '../../shared/signup/themes.ts';

/** What the `pages` group's function may use. */
export const pageBindings = [
  // No key: reads the page and the contact, writes the contact, its
  // counters and the abuse counters (transactions).
  table({
    stores: [
      'organizations',
      'appSettings',
      'signupPages',
      'identities',
      'domains',
      'lists',
      'contacts',
      'tags',
      'campaignReferences',
      'optinSettings',
      'topics',
      'delivery',
      'signupLimits',
      // The custom fields a page asks: drawn and checked on its form.
      'fields',
    ],
    actions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
  // The form's fill-time token and the confirmation link.
  linkSecret,
  endpoints,
  // The confirmation email, through the guards of every send to contacts.
  mail,
  sendingStatus,
  signupForms,
  // Suppressions are keyed by address key.
  addressKey,
] as const;

/** The deps of the `pages` group's function. */
export type PageDeps = DepsOf<typeof pageBindings>;

const route = routeFor<PageDeps>();

/** A slug of the address: what a slug can be, or nothing matches. */
const SlugParam = v.pipe(v.string(), v.maxLength(100));
const PageParams = v.object({ orgSlug: SlugParam, pageSlug: SlugParam });

/** A browser's form: any names, string values (hidden inputs included). */
const FormBody = v.record(v.string(), v.string());

/** The Content-Security-Policy of a hosted page. */
export const pagePolicy = (settings: SignupFormSettings): string => {
  const captcha = captchaSources(
    settings.captcha
      ? {
          provider: settings.captcha.provider,
          siteKey: settings.captcha.siteKey,
        }
      : undefined,
  );
  const list = (sources: string[]) => sources.join(' ');
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    'img-src https: data:',
    ...(captcha.script.length ? [`script-src ${list(captcha.script)}`] : []),
    ...(captcha.frame.length ? [`frame-src ${list(captcha.frame)}`] : []),
    ...(captcha.connect.length ? [`connect-src ${list(captcha.connect)}`] : []),
    "form-action 'self'",
    `frame-ancestors ${settings.frameAncestors}`,
    "base-uri 'none'",
  ].join('; ');
};

/** Draws a page as its theme or its pasted HTML says. */
const draw = async (
  deps: PageDeps,
  shown: ShownPage,
): Promise<HtmlResult<200 | 400>> => {
  const { page, html: pasted } = shown.published;
  const meta = {
    title: page.content.headline,
    organizationName: shown.organizationName,
  };
  // Pasted HTML's renderer (htmlparser2) loads only for a pasted page.
  const body =
    page.theme === null
      ? await (await import('../../shared/signup/pasted.ts')).renderPastedPage(
          pasted ?? '',
          page.content,
          shown.state,
          meta,
        )
      : await renderThemePage(page.theme, page.content, shown.state, meta);
  return htmlPage(shown.statusCode, body, {
    contentSecurityPolicy: pagePolicy(deps.signupForms),
    framable: deps.signupForms.frameAncestors !== "'none'",
  });
};

/** How the hosted pages answer (our decisions). */
const HOSTED =
  'Public, without a key, on the pages origin. Only a published page answers (a draft, an unpublished or a deleted page: 404 at once). Headers: a strict Content-Security-Policy (no script unless a CAPTCHA is configured, styles inline, images over https, the form posting only to this origin, `frame-ancestors` from `SIGNUP_FRAME_ANCESTORS`), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `Cache-Control: no-store`.';

/** Every route of the pages group. */
export const pageRoutes = [
  route({
    method: 'GET',
    path: '/p/{orgSlug}/{pageSlug}',
    origin: 'pages',
    role: 'public',
    summary: 'A published sign-up page',
    description: HOSTED,
    params: PageParams,
    responses: { 200: html('The page with its form') },
    errors: ['signupPage.notFound'],
    handle: async (deps, { params, visitor }) => {
      // The page that sent the visitor, kept in the form's token for the
      // consent record: the form's post carries no Referer of its own.
      const shown = await showSignupPage(
        deps,
        params.orgSlug,
        params.pageSlug,
        visitor?.referrer,
      );
      return (await draw(deps, shown)) as HtmlResult<200>;
    },
  }),
  route({
    method: 'POST',
    path: '/p/{orgSlug}/{pageSlug}',
    origin: 'pages',
    role: 'public',
    summary:
      "Takes the page's form: always double opt-in, always the same answer",
    description: [
      HOSTED,
      'The body is the form as a browser sends it (`application/x-www-form-urlencoded`): `email`, `firstName`/`lastName` when the page asks them, and `fields.<key>` for each custom field it asks (a checkbox sends its value when ticked); hidden inputs and custom fields it does not ask are sent back and ignored. A mistake a person can fix (a custom field: a value that does not fit its type, a required one left empty, a text carrying a web or email address or a phone number) answers 400 with the form, the error in text beside its field. Anything else answers 200 with the success message, whatever happened: a new address is pending and gets the confirmation email, an address already on the list is left as it is, a bot or a limit reached changes nothing.',
    ].join('\n\n'),
    params: PageParams,
    body: FormBody,
    responses: { 200: html('The success message') },
    errors: ['signupPage.notFound'],
    handle: async (deps, { params, body, sourceIp, visitor }) => {
      const shown = await submitSignup(
        deps,
        params.orgSlug,
        params.pageSlug,
        body,
        {
          ...(sourceIp ? { ip: sourceIp } : {}),
          ...(visitor?.userAgent ? { userAgent: visitor.userAgent } : {}),
        },
      );
      const result = await draw(deps, shown);
      if (result.statusCode === 400) {
        throw new HtmlAnswerError(result as HtmlResult<400>);
      }
      return result as HtmlResult<200>;
    },
  }),
];
