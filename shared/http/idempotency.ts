/**
 * The `Idempotency-Key` step of the keyed pipeline: it wraps the handler
 * (the last step), so it runs once the caller, the route and the JSON body
 * are known, and what it answers still goes through the steps after (the
 * rate-limit headers, the error body). A write carrying the header:
 * - runs once: its answer is kept for 24 hours (every answer of the
 *   operation but a 5xx or a "retry" code), and a repeat of the same
 *   request gets it back, marked `Idempotent-Replayed: true`, running
 *   nothing;
 * - answers 422 `idempotency.keyReused` when the key (of this API key)
 *   was used for another request, 409 `idempotency.inProgress` with
 *   `Retry-After` while the first runs, 400 `idempotency.keyInvalid` for a
 *   value that is not 1 to 255 visible ASCII characters;
 * - runs with ids derived from the key, so a run after one that stopped
 *   unanswered finds what that one created (see `Ids.createdId`).
 * GET, the `readOnly` reads and requests without the header run as before.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as v from 'valibot';
import type { Caller } from '../access/model.ts';
import { AppError, ValidationError } from '../errors.ts';
import type { IdempotencyDeps } from '../idempotency/ports.ts';
import {
  abandonKeyed,
  type Begun,
  beginKeyed,
  finishKeyed,
  InProgressError,
  keepsAnswer,
} from '../idempotency/requests.ts';
import { toErrorResponse } from './errors.ts';
import { type Route, routeKey, takesIdempotencyKey } from './route.ts';

/** The request header naming a write's key. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The response header marking an answer given again. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** What a key may be: 1 to 255 visible ASCII characters (no space). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** What the step reads of the request's context. */
interface StepContext {
  caller?: Caller;
  route?: Route;
}

/** The handler the step wraps, as the pipeline calls it. */
type Handler<C> = (
  event: APIGatewayProxyEvent,
  context: C,
) => Promise<APIGatewayProxyResult>;

const invalidKey = (message: string) =>
  new ValidationError(
    `Invalid request: ${IDEMPOTENCY_KEY_HEADER}: ${message}`,
    [{ field: IDEMPOTENCY_KEY_HEADER, message }],
    { code: 'idempotency.keyInvalid' },
  );

/**
 * The request's key, in any letter case of the header's name; undefined
 * when it sent none. Sent twice, it is refused: which one would count? (A
 * value is taken whole, commas and all.)
 */
export const idempotencyKeyOf = (
  event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>,
): string | undefined => {
  const wanted = IDEMPOTENCY_KEY_HEADER.toLowerCase();
  const named = <T>(headers: Record<string, T> | null | undefined) =>
    Object.entries(headers ?? {})
      .filter(([name]) => name.toLowerCase() === wanted)
      .map(([, value]) => value);
  const values = [
    ...named(event.multiValueHeaders).flatMap((list) => list ?? []),
  ];
  const single = named(event.headers).filter(
    (value): value is string => value !== undefined,
  );
  const sent = values.length > 0 ? values : single;
  if (sent.length === 0) return undefined;
  if (sent.length > 1) throw invalidKey('sent more than once');
  const [key = ''] = sent;
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw invalidKey(
      'must be 1 to 255 visible ASCII characters (a UUID is a good key)',
    );
  }
  return key;
};

/** A JSON value with its object keys sorted: one text per meaning. */
const sorted = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((name) => [name, sorted((value as Record<string, unknown>)[name])]),
  );
};

/**
 * What makes two requests the same: method, path, query (every value of
 * each name) and the parsed body, keys in any order. Headers do not count.
 */
export const canonicalRequest = (event: APIGatewayProxyEvent): string =>
  JSON.stringify(
    sorted({
      method: event.httpMethod.toUpperCase(),
      path: event.path,
      query:
        event.multiValueQueryStringParameters ??
        event.queryStringParameters ??
        {},
      body: (event as { body: unknown }).body ?? null,
    }),
  );

/** An answer as it is kept: what the handler returned. */
const KeptAnswer = v.object({
  statusCode: v.number(),
  headers: v.optional(v.record(v.string(), v.string())),
  body: v.string(),
});

const keep = (answer: APIGatewayProxyResult): string =>
  JSON.stringify({
    statusCode: answer.statusCode,
    headers: Object.fromEntries(
      Object.entries(answer.headers ?? {}).map(([name, value]) => [
        name,
        String(value),
      ]),
    ),
    body: answer.body,
  });

/** A kept answer given again, marked as such. */
const replayOf = (kept: string): APIGatewayProxyResult => {
  const answer = v.parse(KeptAnswer, JSON.parse(kept));
  return {
    statusCode: answer.statusCode,
    headers: { ...answer.headers, [REPLAYED_HEADER]: 'true' },
    body: answer.body,
  };
};

/**
 * An error rendered as the pipeline's error step renders it (a kept
 * refusal is returned, not thrown: it is the answer, given and kept).
 */
const errorAnswer = (error: unknown): APIGatewayProxyResult => {
  const rendered = toErrorResponse(error);
  return {
    statusCode: rendered.statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(rendered.body),
  };
};

/**
 * The handler `handlerOf(deps)`, made to honour `Idempotency-Key`: with
 * the key, it runs through `handlerOf` with the run's ids in the deps.
 */
export const idempotent = <D extends IdempotencyDeps, C extends StepContext>(
  deps: D,
  handlerOf: (deps: D) => Handler<C>,
): Handler<C> => {
  const plain = handlerOf(deps);
  return async (event, context) => {
    const { caller, route } = context;
    if (!caller || !route || !takesIdempotencyKey(route)) {
      return plain(event, context);
    }
    const key = idempotencyKeyOf(event);
    if (key === undefined) return plain(event, context);

    let begun: Begun;
    try {
      begun = await beginKeyed(deps, {
        orgId: caller.orgId,
        keyId: caller.keyId,
        key,
        request: canonicalRequest(event),
        operation: routeKey(event.httpMethod, event.resource),
      });
    } catch (error) {
      if (!(error instanceof InProgressError)) throw error;
      const answer = errorAnswer(error);
      return {
        ...answer,
        headers: {
          ...answer.headers,
          'Retry-After': String(error.retryAfterSeconds),
        },
      };
    }
    if (begun.kind === 'replay') return replayOf(begun.answer);

    const { run } = begun;
    let answer: APIGatewayProxyResult;
    try {
      answer = await handlerOf({ ...deps, ids: run.ids })(event, context);
    } catch (error) {
      const code = error instanceof AppError ? error.code : undefined;
      const rendered = errorAnswer(error);
      if (!keepsAnswer(rendered.statusCode, code)) {
        // Not the request's outcome: the key is let go for a retry.
        await abandonKeyed(deps, run);
        throw error;
      }
      answer = rendered;
    }
    await finishKeyed(deps, run, keep(answer));
    return answer;
  };
};
