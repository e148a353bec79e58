/**
 * Driven adapter: sign-up pages in their organization's partition (the row
 * and content in one item, pasted HTML in another so that rows stay small),
 * counted on the organization item, and their public addresses reserved
 * under the organization's slug (`SLUG#{orgSlug}` / `PAGE#{pageSlug}`),
 * which the public function reads to find a page in one request.
 */
import { GetCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
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
import {
  batchGet,
  type DynamoTable,
  failedConditions,
  isConditionFailure,
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

const toItem = (orgId: string, page: SignupPage) => ({
  ...keys.signupPage(orgId, page.id),
  ...entityType('SignupPage'),
  ...page,
});

const fromItem = (item: Record<string, unknown>): SignupPage => {
  const { theme, ...page } = parseItem(SignupPageItem, item);
  return {
    ...page,
    theme:
      theme === null
        ? null
        : isThemeName(theme)
          ? theme
          : ('classic' as ThemeName),
  };
};

const slugTaken = (slug: string, cause: unknown) =>
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
  constructor(private readonly table: DynamoTable) {}

  async create(org: Org, page: SignupPage, html?: string): Promise<void> {
    const { tableName: TableName } = this.table;
    const absent = 'attribute_not_exists(PK)';
    try {
      await transactWrite(this.table, [
        {
          Put: {
            TableName,
            Item: {
              ...keys.signupPageSlug(org.slug, page.slug),
              ...entityType('SignupPageSlug'),
              orgId: org.id,
              pageId: page.id,
            },
            ConditionExpression: absent,
          },
        },
        moveCollectionCounter(
          this.table,
          keys.signupPagesOfOrganization(org.id),
          1,
          { cap: MAX_SIGNUP_PAGES },
        ),
        {
          Put: {
            TableName,
            Item: toItem(org.id, page),
            ConditionExpression: absent,
          },
        },
        ...(html === undefined
          ? []
          : [
              {
                Put: {
                  TableName,
                  Item: {
                    ...keys.signupPageHtml(org.id, page.id),
                    ...entityType('SignupPageHtml'),
                    html,
                  },
                },
              },
            ]),
      ]);
    } catch (error) {
      const failed = failedConditions(error);
      if (failed?.includes(0)) throw slugTaken(page.slug, error);
      if (failed?.includes(1)) {
        throw new RuleViolationError(
          'signupPage.limitReached',
          `An organization has at most ${MAX_SIGNUP_PAGES} sign-up pages; delete one first`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  async get(orgId: string, pageId: string): Promise<SignupPage | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.signupPage(orgId, pageId),
        ConsistentRead: true,
      }),
    );
    return Item ? fromItem(Item) : undefined;
  }

  async html(orgId: string, pageId: string): Promise<string | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.signupPageHtml(orgId, pageId),
        ConsistentRead: true,
      }),
    );
    return Item ? parseItem(HtmlItem, Item).html : undefined;
  }

  async page(orgId: string, request: PageRequest): Promise<Page<SignupPage>> {
    const found = await pageOfCollection(
      this.table,
      keys.signupPagesOfOrganization(orgId),
      request,
    );
    return { items: found.items.map(fromItem), total: found.total };
  }

  async all(orgId: string): Promise<SignupPage[]> {
    const { PK, skPrefix } = keys.signupPagesOfOrganization(orgId);
    const pages: SignupPage[] = [];
    for await (const result of paginateQuery(
      { client: this.table.client },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': PK, ':prefix': skPrefix },
        // Newest first: ids are time-ordered.
        ScanIndexForward: false,
      },
    )) {
      pages.push(...(result.Items ?? []).map(fromItem));
    }
    return pages;
  }

  async update(
    org: Org,
    before: SignupPage,
    after: SignupPage,
    html?: string | null,
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    const moved = before.slug !== after.slug;
    const items: TransactItem[] = [
      {
        Put: {
          TableName,
          Item: toItem(org.id, after),
          ConditionExpression:
            'attribute_exists(PK) AND version = :version AND updatedAt = :updatedAt',
          ExpressionAttributeValues: {
            ':version': before.version,
            ':updatedAt': before.updatedAt,
          },
        },
      },
    ];
    if (moved) {
      items.push(
        {
          Put: {
            TableName,
            Item: {
              ...keys.signupPageSlug(org.slug, after.slug),
              ...entityType('SignupPageSlug'),
              orgId: org.id,
              pageId: after.id,
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        {
          Delete: {
            TableName,
            Key: keys.signupPageSlug(org.slug, before.slug),
          },
        },
      );
    }
    if (html !== undefined) {
      items.push(
        html === null
          ? {
              Delete: { TableName, Key: keys.signupPageHtml(org.id, after.id) },
            }
          : {
              Put: {
                TableName,
                Item: {
                  ...keys.signupPageHtml(org.id, after.id),
                  ...entityType('SignupPageHtml'),
                  html,
                },
              },
            },
      );
    }
    try {
      await transactWrite(this.table, items);
    } catch (error) {
      const failed = failedConditions(error);
      if (failed?.includes(1) && moved) throw slugTaken(after.slug, error);
      if (failed?.includes(0)) throw contended(error);
      throw error;
    }
  }

  async delete(org: Org, page: SignupPage): Promise<boolean> {
    const { tableName: TableName } = this.table;
    try {
      await transactWrite(this.table, [
        {
          Delete: {
            TableName,
            Key: keys.signupPage(org.id, page.id),
            ConditionExpression: 'attribute_exists(PK)',
          },
        },
        { Delete: { TableName, Key: keys.signupPageHtml(org.id, page.id) } },
        {
          Delete: {
            TableName,
            Key: keys.signupPageSlug(org.slug, page.slug),
            ConditionExpression: 'pageId = :pageId',
            ExpressionAttributeValues: { ':pageId': page.id },
          },
        },
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
    const { tableName: TableName, client } = this.table;
    const { Item: slugItem } = await client.send(
      new GetCommand({
        TableName,
        Key: keys.signupPageSlug(orgSlug, pageSlug),
      }),
    );
    if (!slugItem) return undefined;
    const { orgId, pageId } = parseItem(SlugItem, slugItem);
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
    const page = fromItem(pageItem);
    if (page.status !== 'published' || page.slug !== pageSlug) return undefined;
    return {
      orgId,
      page,
      ...(htmlItem && page.theme === null
        ? { html: parseItem(HtmlItem, htmlItem).html }
        : {}),
    };
  }
}
