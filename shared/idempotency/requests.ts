/**
 * Application logic of a request carrying an `Idempotency-Key`. Agnostic to
 * how it is called and where records are stored.
 *
 * 1. The first request with a key claims the key's record (one conditional
 *    write) and runs; its answer is kept, sealed, for 24 hours.
 * 2. A repeat of the same request gets that answer back and runs nothing;
 *    the key used for another request is refused (422); a repeat while the
 *    first still runs is told to retry (409, `Retry-After`).
 * 3. A run that stopped without an answer kept — it failed with a 5xx or
 *    a "retry" error, or its process died and its lease ran out — lets the
 *    next repeat run again, with the ids the first created
 *    (`Ids.createdId`, `Ids.rerun`): what the first wrote is found, never
 *    written twice.
 */
import {
  ConflictError,
  type ErrorCode,
  UnprocessableError,
} from '../errors.ts';
import { logger } from '../observability.ts';
import type { Ids } from '../ports.ts';
import {
  derivedIdOf,
  fingerprintOf,
  type KeyScope,
  type KeySecret,
  keySecretOf,
  openAnswer,
  recordIdOf,
  sealAnswer,
} from './key-secret.ts';
import type { IdempotencyDeps, IdempotencyRecord } from './ports.ts';

/** How long a key answers for its first request: 24 hours from its start. */
export const KEY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * How long a run holds its record before a repeat may take it over:
 * longer than any API function runs (10 s, then Lambda stops it; API
 * Gateway gives up at 29 s), so a run still alive is never run beside.
 */
export const RUN_LEASE_MS = 30_000;

/**
 * The largest answer kept, sealed: a record is one item (400 KB at most).
 * A larger one (a template's 300 KB of incompressible HTML, say) is given
 * once and not kept: the key is let go, as after a failure.
 */
export const MAX_SEALED_ANSWER_BYTES = 350 * 1024;

/** `Retry-After` of a repeat while the first runs: most runs take less. */
export const IN_PROGRESS_RETRY_SECONDS = 1;

/**
 * The codes whose answer tells the client to retry (a race lost, a rate,
 * an outage): such an answer is not the request's outcome, so it is not
 * kept, and the key is let go for the retry to run.
 */
export const RETRY_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'rateLimit.exceeded',
  'rateLimit.perSource',
  'write.contended',
  'idempotency.inProgress',
  'member.changed',
  'contact.changed',
  'topic.changed',
  'field.changed',
  'erasure.sendRunning',
  'identities.changed',
  'provider.unavailable',
  'campaign.changed',
  'sequence.changed',
  'webhook.changed',
]);

/**
 * Whether an answer is kept for the key: every answer of the operation,
 * success or refusal, but a failure (5xx) and a "retry" code.
 */
export const keepsAnswer = (statusCode: number, code?: string): boolean =>
  statusCode < 500 &&
  !(code !== undefined && RETRY_CODES.has(code as ErrorCode));

/** A repeat while the first request runs: 409 and when to try again. */
export class InProgressError extends ConflictError {
  readonly retryAfterSeconds = IN_PROGRESS_RETRY_SECONDS;

  constructor() {
    super(
      'idempotency.inProgress',
      `A request with this Idempotency-Key is still running; retry in ${IN_PROGRESS_RETRY_SECONDS} s to get its answer`,
    );
  }
}

/** A keyed request: who sent which key, for what. */
export interface KeyedRequest extends KeyScope {
  /** The request as one canonical text: method, path, query and body. */
  request: string;
  /** Its method and route, named in a refusal (`POST /api/v1/lists`). */
  operation: string;
}

/** A run that holds its key's record. */
export interface KeyedRun {
  orgId: string;
  recordId: string;
  /** Its number: the record names the run that holds it. */
  run: number;
  secret: KeySecret;
  /** The ids it creates with: derived from the key (see `Ids`). */
  ids: Ids;
}

/** What a keyed request does: answer as the first did, or run. */
export type Begun =
  | { kind: 'replay'; answer: string }
  | { kind: 'run'; run: KeyedRun };

/** The ids of a run: created ones derived from the key, the rest new. */
const runIds = (
  base: Ids,
  secret: KeySecret,
  startedAt: number,
  rerun: boolean,
): Ids => {
  let created = 0;
  return {
    id: () => base.id(),
    secret: (bytes) => base.secret(bytes),
    createdId: () => derivedIdOf(secret, startedAt, created++),
    rerun,
  };
};

const keyReused = (record: IdempotencyRecord, operation: string) =>
  new UnprocessableError(
    'idempotency.keyReused',
    `This API key used this Idempotency-Key in the last 24 hours for another request (${
      record.operation === operation
        ? `${operation} with other parameters or another body`
        : record.operation
    }); a new request takes a new key`,
  );

/**
 * Starts a keyed request: its answer if the key's first request was
 * answered, else a run holding the record. Throws 422
 * `idempotency.keyReused` for another request, 409
 * `idempotency.inProgress` while the first still runs.
 */
export const beginKeyed = async (
  deps: IdempotencyDeps,
  request: KeyedRequest,
): Promise<Begun> => {
  const { orgId } = request;
  const secret = keySecretOf(request);
  const recordId = recordIdOf(secret);
  const fingerprint = fingerprintOf(secret, request.request);
  const now = deps.clock.now().getTime();
  const runOf = (record: IdempotencyRecord, rerun: boolean): Begun => ({
    kind: 'run',
    run: {
      orgId,
      recordId,
      run: record.run,
      secret,
      ids: runIds(deps.ids, secret, record.startedAt, rerun),
    },
  });

  // 1. The first request, or one after the record expired.
  const first: IdempotencyRecord = {
    state: 'running',
    fingerprint,
    operation: request.operation,
    startedAt: now,
    run: 1,
    leaseUntil: now + RUN_LEASE_MS,
    expiresAt: now + KEY_WINDOW_MS,
  };
  let claim = await deps.idempotency.start(orgId, recordId, first, now);
  if (claim.claimed) return runOf(first, false);

  // 2. A repeat: the answer, a refusal, or a run taking over one that
  // stopped. A lost race to take it over reads the record as the winner
  // left it, so a few rounds settle it.
  for (let round = 0; round < 3; round++) {
    const { record } = claim;
    if (record.fingerprint !== fingerprint) {
      throw keyReused(record, request.operation);
    }
    if (record.state === 'done') {
      if (!record.answer) throw new Error(`Record ${recordId} kept no answer`);
      return { kind: 'replay', answer: openAnswer(secret, record.answer) };
    }
    if (record.state === 'running' && (record.leaseUntil ?? 0) > now) {
      throw new InProgressError();
    }
    claim = await deps.idempotency.resume(
      orgId,
      recordId,
      record,
      now + RUN_LEASE_MS,
      now,
    );
    if (claim.claimed) return runOf({ ...record, run: record.run + 1 }, true);
  }
  throw new InProgressError();
};

/**
 * Keeps a run's answer for its key. One too large to keep is given once:
 * the key is let go. A failure to keep it is logged, not thrown: the
 * operation is done and its caller gets its answer; the record stays the
 * run's until its lease ends, and a repeat then runs again (safely).
 */
export const finishKeyed = async (
  deps: Pick<IdempotencyDeps, 'idempotency'>,
  run: KeyedRun,
  answer: string,
): Promise<void> => {
  const sealed = sealAnswer(run.secret, answer);
  try {
    if (sealed.byteLength > MAX_SEALED_ANSWER_BYTES) {
      logger.warn(
        'An answer too large to keep: its Idempotency-Key is let go',
        {
          orgId: run.orgId,
          bytes: sealed.byteLength,
        },
      );
      await deps.idempotency.release(run.orgId, run.recordId, run.run);
      return;
    }
    const kept = await deps.idempotency.complete(
      run.orgId,
      run.recordId,
      run.run,
      sealed,
    );
    if (!kept) {
      logger.warn('A run lost its Idempotency-Key record to a later run', {
        orgId: run.orgId,
        run: run.run,
      });
    }
  } catch (error) {
    logger.error('The answer of an Idempotency-Key request was not kept', {
      orgId: run.orgId,
      error,
    });
  }
};

/**
 * Lets go of a run's key, keeping no answer: its failure is not the
 * request's outcome, and the next repeat runs again. A failure to let go
 * is logged: the lease ends anyway.
 */
export const abandonKeyed = async (
  deps: Pick<IdempotencyDeps, 'idempotency'>,
  run: KeyedRun,
): Promise<void> => {
  try {
    await deps.idempotency.release(run.orgId, run.recordId, run.run);
  } catch (error) {
    logger.error('An Idempotency-Key record was not let go', {
      orgId: run.orgId,
      error,
    });
  }
};
