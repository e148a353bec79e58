/**
 * Ports of idempotency: the store of the records that requests carrying an
 * `Idempotency-Key` leave, one per organization, API key and key value,
 * each holding where its request stands and, once answered, the answer
 * sealed under a key only that key value gives.
 */
import type { Clock, Ids } from '../ports.ts';

/**
 * Where a record stands: a run holds it (`running`, until its lease ends),
 * its answer is kept (`done`), or its run failed and let it go
 * (`released`: the next repeat runs again).
 */
export type RecordState = 'running' | 'done' | 'released';

/** The record of one Idempotency-Key of one API key. */
export interface IdempotencyRecord {
  state: RecordState;
  /**
   * The request the key was first used for, as an HMAC under the key's
   * secret (method, path, query, body): a repeat must match it.
   */
  fingerprint: string;
  /** Method and route of that request (`POST /api/v1/lists`), for the 422. */
  operation: string;
  /**
   * When its first run began (epoch ms): the time part of the ids its runs
   * create, so every run creates the same.
   */
  startedAt: number;
  /** Runs so far: each claim of the record is one, and names it. */
  run: number;
  /** While running: until when the run holds the record (epoch ms). */
  leaseUntil?: number;
  /**
   * When the record stops answering for its key (epoch ms): 24 hours
   * after its first run began. The item's TTL follows it.
   */
  expiresAt: number;
  /** The answer, compressed and sealed (`done` only). */
  answer?: Uint8Array;
}

/** What a claim learns: the record is this run's, or as it stands. */
export type Claim =
  | { claimed: true }
  | { claimed: false; record: IdempotencyRecord };

/** The records, by organization and record id. */
export interface IdempotencyStore {
  /**
   * Claims the record for the first run of its key: writes `record` when
   * there is none, or when the one there has expired (`expiresAt` ≤ `now`,
   * epoch ms). Otherwise the record as it stands.
   */
  start(
    orgId: string,
    recordId: string,
    record: IdempotencyRecord,
    now: number,
  ): Promise<Claim>;
  /**
   * Claims a record whose run stopped for run `seen.run + 1`: only while
   * it is still as `seen` (the same run), released or past its lease at
   * `now`. Otherwise the record as it stands.
   */
  resume(
    orgId: string,
    recordId: string,
    seen: IdempotencyRecord,
    leaseUntil: number,
    now: number,
  ): Promise<Claim>;
  /**
   * Keeps the sealed answer of run `run`, which ends it; false when that
   * run no longer holds the record (another took it over).
   */
  complete(
    orgId: string,
    recordId: string,
    run: number,
    answer: Uint8Array,
  ): Promise<boolean>;
  /** Lets go of run `run`'s record, keeping no answer (a failed run). */
  release(orgId: string, recordId: string, run: number): Promise<void>;
}

/** What idempotent requests need: the records, time, and ids to derive. */
export interface IdempotencyDeps {
  idempotency: IdempotencyStore;
  clock: Clock;
  ids: Ids;
}
