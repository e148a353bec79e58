/**
 * Ports of sequences and series: their store (heads, versions, nodes) and
 * what they need of the other areas (the trigger's list or tag, the topic,
 * templates, the organization's cap and time zone).
 */
import type { AudienceDeps } from '../audience/ports.ts';
import type { OrganizationRepository } from '../organizations/ports.ts';
import type { Page, PageRequest } from '../ports.ts';
import type { SegmentsDeps } from '../segments/ports.ts';
import type { TemplatesDeps } from '../templates/ports.ts';
import type { TopicsDeps } from '../topics/ports.ts';
import type {
  Enrolment,
  Sequence,
  SequenceKind,
  SequenceNode,
  SequenceVersion,
  Trigger,
} from './model.ts';

/** A segment a series' version narrows its list with. */
export interface SegmentRef {
  segmentId: string;
  listId: string;
}

/**
 * How a series write changes the segments it holds (a segment in use by a
 * series cannot be deleted): `use` records the series (again, to refresh
 * its name) on each segment, conditional on the segment filtering that
 * list; `release` lets segments go. In the write's own transaction.
 */
export interface SegmentChange {
  seriesName: string;
  use: SegmentRef[];
  release: string[];
}

/** A version with its nodes, in order. */
export interface VersionWithNodes {
  version: SequenceVersion;
  nodes: SequenceNode[];
}

/** Sequences and series of the organizations, with a counter per kind. */
export interface SequenceRepository {
  /**
   * Stores a new head and its version 1 draft in one transaction, counting
   * it for its kind. With `cap`, the transaction passes only while fewer
   * than `cap` of that kind exist: `CapReachedError` otherwise.
   */
  create(
    orgId: string,
    sequence: Sequence,
    draft: SequenceVersion,
    options?: { cap?: number; segments?: SegmentChange },
  ): Promise<void>;
  get(orgId: string, sequenceId: string): Promise<Sequence | undefined>;
  /**
   * The organization's active sequences with this trigger: the ones a
   * contact joining that list (or receiving that tag) enters.
   */
  triggered(orgId: string, trigger: Trigger): Promise<Sequence[]>;
  /** How many of a kind the organization has (its counter). */
  count(orgId: string, kind: SequenceKind): Promise<number>;
  /** Newest first, one kind. */
  page(
    orgId: string,
    kind: SequenceKind,
    request: PageRequest,
  ): Promise<Page<Sequence>>;
  /**
   * Replaces the head, conditional on the version read (`sequence.changed`
   * when it moved meanwhile); with `draft`, the draft's own fields (a
   * series' calendar) in the same transaction, conditional on its revision
   * and on its still being a draft.
   */
  update(
    orgId: string,
    before: Sequence,
    after: Sequence,
    draft?: { before: SequenceVersion; after: SequenceVersion },
    segments?: SegmentChange,
  ): Promise<void>;
  /**
   * Deletes the head (conditional on the version read) and uncounts it,
   * releasing its segments; then its versions and nodes.
   */
  delete(
    orgId: string,
    before: Sequence,
    segments?: SegmentChange,
  ): Promise<void>;
  /** Every version, by number. */
  versions(orgId: string, sequenceId: string): Promise<SequenceVersion[]>;
  getVersion(
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): Promise<SequenceVersion | undefined>;
  /** A version and its nodes, in order. */
  getVersionWithNodes(
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): Promise<VersionWithNodes | undefined>;
  /**
   * Opens a draft: its nodes first, then, in one transaction, the version
   * and the head's `draftVersionId` (conditional on the head read: no
   * other draft slips in). The nodes are removed again when that fails.
   */
  openDraft(
    orgId: string,
    before: Sequence,
    after: Sequence,
    draft: VersionWithNodes,
  ): Promise<void>;
  /** Deletes a draft with its nodes and clears the head's draft id. */
  discardDraft(
    orgId: string,
    before: Sequence,
    after: Sequence,
    draft: SequenceVersion,
    segments?: SegmentChange,
  ): Promise<void>;
  /** Adds a node to a draft (conditional on the version's revision). */
  addNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void>;
  /** Replaces a node of a draft (conditional on the version's revision). */
  updateNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void>;
  /** Deletes a node of a draft (conditional on the version's revision). */
  deleteNode(
    orgId: string,
    before: SequenceVersion,
    after: SequenceVersion,
    node: SequenceNode,
  ): Promise<void>;
  /**
   * Publishes a draft in one transaction: the draft becomes published, the
   * version published before (if any) superseded, and the head points at
   * the new one with no draft open. Conditional on each item read.
   */
  publish(
    orgId: string,
    change: {
      before: Sequence;
      after: Sequence;
      draft: SequenceVersion;
      published: SequenceVersion;
      superseded?: { before: SequenceVersion; after: SequenceVersion };
      segments?: SegmentChange;
    },
  ): Promise<void>;
}

/** One page of a sequence's enrolments, and where the next one starts. */
export interface EnrolmentPage {
  items: Enrolment[];
  /** Pass it back for the next page; absent after the last one. */
  cursor?: string;
}

/** Contacts' journeys through sequences, one per (sequence, contact). */
export interface EnrolmentRepository {
  /**
   * Stores a new journey unless the contact has one in that sequence
   * (running or ended): false, and nothing written, when it has.
   */
  create(orgId: string, enrolment: Enrolment): Promise<boolean>;
  /** Strongly consistent: a step acts on what the last one wrote. */
  get(
    orgId: string,
    sequenceId: string,
    contactId: string,
  ): Promise<Enrolment | undefined>;
  /**
   * Replaces a journey, conditional on the revision read (`after` carries
   * the next one): `ConflictError` when it changed meanwhile or is gone.
   */
  update(orgId: string, before: Enrolment, after: Enrolment): Promise<void>;
  /** A page of a sequence's journeys (only those waiting, with `waiting`). */
  page(
    orgId: string,
    sequenceId: string,
    options: { limit: number; cursor?: string; waiting?: boolean },
  ): Promise<EnrolmentPage>;
  /** Deletes journeys of a sequence (its cleanup after a delete). */
  deleteMany(
    orgId: string,
    sequenceId: string,
    contactIds: readonly string[],
  ): Promise<void>;
}

/** The organization as sequences read it: cap and time zone. */
export type SequenceOrganizations = Pick<OrganizationRepository, 'get'>;

/** What sequences and series need. */
export interface SequencesDeps
  extends Pick<AudienceDeps, 'lists' | 'tags' | 'clock' | 'ids'>,
    Pick<TopicsDeps, 'topics'>,
    Pick<TemplatesDeps, 'templates'>,
    Pick<SegmentsDeps, 'segments'> {
  sequences: SequenceRepository;
  enrolments: EnrolmentRepository;
  organizations: SequenceOrganizations;
}

/**
 * The creating transaction found the organization at its cap of sequences:
 * nothing was written.
 */
export class CapReachedError extends Error {
  constructor(
    readonly cap: number,
    options?: ErrorOptions,
  ) {
    super(`The sequence cap of ${cap} is reached`, options);
    this.name = 'CapReachedError';
  }
}
