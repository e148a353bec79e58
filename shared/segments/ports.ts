/**
 * Ports of segments: their store, and the walk over a list's contacts that
 * a live count needs. Segments also read lists and tags (the audience's
 * repositories).
 */
import type { Contact } from '../audience/model.ts';
import type { ListRepository, TagRepository } from '../audience/ports.ts';
import type { CoreDeps, Page, PageRequest } from '../ports.ts';
import type { Segment } from './model.ts';

/** Segments of an organization. */
export interface SegmentRepository {
  /**
   * Stores a new segment and counts it on the organization, on the
   * condition that its list exists; `NotFoundError` (`list.notFound`)
   * otherwise.
   */
  create(orgId: string, segment: Segment): Promise<void>;
  /** One segment (strongly consistent). */
  get(orgId: string, segmentId: string): Promise<Segment | undefined>;
  /** Newest first; the total from the organization's counter. */
  page(orgId: string, request: PageRequest): Promise<Page<Segment>>;
  /**
   * Writes name, match, conditions and `updatedAt` (never the list nor the
   * series using it); `NotFoundError` when the segment is gone.
   */
  update(orgId: string, segment: Segment): Promise<void>;
  /**
   * Deletes the segment, on the condition that no series uses it; false,
   * with nothing written, when it is gone or in use (read it again to
   * tell which).
   */
  delete(orgId: string, segmentId: string): Promise<boolean>;
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
}
