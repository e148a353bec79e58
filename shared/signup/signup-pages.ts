/**
 * Application logic of sign-up pages: create, read, list, change, publish,
 * unpublish and delete them. Agnostic to how it is called and where data
 * is stored; the public form is in `submissions.ts`.
 */
import * as v from 'valibot';
import { requireList } from '../audience/lists.ts';
import type { ListRepository } from '../audience/ports.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { FieldsDeps } from '../fields/ports.ts';
import { definitionsOf } from '../fields/values.ts';
import { slugFrom } from '../organizations/model.ts';
import type { OrganizationRepository } from '../organizations/ports.ts';
import type { CoreDeps, Page } from '../ports.ts';
import { Count, Timestamp, ViewId } from '../validation.ts';
import {
  AskedFieldView,
  askedFieldsOf,
  askedFieldsView,
} from './custom-fields.ts';
import type { SignupPage } from './model.ts';
import { type AskedField, type PageContent, THEMES } from './page-model.ts';
import type { SignupPageRepository } from './ports.ts';
import {
  type CreateSignupPageInput,
  RESERVED_SLUGS,
  type SignupPageQueryInput,
  SLUG_PATTERN,
  type UpdateSignupPageInput,
} from './signup.schema.ts';

/** What sign-up pages need. */
export interface SignupPagesDeps
  extends Pick<CoreDeps, 'clock' | 'ids' | 'endpoints'>,
    Pick<FieldsDeps, 'fields'> {
  signupPages: SignupPageRepository;
  lists: ListRepository;
  organizations: OrganizationRepository;
}

/** A row of GET /signup-pages (the spec's row: no HTML). */
export const SignupPageRow = v.pipe(
  v.object({
    id: ViewId,
    name: v.pipe(v.string(), v.description('Internal name')),
    slug: v.pipe(v.string(), v.description('Last part of the public address')),
    status: v.pipe(
      v.picklist(['draft', 'published']),
      v.description('Only a published page answers at its public address'),
    ),
    listId: v.pipe(ViewId, v.description('The list receiving the subscribers')),
    listName: v.string(),
    sourceTemplateName: v.pipe(
      v.nullable(v.string()),
      v.description('The theme the page is drawn with; null for pasted HTML'),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  v.title('SignupPageRow'),
);
export type SignupPageRow = v.InferOutput<typeof SignupPageRow>;

/** What a page says and asks, as the API shows it. */
export const SignupPageContentView = v.pipe(
  v.object({
    headline: v.string(),
    intro: v.pipe(
      v.string(),
      v.description('Plain text; a blank line starts a paragraph'),
    ),
    fields: v.pipe(
      v.object({ firstName: v.boolean(), lastName: v.boolean() }),
      v.description(
        "The optional fields asked besides the email (always asked). A pasted page's are its form's inputs, read from its HTML (not given)",
      ),
    ),
    customFields: v.pipe(
      v.array(AskedFieldView),
      v.description(
        "The custom fields (see /fields) the form asks after the names, in order; empty when none (a pasted page asks none). A field deleted since is no longer drawn, and its sign-ups' consent records say what was asked",
      ),
    ),
    consentText: v.pipe(
      v.string(),
      v.description(
        "Shown above the button; kept, as shown, in the consent record of each sign-up. A pasted page's is the text of its form, read from its HTML (not given)",
      ),
    ),
    submitLabel: v.string(),
    successMessage: v.pipe(
      v.string(),
      v.description('Shown after a submission, whatever its outcome'),
    ),
  }),
  v.title('SignupPageContent'),
);

/** One page with its content (GET, POST, PATCH, publish, unpublish). */
export const SignupPageView = v.pipe(
  v.object({
    ...SignupPageRow.entries,
    publicUrl: v.pipe(
      v.string(),
      v.url(),
      v.description(
        'The public address; it answers 404 until the page is published',
      ),
    ),
    version: v.pipe(
      Count,
      v.description(
        'Bumped by each change of what visitors see; consent records name it',
      ),
    ),
    publishedAt: v.pipe(
      v.nullable(Timestamp),
      v.description('When it was last published; null while never'),
    ),
    content: SignupPageContentView,
    html: v.pipe(
      v.nullable(v.string()),
      v.description(
        'The pasted HTML as stored (sanitized); null for a themed page',
      ),
    ),
  }),
  v.title('SignupPage'),
);
export type SignupPageView = v.InferOutput<typeof SignupPageView>;

/** A theme of GET /signup-pages/themes. */
export const ThemeView = v.pipe(
  v.object({ name: v.string(), label: v.string(), description: v.string() }),
  v.title('SignupPageTheme'),
);

/** The id of a deleted page. */
export const DeletedSignupPage = v.pipe(
  v.object({ id: ViewId }),
  v.title('DeletedSignupPage'),
);

/** The public address of a page. */
export const publicUrlOf = (
  pagesUrl: string,
  orgSlug: string,
  pageSlug: string,
): string =>
  `${pagesUrl.replace(/\/+$/, '')}/p/${encodeURIComponent(orgSlug)}/${encodeURIComponent(pageSlug)}`;

const rowOf = (page: SignupPage): SignupPageRow => ({
  id: page.id,
  name: page.name,
  slug: page.slug,
  status: page.status,
  listId: page.listId,
  listName: page.listName,
  sourceTemplateName: page.theme,
  createdAt: page.createdAt,
  updatedAt: page.updatedAt,
});

const viewOf = (
  deps: Pick<SignupPagesDeps, 'endpoints'>,
  orgSlug: string,
  page: SignupPage,
  html: string | undefined,
): SignupPageView => ({
  ...rowOf(page),
  publicUrl: publicUrlOf(deps.endpoints.pagesUrl, orgSlug, page.slug),
  version: page.version,
  publishedAt: page.publishedAt ?? null,
  content: {
    headline: page.content.headline,
    intro: page.content.intro,
    fields: page.content.fields,
    customFields: askedFieldsView(page.content.customFields),
    consentText: page.content.consentText,
    submitLabel: page.content.submitLabel,
    successMessage: page.content.successMessage,
  },
  html: page.theme === null ? (html ?? '') : null,
});

const requireOrganization = async (
  deps: Pick<SignupPagesDeps, 'organizations'>,
  orgId: string,
) => {
  const org = await deps.organizations.get(orgId);
  if (!org)
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  return org;
};

const requirePage = async (
  deps: Pick<SignupPagesDeps, 'signupPages'>,
  orgId: string,
  pageId: string,
): Promise<SignupPage> => {
  const page = await deps.signupPages.get(orgId, pageId);
  if (!page) {
    throw new NotFoundError('signupPage.notFound', `No sign-up page ${pageId}`);
  }
  return page;
};

/** Pasted HTML made safe, with what its form asks and says. */
interface SafeHtml {
  html: string;
  /** The fields its form has inputs for. */
  fields: PageContent['fields'];
  /** The text of its form: the wording its sign-ups record. */
  wording: string;
}

/**
 * Sanitizes pasted HTML and reads its form, or refuses it naming `html`.
 * The sanitizer (sanitize-html, htmlparser2) loads only when a page brings
 * pasted HTML.
 */
const safeHtml = async (html: string): Promise<SafeHtml> => {
  const { readPastedForm, sanitizePastedHtml } = await import('./pasted.ts');
  const result = sanitizePastedHtml(html);
  if (!result.ok) {
    throw new ValidationError(
      'The pasted HTML cannot make a sign-up page',
      result.problems.map(({ field, message }) => ({ field, message })),
    );
  }
  return { html: result.html, ...readPastedForm(result.html) };
};

/** Why a pasted page takes none of these from the call. */
const FROM_THE_HTML = {
  consentText:
    "is read from a pasted page's form (its text, as a visitor reads it): write the wording in the HTML",
  fields:
    "are read from a pasted page's form (its firstName and lastName inputs): add or remove them in the HTML",
  customFields:
    'are asked by a themed page only: a pasted page asks what its HTML does, and custom fields are not read from it',
} as const;

/**
 * A pasted page says and asks what its HTML does: the consent wording
 * recorded is its form's text and the names asked are its form's inputs,
 * so neither is taken from the call (400 naming them); it asks no custom
 * field (decision 0048).
 */
const refuseWordingOfPasted = (input: {
  consentText?: string | undefined;
  fields?: unknown;
  customFields?: unknown;
}): void => {
  const given = (['consentText', 'fields', 'customFields'] as const).filter(
    (field) => input[field] !== undefined,
  );
  if (given.length === 0) return;
  throw new ValidationError(
    'A pasted page says and asks what its HTML does',
    given.map((field) => ({ field, message: FROM_THE_HTML[field] })),
  );
};

/**
 * The custom fields a page will ask, checked against the organization's
 * fields (one Query, only when the call names some); undefined for none.
 */
const askedFields = async (
  deps: Pick<SignupPagesDeps, 'fields'>,
  orgId: string,
  input: CreateSignupPageInput['customFields'],
): Promise<AskedField[] | undefined> => {
  if (!input?.length) return undefined;
  return askedFieldsOf(await definitionsOf(deps, orgId), input);
};

/** The consent wording of a themed page when none is given. */
const defaultConsentText = (organizationName: string) =>
  `By subscribing, you agree to receive emails from ${organizationName}. You can unsubscribe at any time with the link in every email.`;

/**
 * The content of a new page: what was given, defaults for the rest; a
 * pasted page's fields and wording are its form's.
 */
const contentOf = (
  input: CreateSignupPageInput,
  organizationName: string,
  pasted: SafeHtml | undefined,
  customFields: AskedField[] | undefined,
): PageContent => ({
  headline: input.headline ?? `Subscribe to ${organizationName}`,
  intro: input.intro ?? '',
  fields: pasted?.fields ?? {
    firstName: input.fields?.firstName ?? true,
    lastName: input.fields?.lastName ?? false,
  },
  ...(customFields ? { customFields } : {}),
  consentText:
    pasted?.wording ??
    input.consentText ??
    defaultConsentText(organizationName),
  submitLabel: input.submitLabel ?? 'Subscribe',
  successMessage:
    input.successMessage ??
    'Almost done: we sent you an email. Click the link in it to confirm your subscription.',
});

/**
 * A slug made from a name: `acme-news`, `acme-news-2`…; `page` for a name
 * without a letter or digit, `api-page` for one making a reserved word.
 */
const slugCandidates = function* (name: string): Generator<string> {
  let base = slugFrom(name, 'page', 56);
  if (
    !SLUG_PATTERN.test(base) ||
    (RESERVED_SLUGS as readonly string[]).includes(base)
  ) {
    base = `${base}-page`;
  }
  yield base;
  for (let n = 2; n <= 20; n++) yield `${base}-${n}`;
};

/** Lists the themes a page can be drawn with. */
export const listThemes = () =>
  THEMES.map(({ name, label, description }) => ({ name, label, description }));

/**
 * Creates a draft page feeding a list of the organization: 404 for another
 * organization's list, 409 for a slug given and taken (a slug made from
 * the name takes the next free `-2`, `-3`…).
 */
export const createSignupPage = async (
  deps: SignupPagesDeps,
  orgId: string,
  input: CreateSignupPageInput,
): Promise<SignupPageView> => {
  // One id whatever slug it ends with: a slug taken writes nothing.
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) made it: that one.
  if (deps.ids.rerun && (await deps.signupPages.get(orgId, id))) {
    return getSignupPage(deps, orgId, id);
  }
  if (input.html !== undefined) refuseWordingOfPasted(input);
  const list = await requireList(deps, orgId, input.listId);
  const org = await requireOrganization(deps, orgId);
  const customFields = await askedFields(deps, orgId, input.customFields);
  const pasted =
    input.html === undefined ? undefined : await safeHtml(input.html);
  const html = pasted?.html;
  const now = deps.clock.now().toISOString();
  const page = (slug: string): SignupPage => ({
    id,
    name: input.name,
    slug,
    status: 'draft',
    listId: list.id,
    listName: list.name,
    theme: input.theme ?? null,
    content: contentOf(input, org.name, pasted, customFields),
    version: 1,
    createdAt: now,
    updatedAt: now,
  });
  if (input.slug !== undefined) {
    const created = page(input.slug);
    await deps.signupPages.create(org, created, html);
    return viewOf(deps, org.slug, created, html);
  }
  for (const slug of slugCandidates(input.name)) {
    const created = page(slug);
    try {
      await deps.signupPages.create(org, created, html);
      return viewOf(deps, org.slug, created, html);
    } catch (error) {
      if (
        !(error instanceof ConflictError) ||
        error.code !== 'signupPage.slugTaken'
      ) {
        throw error;
      }
    }
  }
  throw new ConflictError(
    'signupPage.slugTaken',
    `Too many pages are named like "${input.name}": give a slug`,
  );
};

/** One page with its content; 404 for a missing one or another's. */
export const getSignupPage = async (
  deps: SignupPagesDeps,
  orgId: string,
  pageId: string,
): Promise<SignupPageView> => {
  const page = await requirePage(deps, orgId, pageId);
  const org = await requireOrganization(deps, orgId);
  const html =
    page.theme === null
      ? await deps.signupPages.html(orgId, pageId)
      : undefined;
  return viewOf(deps, org.slug, page, html);
};

/**
 * The pages of the organization, newest first. Without a filter the total
 * comes from the counter and only the page's rows are read; with `search`,
 * `status` or `listId` every row is read (pages are capped per
 * organization) and the total counts the matches.
 */
export const listSignupPages = async (
  deps: Pick<SignupPagesDeps, 'signupPages'>,
  orgId: string,
  query: SignupPageQueryInput,
): Promise<Page<SignupPageRow>> => {
  const { page, limit, search, status, listId } = query;
  const needle = search?.toLowerCase();
  if (!needle && !status && !listId) {
    const found = await deps.signupPages.page(orgId, { page, limit });
    return { items: found.items.map(rowOf), total: found.total };
  }
  const matches = (await deps.signupPages.all(orgId)).filter(
    (p) =>
      (!status || p.status === status) &&
      (!listId || p.listId === listId) &&
      (!needle ||
        p.name.toLowerCase().includes(needle) ||
        p.slug.includes(needle)),
  );
  const offset = (page - 1) * limit;
  return {
    items: matches.slice(offset, offset + limit).map(rowOf),
    total: matches.length,
  };
};

/**
 * Changes a page. A change of what visitors see (content, theme, HTML)
 * bumps its version; a published page shows it at once. Giving `theme`
 * to a pasted page drops its HTML; giving `html` to a themed page makes it
 * a pasted one.
 */
export const updateSignupPage = async (
  deps: SignupPagesDeps,
  orgId: string,
  pageId: string,
  input: UpdateSignupPageInput,
): Promise<SignupPageView> => {
  const before = await requirePage(deps, orgId, pageId);
  const theme =
    input.theme !== undefined
      ? input.theme
      : input.html !== undefined
        ? null
        : before.theme;
  if (theme === null) refuseWordingOfPasted(input);
  const org = await requireOrganization(deps, orgId);
  const list =
    input.listId !== undefined && input.listId !== before.listId
      ? await requireList(deps, orgId, input.listId)
      : undefined;
  // The custom fields given, checked; else the page's own (a field
  // deleted since stays named: the form no longer draws it). A pasted
  // page asks none.
  const customFields =
    theme === null
      ? undefined
      : input.customFields !== undefined
        ? await askedFields(deps, orgId, input.customFields)
        : before.content.customFields;
  const pasted =
    input.html === undefined ? undefined : await safeHtml(input.html);
  const html = pasted?.html;
  // A pasted page's wording was its form's: a theme shows its own.
  const themedAgain = before.theme === null && theme !== null;
  const content: PageContent = {
    headline: input.headline ?? before.content.headline,
    intro: input.intro ?? before.content.intro,
    fields: pasted?.fields ?? {
      firstName: input.fields?.firstName ?? before.content.fields.firstName,
      lastName: input.fields?.lastName ?? before.content.fields.lastName,
    },
    ...(customFields ? { customFields } : {}),
    consentText:
      pasted?.wording ??
      input.consentText ??
      (themedAgain ? defaultConsentText(org.name) : before.content.consentText),
    submitLabel: input.submitLabel ?? before.content.submitLabel,
    successMessage: input.successMessage ?? before.content.successMessage,
  };
  const seen =
    JSON.stringify(content) !== JSON.stringify(before.content) ||
    theme !== before.theme ||
    html !== undefined;
  const after: SignupPage = {
    ...before,
    name: input.name ?? before.name,
    slug: input.slug ?? before.slug,
    ...(list ? { listId: list.id, listName: list.name } : {}),
    theme,
    content,
    version: seen ? before.version + 1 : before.version,
    updatedAt: deps.clock.now().toISOString(),
  };
  // HTML: written when given, deleted when the page takes a theme.
  const htmlChange =
    html !== undefined
      ? html
      : before.theme === null && theme !== null
        ? null
        : undefined;
  await deps.signupPages.update(org, before, after, htmlChange);
  const stored =
    after.theme === null
      ? (html ?? (await deps.signupPages.html(orgId, pageId)))
      : undefined;
  return viewOf(deps, org.slug, after, stored);
};

/** Moves a page to a status; the same status again changes nothing. */
const setStatus = async (
  deps: SignupPagesDeps,
  orgId: string,
  pageId: string,
  status: SignupPage['status'],
): Promise<SignupPageView> => {
  const before = await requirePage(deps, orgId, pageId);
  const org = await requireOrganization(deps, orgId);
  let after = before;
  if (before.status !== status) {
    const now = deps.clock.now().toISOString();
    after = {
      ...before,
      status,
      updatedAt: now,
      ...(status === 'published' ? { publishedAt: now } : {}),
    };
    await deps.signupPages.update(org, before, after);
  }
  const html =
    after.theme === null
      ? await deps.signupPages.html(orgId, pageId)
      : undefined;
  return viewOf(deps, org.slug, after, html);
};

/** Publishes a page: its address answers at once. Idempotent. */
export const publishSignupPage = (
  deps: SignupPagesDeps,
  orgId: string,
  pageId: string,
) => setStatus(deps, orgId, pageId, 'published');

/** Takes a page back to draft: its address answers 404 at once. Idempotent. */
export const unpublishSignupPage = (
  deps: SignupPagesDeps,
  orgId: string,
  pageId: string,
) => setStatus(deps, orgId, pageId, 'draft');

/**
 * Deletes a page: its address answers 404 at once and its slug is free.
 * Contacts it brought keep their consent records (naming its id).
 */
export const deleteSignupPage = async (
  deps: SignupPagesDeps,
  orgId: string,
  pageId: string,
): Promise<{ id: string }> => {
  const page = await requirePage(deps, orgId, pageId);
  const org = await requireOrganization(deps, orgId);
  if (!(await deps.signupPages.delete(org, page))) {
    throw new NotFoundError('signupPage.notFound', `No sign-up page ${pageId}`);
  }
  return { id: pageId };
};
