/**
 * Driven adapter: tags in their organization's partition, each name reserved
 * case-insensitively, the organization's tag counter giving the total.
 */
import * as v from 'valibot';
import { type Tag, type TagRef, tagNameKey } from '../../audience/model.ts';
import type { TagRepository } from '../../audience/ports.ts';
import { itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import { pageOfCollection, putWithReservation } from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import { batchGet, Counter, type DynamoTable } from './dynamo-table.ts';

export const TagItem = itemSchema('Tag', {
  id: v.string(),
  name: v.string(),
  createdAt: v.string(),
  contactCount: Counter,
});

/** A tag's id and name, as the names cache reads them. */
const TagRefItem = itemSchema('Tag', { id: v.string(), name: v.string() });

/** Most tag names a container keeps (about 1 MB). */
const MAX_KEPT_NAMES = 10_000;

/** A tag name's reservation, naming the tag that holds it. */
const TagNameItem = itemSchema('TagName', {
  tagId: v.string(),
  name: v.string(),
  createdAt: v.optional(v.string()),
});

/**
 * The attribute of a tag item counting its carriers in one list, moved by
 * the same transactions as the contacts (so it is exact at once).
 */
export const tagListCountAttribute = (listId: string): string =>
  `inList#${listId}`;

/**
 * The attribute of a tag item counting its subscribed carriers in one list
 * (what a send to the list and tag reaches), moved by the same
 * transactions as the contacts. Absent (older data): 0 until `admin org
 * recount` sets it.
 */
export const tagSubscribedCountAttribute = (listId: string): string =>
  `subscribedInList#${listId}`;

/** Tags, their name reservations and the organization's tag counter. */
export class DynamoTagRepository implements TagRepository {
  /**
   * Tag names this container has read, by `<orgId>#<tagId>`: a tag is never
   * renamed nor deleted, so they never go stale. The oldest go first past
   * `MAX_KEPT_NAMES`.
   */
  private readonly names = new Map<string, TagRef>();

  private readonly tags;
  private readonly reservations;

  constructor(private readonly table: DynamoTable) {
    this.tags = entity(table, TagItem);
    this.reservations = entity(table, TagNameItem);
  }

  async refs(orgId: string, tagIds: string[]): Promise<Map<string, TagRef>> {
    const found = new Map<string, TagRef>();
    const missing: string[] = [];
    for (const id of new Set(tagIds)) {
      const kept = this.names.get(`${orgId}#${id}`);
      if (kept) found.set(id, kept);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const items = await batchGet(
      this.table,
      missing.map((id) => keys.tag(orgId, id)),
    );
    for (const item of items) {
      const { id, name } = parseItem(TagRefItem, item);
      found.set(id, { id, name });
      this.names.set(`${orgId}#${id}`, { id, name });
    }
    for (const key of this.names.keys()) {
      if (this.names.size <= MAX_KEPT_NAMES) break;
      this.names.delete(key);
    }
    return found;
  }

  async create(orgId: string, tag: Tag): Promise<void> {
    await putWithReservation(this.table, {
      reservation: this.reservations.putTx(
        keys.tagName(orgId, tagNameKey(tag.name)),
        { tagId: tag.id, name: tag.name, createdAt: tag.createdAt },
        {
          if: (w) => w.missing(),
          otherwise: (cause) =>
            new ConflictError(
              'tag.nameTaken',
              `A tag named "${tag.name}" already exists`,
              { cause },
            ),
        },
      ),
      item: this.tags.putTx(
        keys.tag(orgId, tag.id),
        {
          id: tag.id,
          name: tag.name,
          createdAt: tag.createdAt,
          contactCount: 0,
        },
        { if: (w) => w.missing() },
      ),
      counted: keys.tagsOfOrganization(orgId),
    });
  }

  get(orgId: string, tagId: string): Promise<Tag | undefined> {
    return this.tags.get(keys.tag(orgId, tagId), { consistent: true });
  }

  async countInList(
    orgId: string,
    tagId: string,
    listId: string,
    options: { subscribed?: boolean } = {},
  ): Promise<number | undefined> {
    const attribute = options.subscribed
      ? tagSubscribedCountAttribute(listId)
      : tagListCountAttribute(listId);
    // Absent until the tag's first carrier in the list (the id tells an
    // existing tag from none).
    const counter = itemSchema('Tag', { [attribute]: Counter });
    const found = await entity(this.table, counter).project(
      keys.tag(orgId, tagId),
      ['id', attribute],
      counter,
      { consistent: true },
    );
    return found?.[attribute];
  }

  async getMany(orgId: string, tagIds: string[]): Promise<Tag[]> {
    const items = await batchGet(
      this.table,
      [...new Set(tagIds)].map((id) => keys.tag(orgId, id)),
    );
    return items
      .map((item) => this.tags.parse(item))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async findByNames(
    orgId: string,
    names: string[],
  ): Promise<Map<string, TagRef>> {
    const nameKeys = [...new Set(names.map(tagNameKey))];
    const items = await batchGet(
      this.table,
      nameKeys.map((nameKey) => keys.tagName(orgId, nameKey)),
    );
    return new Map(
      items.map((item) => {
        const { tagId, name } = parseItem(TagNameItem, item);
        return [tagNameKey(name), { id: tagId, name }];
      }),
    );
  }

  async page(orgId: string, request: PageRequest): Promise<Page<Tag>> {
    const page = await pageOfCollection(
      this.table,
      keys.tagsOfOrganization(orgId),
      request,
    );
    return {
      items: page.items.map((item) => this.tags.parse(item)),
      total: page.total,
    };
  }
}
