/**
 * Ports of erasure: the organization's record of the people it erased
 * (who erased, when, how much), which keeps no trace of the person.
 */
import type { CoreDeps, Page, PageRequest } from '../ports.ts';

/** How an erasure named the person. */
export const ERASURE_TARGETS = ['contact', 'email'] as const;
export type ErasureTarget = (typeof ERASURE_TARGETS)[number];

/** The audit record of one erasure: counts, never the address or names. */
export interface Erasure {
  id: string;
  erasedAt: string;
  /** The API key that erased, and the user who holds it. */
  erasedBy: { keyId: string; userId: string };
  /** Named by a contact id or by an email address. */
  target: ErasureTarget;
  /** Contacts deleted (one per list that held the address). */
  contacts: number;
  /**
   * Their ids: they name nothing any more, and tell a system that kept
   * them (from webhooks, say) what to erase on its side.
   */
  contactIds: string[];
  /** Journeys through sequences deleted, their pending steps cancelled. */
  journeys: number;
  /** Topic opt-outs deleted. */
  topicOptOuts: number;
  /** Every item deleted or stripped of the address. */
  items: number;
}

/** The organization's erasures, newest first. */
export interface ErasureRepository {
  record(orgId: string, erasure: Erasure): Promise<void>;
  get(orgId: string, erasureId: string): Promise<Erasure | undefined>;
  /** Newest first. */
  page(orgId: string, request: PageRequest): Promise<Page<Erasure>>;
}

/** What erasure records need. */
export interface ErasuresDeps extends CoreDeps {
  erasures: ErasureRepository;
}
