/**
 * Driven adapter: sign-up pages in their organization's partition (the row
 * and content in one item, pasted HTML in another so that rows stay small),
 * counted by their collection's counter (`SIGNUPPAGE$count`), and their
 * public addresses reserved under the organization's slug
 * (`SLUG#{orgSlug}` / `PAGE#{pageSlug}`), which the public function reads
 * to find a page in one request.
 */
import * as v from 'valibot';
import { type ItemOf, itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, RuleViolationError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import {
  MAX_SIGNUP_PAGES,
  SIGNUP_PAGE_STATUSES,
  type SignupPage,
} from '../../signup/model.ts';
import { isThemeName, type ThemeName } from '../../signup/page-model.ts';
import type {
  PublishedPage,
  SignupPageRepository,
} from '../../signup/ports.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  onFailedCondition,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

const SignupPageItem = itemSchema('SignupPage', {
  id: v.string(),
  name: v.string(),
  slug: v.string(),
  status: v.picklist(SIGNUP_PAGE_STATUSES),
  listId: v.string(),
  listName: v.string(),
  // A theme retired later still reads (the renderer falls back).
  theme: v.nullable(v.string()),
  content: v.object({
    headline: v.string(),
    intro: v.string(),
    fields: v.object({ firstName: v.boolean(), lastName: v.boolean() }),
    // Absent when the page asks none (every page before them).
    customFields: v.optional(
      v.array(
        v.object({
          fieldId: v.string(),
          key: v.string(),
          required: v.boolean(),
          label: v.optional(v.string()),
        }),
      ),
    ),
    consentText: v.string(),
    submitLabel: v.string(),
    successMessage: v.string(),
  }),
  version: v.number(),
  createdAt: v.string(),
  updatedAt: v.string(),
  publishedAt: v.optional(v.string()),
});

const HtmlItem = itemSchema('SignupPageHtml', { html: v.string() });

const SlugItem = itemSchema('SignupPageSlug', {
  orgId: v.string(),
  pageId: v.string(),
});

const fromItem = ({
  theme,
  ...page
}: ItemOf<typeof SignupPageItem>): SignupPage => ({
  ...page,
  theme:
    theme === null
      ? null
      : isThemeName(theme)
        ? theme
        : ('classic' as ThemeName),
});

const slugTaken = (slug: string) => (cause: unknown) =>
  new ConflictError(
    'signupPage.slugTaken',
    `Another page of the organization has the slug ${slug}`,
    { cause },
  );

const contended = (cause: unknown) =>
  new ConflictError(
    'write.contended',
    'The page changed meanwhile; read it again and retry',
    { cause },
  );

type Org = { id: string; slug: string };

/** Sign-up pages, their HTML, counter and public addresses. */
export class DynamoSignupPageRepository implements SignupPageRepository {
  private readonly pages;
  private readonly htmls;
  private readonly slugs;

  constructor(private readonly table: DynamoTable) {
    this.pages = entity(table, SignupPageItem);
    this.htmls = entity(table, HtmlItem);
    this.slugs = entity(table, SlugItem);
  }

  async create(org: Org, page: SignupPage, html?: string): Promise<void> {
    await transactWrite(this.table, [
      this.slugs.putTx(
        keys.signupPageSlug(org.slug, page.slug),
        { orgId: org.id, pageId: page.id },
        { if: (w) => w.missing(), otherwise: slugTaken(page.slug) },
      ),
      onFailedCondition(
        moveCollectionCounter(
          this.table,
          keys.signupPagesOfOrganization(org.id),
          1,
          { cap: MAX_SIGNUP_PAGES },
        ),
        (cause) =>
          new RuleViolationError(
            'signupPage.limitReached',
            `An organization has at most ${MAX_SIGNUP_PAGES} sign-up pages; delete one first`,
            { cause },
          ),
      ),
      this.pages.putTx(keys.signupPage(org.id, page.id), page, {
        if: (w) => w.missing(),
      }),
      ...(html === undefined
        ? []
        : [this.htmls.putTx(keys.signupPageHtml(org.id, page.id), { html })]),
    ]);
  }

  async get(orgId: string, pageId: string): Promise<SignupPage | undefined> {
    const found = await this.pages.get(keys.signupPage(orgId, pageId), {
      consistent: true,
    });
    return found && fromItem(found);
  }

  async html(orgId: string, pageId: string): Promise<string | undefined> {
    const found = await this.htmls.get(keys.signupPageHtml(orgId, pageId), {
      consistent: true,
    });
    return found?.html;
  }

  async page(orgId: string, request: PageRequest): Promise<Page<SignupPage>> {
    const found = await pageOfCollection(
      this.table,
      keys.signupPagesOfOrganization(orgId),
      request,
    );
    return {
      items: found.items.map((item) => fromItem(this.pages.parse(item))),
      total: found.total,
    };
  }

  async all(orgId: string): Promise<SignupPage[]> {
    const found = await this.pages.all(keys.signupPagesOfOrganization(orgId), {
      // Newest first: ids are time-ordered.
      descending: true,
    });
    return found.map(fromItem);
  }

  async update(
    org: Org,
    before: SignupPage,
    after: SignupPage,
    html?: string | null,
  ): Promise<void> {
    const moved = before.slug !== after.slug;
    const items: TransactItem[] = [
      this.pages.putTx(keys.signupPage(org.id, after.id), after, {
        if: (w) =>
          w.and(
            w.exists(),
            w.eq('version', before.version),
            w.eq('updatedAt', before.updatedAt),
          ),
      }),
    ];
    if (moved) {
      items.push(
        this.slugs.putTx(
          keys.signupPageSlug(org.slug, after.slug),
          { orgId: org.id, pageId: after.id },
          { if: (w) => w.missing() },
        ),
        this.slugs.deleteTx(keys.signupPageSlug(org.slug, before.slug)),
      );
    }
    if (html !== undefined) {
      const key = keys.signupPageHtml(org.id, after.id);
      items.push(
        html === null
          ? this.htmls.deleteTx(key)
          : this.htmls.putTx(key, { html }),
      );
    }
    try {
      await transactWrite(this.table, items);
    } catch (error) {
      // A slug taken says more than a page changed: it wins when both fail.
      const failed = failedConditions(error);
      if (failed?.includes(1) && moved) throw slugTaken(after.slug)(error);
      if (failed?.includes(0)) throw contended(error);
      throw error;
    }
  }

  async delete(org: Org, page: SignupPage): Promise<boolean> {
    try {
      await transactWrite(this.table, [
        this.pages.deleteTx(keys.signupPage(org.id, page.id), {
          if: (w) => w.exists(),
        }),
        this.htmls.deleteTx(keys.signupPageHtml(org.id, page.id)),
        this.slugs.deleteTx(keys.signupPageSlug(org.slug, page.slug), {
          if: (w) => w.eq('pageId', page.id),
        }),
        moveCollectionCounter(
          this.table,
          keys.signupPagesOfOrganization(org.id),
          -1,
        ),
      ]);
      return true;
    } catch (error) {
      if (failedConditions(error)?.length) return false;
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async published(
    orgSlug: string,
    pageSlug: string,
  ): Promise<PublishedPage | undefined> {
    const slug = await this.slugs.get(keys.signupPageSlug(orgSlug, pageSlug));
    if (!slug) return undefined;
    const { orgId, pageId } = slug;
    // The page and its HTML together; strongly consistent, so that an
    // unpublish or a delete shows at once.
    const items = await batchGet(this.table, [
      keys.signupPage(orgId, pageId),
      keys.signupPageHtml(orgId, pageId),
    ]);
    const pageItem = items.find((item) =>
      String(item.SK).startsWith('SIGNUPPAGE#'),
    );
    const htmlItem = items.find((item) =>
      String(item.SK).startsWith('SIGNUPHTML#'),
    );
    if (!pageItem) return undefined;
    const page = fromItem(this.pages.parse(pageItem));
    if (page.status !== 'published' || page.slug !== pageSlug) return undefined;
    return {
      orgId,
      page,
      ...(htmlItem && page.theme === null
        ? { html: this.htmls.parse(htmlItem).html }
        : {}),
    };
  }
}
