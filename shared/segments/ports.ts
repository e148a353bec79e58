/**
 * Ports of segments: their store, and the walk over a list's contacts that
 * a live count needs. Segments also read lists and tags (the audience's
 * repositories) and custom fields (their conditions name them).
 */
import type { Contact } from '../audience/model.ts';
import type { ListRepository, TagRepository } from '../audience/ports.ts';
import type { FieldRepository } from '../fields/ports.ts';
import type { CoreDeps, Page, PageRequest } from '../ports.ts';
import type { Segment } from './model.ts';

/** Segments of an organization. */
export interface SegmentRepository {
  /**
   * Stores a new segment and counts it on the organization, on the
   * condition that its list exists (`NotFoundError` `list.notFound`
   * otherwise); holds each custom field its conditions name, on the
   * condition that the key is still the field of `fieldIds` (key → field
   * id), not deleted (`ValidationError` naming the conditions otherwise).
   */
  create(
    orgId: string,
    segment: Segment,
    fieldIds: ReadonlyMap<string, string>,
  ): Promise<void>;
  /** One segment (strongly consistent). */
  get(orgId: string, segmentId: string): Promise<Segment | undefined>;
  /** Newest first; the total from the organization's counter. */
  page(orgId: string, request: PageRequest): Promise<Page<Segment>>;
  /**
   * Writes name, match, conditions and `updatedAt` of `after` (never the
   * list nor the series using it), on the condition that the segment is
   * still `before` (its `updatedAt`); holds the custom fields `after` names
   * newly (as `create`, `fieldIds` naming them) and releases those it no
   * longer names. False, with nothing written, when the segment is gone
   * or changed meanwhile (read it again to tell which).
   */
  update(
    orgId: string,
    before: Segment,
    after: Segment,
    fieldIds: ReadonlyMap<string, string>,
  ): Promise<boolean>;
  /**
   * Deletes the segment, on the condition that it is still as read (its
   * `updatedAt`) and no series uses it, and releases the custom fields its
   * conditions name; false, with nothing written, when it is gone,
   * changed or in use (read it again to tell which).
   */
  delete(orgId: string, segment: Segment): Promise<boolean>;
  /**
   * The first `limit` contacts of a list (any status) in email order,
   * eventually consistent: a sample, and the whole list when it holds no
   * more (`whole`).
   */
  sampleOfList(
    orgId: string,
    listId: string,
    limit: number,
  ): Promise<{ contacts: Contact[]; whole: boolean }>;
}

/** What segments need. */
export interface SegmentsDeps extends CoreDeps {
  segments: SegmentRepository;
  lists: ListRepository;
  tags: TagRepository;
  fields: FieldRepository;
}
