/**
 * Routes of the `signupPages` group: hosted sign-up pages, made from a
 * theme or pasted HTML, each feeding one list through double opt-in. The
 * pages themselves are served by the `pages` group, on their own origin.
 */
import * as v from 'valibot';
import {
  type DepsOf,
  endpoints,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import {
  CreateSignupPageBody,
  MAX_ASKED_FIELDS,
  RESERVED_SLUGS,
  SignupPageQuery,
  UpdateSignupPageBody,
} from '../../shared/signup/signup.schema.ts';
import {
  createSignupPage,
  DeletedSignupPage,
  deleteSignupPage,
  getSignupPage,
  listSignupPages,
  listThemes,
  publishSignupPage,
  SignupPageRow,
  SignupPageView,
  ThemeView,
  unpublishSignupPage,
  updateSignupPage,
} from '../../shared/signup/signup-pages.ts';
import { idParams } from '../../shared/validation.ts';

/** What the `signupPages` group's function may use. */
export const signupPageBindings = [
  // The organization's fields: the custom fields a page asks are checked
  // against them (a Query, only when a write names some).
  table({
    stores: [...PIPELINE_STORES, 'lists', 'signupPages', 'fields'],
    actions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
  }),
  // The public address of each page.
  endpoints,
] as const;

/** The deps of the `signupPages` group's function. */
export type SignupPageDeps = DepsOf<typeof signupPageBindings>;

const route = routeFor<SignupPageDeps>({ scope: 'audience' });

const PageParams = idParams('pageId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

/** What a page is and how it is served (the spec leaves the rest to us). */
const PAGES =
  'A sign-up page is a hosted form feeding one list through double opt-in. It is drawn with one of our themes (`theme`, see `GET /signup-pages/themes`; `sourceTemplateName` names it) or from your own `html` (sanitized on write; `sourceTemplateName` null). Its public address, `publicUrl` (`{pages origin}/p/{organization slug}/{page slug}`), answers only while the page is published; a draft, an unpublished or a deleted page answers 404 at once.';

/** The fields of a page's content, shared by create and change. */
const CONTENT = [
  'What the page says and asks, all plain text (never HTML; a blank line in `intro` starts a paragraph):',
  [
    '- `headline` (1–200 characters; default "Subscribe to {organization name}"), `intro` (0–2,000; default none);',
    '- `fields`: `{firstName, lastName}`, the optional fields asked besides the email, which is always asked (default first name only);',
    `- \`customFields\`: the custom fields (see /fields) the form asks after the names, in order, at most ${MAX_ASKED_FIELDS}: each \`{key, required, label}\` (\`required\` false by default; \`label\` the page's own, the field's when omitted). Each key must be a field of the organization, asked once (400 \`signupPage.fieldsInvalid\` naming \`customFields.<i>.key\`). The form draws a control fitting each field's type (a one-line text of at most 255 characters, a number, a date, a checkbox, a select of the options), named \`fields.<key>\`; a field deleted later is no longer drawn. A themed page only: a pasted page refuses it (400 naming \`customFields\`);`,
    '- `consentText` (1–1,000): shown above the button and kept, as shown, in the consent record of each sign-up;',
    '- `submitLabel` (1–40; default "Subscribe"), `successMessage` (1–500): shown after every submission, whatever it did.',
  ].join('\n'),
].join('\n\n');

/** The rules of pasted HTML. */
const PASTED = `Pasted \`html\` (at most 100,000 bytes) must hold one \`<form>\` with an input named \`email\` (400 naming \`html\` otherwise). It is sanitized on write: scripts, event handlers, \`javascript:\` URLs, iframes, objects, external form targets and \`formaction\` go; the form's method and target are ours (it posts back to the page). Inputs named \`email\`, \`firstName\` and \`lastName\` are taken; hidden inputs it carries are sent back and ignored. Styles and https images stay.`;

/** Slug rules. */
const SLUGS = `\`slug\`: 1 to 64 lower-case letters, digits and single hyphens, unique in the organization (409 \`signupPage.slugTaken\`), not one of ${RESERVED_SLUGS.map((s) => `\`${s}\``).join(', ')}. Omitted, it is made from the name (\`-2\`, \`-3\`… when taken).`;

/** Every route of the signupPages group. */
export const signupPageRoutes = [
  route({
    method: 'GET',
    path: '/signup-pages',
    role: 'member',
    summary:
      'Sign-up pages of the organization, newest first (rows carry no HTML)',
    description: md(
      'Newest first, paginated (`page` from 1, `limit` 20 by default, at most 100). `search` matches the internal name and the slug (case-insensitive, anywhere in them); `status` is `draft` or `published` (any other value 400); `listId` keeps the pages feeding that list (an id of another organization matches nothing). Rows carry no HTML.',
      'Without a filter the total comes from a counter and only the page of rows is read; with one, every row of the organization is read (at most 500 pages: the cap per organization) and `total` counts the matches.',
    ),
    query: SignupPageQuery,
    responses: { 200: page(SignupPageRow, 'A page of sign-up page rows') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listSignupPages(deps, caller.orgId, query), query),
  }),
  route({
    method: 'GET',
    path: '/signup-pages/themes',
    role: 'member',
    summary: 'The themes a sign-up page can be drawn with',
    description:
      'Each theme by `name` (what `theme` takes, and what `sourceTemplateName` shows), with a label and a description. Every theme is responsive, accessible (WCAG 2.2 AA) and loads nothing from elsewhere.',
    responses: {
      200: json(v.array(ThemeView), 'The themes'),
    },
    errors: [],
    handle: async () => ok(listThemes()),
  }),
  route({
    method: 'POST',
    path: '/signup-pages',
    role: 'admin',
    summary: 'Create a sign-up page (draft) from a theme or pasted HTML',
    description: md(
      'Creates a draft page from `name` (internal, 1–100 characters), `listId` (a list of the organization; 404 `list.notFound` otherwise) and either `theme` or `html` (one of them, not both).',
      SLUGS,
      CONTENT,
      PASTED,
      PAGES,
    ),
    body: CreateSignupPageBody,
    responses: { 201: json(SignupPageView, 'The page, a draft') },
    errors: [
      'list.notFound',
      'signupPage.slugTaken',
      'signupPage.limitReached',
      'signupPage.fieldsInvalid',
    ],
    handle: async (deps, { caller, body }) =>
      created(await createSignupPage(deps, caller.orgId, body)),
  }),
  route({
    method: 'GET',
    path: '/signup-pages/{pageId}',
    role: 'member',
    summary: 'One sign-up page, with its content and public address',
    description: md(
      'The page with `publicUrl`, `version`, `publishedAt`, its `content`, and its sanitized `html` when pasted. A page of another organization answers 404, as one that does not exist.',
      PAGES,
    ),
    params: PageParams,
    responses: { 200: json(SignupPageView, 'The page') },
    errors: ['signupPage.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getSignupPage(deps, caller.orgId, params.pageId)),
  }),
  route({
    method: 'PATCH',
    path: '/signup-pages/{pageId}',
    role: 'admin',
    summary:
      'Change a sign-up page (a published page shows the change at once)',
    description: md(
      'Changes any of `name`, `slug`, `listId`, `theme`, `html` and the content fields; at least one, a field left out is unchanged. Giving `theme` to a pasted page drops its HTML; giving `html` to a themed page makes it pasted. A change of what visitors see bumps `version` (consent records name the version a visitor saw). A new slug frees the old address at once.',
      SLUGS,
      CONTENT,
      PASTED,
    ),
    params: PageParams,
    body: UpdateSignupPageBody,
    responses: { 200: json(SignupPageView, 'The page, after the change') },
    errors: [
      'signupPage.notFound',
      'list.notFound',
      'signupPage.slugTaken',
      'signupPage.fieldsInvalid',
      'write.contended',
    ],
    handle: async (deps, { caller, params, body }) =>
      ok(await updateSignupPage(deps, caller.orgId, params.pageId, body)),
  }),
  route({
    method: 'DELETE',
    path: '/signup-pages/{pageId}',
    role: 'admin',
    summary: 'Delete a sign-up page: its address answers 404 at once',
    description:
      'Deletes the page and its HTML, frees its slug and answers its `id`. Contacts it brought stay, with their consent records (naming the page id).',
    params: PageParams,
    responses: { 200: json(DeletedSignupPage, 'The id of the page deleted') },
    errors: ['signupPage.notFound', 'write.contended'],
    handle: async (deps, { caller, params }) =>
      ok(await deleteSignupPage(deps, caller.orgId, params.pageId)),
  }),
  route({
    method: 'POST',
    path: '/signup-pages/{pageId}/publish',
    role: 'admin',
    summary: 'Publish a sign-up page: its address answers at once',
    description:
      'Moves the page from `draft` to `published` (`publishedAt` set) and answers it. Publishing a published page changes nothing and answers it again.',
    params: PageParams,
    responses: { 200: json(SignupPageView, 'The page, published') },
    errors: ['signupPage.notFound', 'write.contended'],
    handle: async (deps, { caller, params }) =>
      ok(await publishSignupPage(deps, caller.orgId, params.pageId)),
  }),
  route({
    method: 'POST',
    path: '/signup-pages/{pageId}/unpublish',
    role: 'admin',
    summary:
      'Take a sign-up page back to draft: its address answers 404 at once',
    description:
      'Moves the page from `published` to `draft` and answers it. A draft stays a draft (nothing changes). Forms already open in browsers are refused from then on (404).',
    params: PageParams,
    responses: { 200: json(SignupPageView, 'The page, a draft') },
    errors: ['signupPage.notFound', 'write.contended'],
    handle: async (deps, { caller, params }) =>
      ok(await unpublishSignupPage(deps, caller.orgId, params.pageId)),
  }),
];
