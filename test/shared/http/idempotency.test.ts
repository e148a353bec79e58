/**
 * How the pipeline reads an `Idempotency-Key` and what makes two requests
 * the same (shared/http/idempotency.ts); the step itself is tested through
 * the pipeline in test/functions/idempotency.test.ts.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../shared/errors.ts';
import {
  canonicalRequest,
  idempotencyKeyOf,
} from '../../../shared/http/idempotency.ts';

/** An event as the JSON body step leaves it: the body parsed. */
const event = (
  over: Omit<Partial<APIGatewayProxyEvent>, 'body'> & { body?: unknown } = {},
): APIGatewayProxyEvent =>
  ({
    httpMethod: 'POST',
    path: '/api/v1/lists',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    body: undefined,
    ...over,
  }) as APIGatewayProxyEvent;

const codeOf = (act: () => unknown) => {
  try {
    act();
  } catch (error) {
    return error instanceof AppError ? error.code : 'not an AppError';
  }
  return 'no error';
};

describe('the Idempotency-Key of a request', () => {
  it('reads the header in any letter case; none is undefined', () => {
    expect(idempotencyKeyOf(event())).toBeUndefined();
    expect(
      idempotencyKeyOf(event({ headers: { 'idempotency-key': 'abc' } })),
    ).toBe('abc');
    expect(
      idempotencyKeyOf(
        event({
          headers: { 'IDEMPOTENCY-KEY': 'abc' },
          multiValueHeaders: { 'IDEMPOTENCY-KEY': ['abc'] },
        }),
      ),
    ).toBe('abc');
  });

  it('refuses a key sent twice, and one outside 1–255 visible ASCII characters', () => {
    const twice = event({
      headers: { 'Idempotency-Key': 'b' },
      multiValueHeaders: { 'Idempotency-Key': ['a', 'b'] },
    });
    expect(codeOf(() => idempotencyKeyOf(twice))).toBe(
      'idempotency.keyInvalid',
    );
    for (const bad of ['', 'a b', 'ü', 'x'.repeat(256), 'a\u0000']) {
      const sent = event({ headers: { 'Idempotency-Key': bad } });
      expect(
        codeOf(() => idempotencyKeyOf(sent)),
        JSON.stringify(bad),
      ).toBe('idempotency.keyInvalid');
    }
  });
});

describe('what makes two requests the same', () => {
  it('is the method, the path, the query and the body, its keys in any order; not the headers', () => {
    const base = canonicalRequest(
      event({ body: { name: 'A', tags: [{ b: 1, a: 2 }] } }),
    );
    expect(
      canonicalRequest(
        event({
          body: { tags: [{ a: 2, b: 1 }], name: 'A' },
          headers: { 'user-agent': 'other' },
        }),
      ),
    ).toBe(base);
    const others = [
      event({ body: { name: 'B', tags: [{ b: 1, a: 2 }] } }),
      event({
        httpMethod: 'PATCH',
        body: { name: 'A', tags: [{ b: 1, a: 2 }] },
      }),
      event({
        path: '/api/v1/tags',
        body: { name: 'A', tags: [{ b: 1, a: 2 }] },
      }),
      event({
        body: { name: 'A', tags: [{ b: 1, a: 2 }] },
        queryStringParameters: { force: 'true' },
        multiValueQueryStringParameters: { force: ['true'] },
      }),
      // Array order is meaning.
      event({ body: { name: 'A', tags: [{ b: 1, a: 2 }, {}] } }),
    ];
    for (const other of others) {
      expect(canonicalRequest(other)).not.toBe(base);
    }
  });
});
