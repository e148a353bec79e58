/**
 * Ports of topics: their store with its opt-outs, and the one thing topics
 * need of contacts (an opt-out is recorded by address).
 */
import type { CoreDeps, Page, PageRequest, ReadOptions } from '../ports.ts';
import type { Topic, TopicOptOut } from './model.ts';

/** Topics of an organization and the addresses that declined them. */
export interface TopicRepository {
  /** `ConflictError` when the name is taken, case-insensitively. */
  create(orgId: string, topic: Topic): Promise<void>;
  get(orgId: string, topicId: string): Promise<Topic | undefined>;
  /** Newest first, with opt-out counts. */
  page(orgId: string, request: PageRequest): Promise<Page<Topic>>;
  /**
   * Replaces name and description (moving the name reservation when the
   * name changes); `ConflictError` when the new name is taken.
   */
  update(orgId: string, before: Topic, after: Topic): Promise<void>;
  /** Deletes the topic and its opt-outs; `NotFoundError` when missing. */
  delete(orgId: string, topic: Topic): Promise<void>;
  /** Records an opt-out; false when the address had already declined. */
  addOptOut(
    orgId: string,
    topicId: string,
    optOut: TopicOptOut,
  ): Promise<boolean>;
  /** Removes an opt-out; false when there was none. */
  removeOptOut(orgId: string, topicId: string, email: string): Promise<boolean>;
  /**
   * Forgets an erased address: removes each of its opt-outs (moving the
   * counters as `removeOptOut` does), then its record of declined topics.
   * Returns the opt-outs removed. Idempotent.
   */
  forgetAddress(orgId: string, email: string): Promise<number>;
  /** The topics an address declined (strongly consistent). */
  declinedBy(orgId: string, email: string): Promise<string[]>;
  /** Which of these addresses declined the topic (strongly by default). */
  optedOut(
    orgId: string,
    topicId: string,
    emails: string[],
    options?: ReadOptions,
  ): Promise<Set<string>>;
  /** The opt-outs of a topic, by email. */
  pageOptOuts(
    orgId: string,
    topicId: string,
    total: number,
    request: PageRequest,
  ): Promise<Page<TopicOptOut>>;
}

/**
 * The contacts as topics see them: an opt-out names a contact and is kept
 * by its address. The audience's `ContactRepository` is one.
 */
export interface ContactLookup {
  findById(
    orgId: string,
    contactId: string,
  ): Promise<{ email: string } | undefined>;
}

/** What topics need. */
export interface TopicsDeps extends CoreDeps {
  topics: TopicRepository;
  contacts: ContactLookup;
}
