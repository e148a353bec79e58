/**
 * Which answers a key keeps (shared/idempotency/requests.ts): every answer
 * of the operation but a failure and an answer that says to retry.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../../shared/errors.ts';
import {
  keepsAnswer,
  RETRY_CODES,
} from '../../../shared/idempotency/requests.ts';

describe('the answers a key keeps', () => {
  it('keeps successes and refusals of the operation', () => {
    expect(keepsAnswer(200)).toBe(true);
    expect(keepsAnswer(201)).toBe(true);
    expect(keepsAnswer(202)).toBe(true);
    expect(keepsAnswer(400, 'request.invalid')).toBe(true);
    expect(keepsAnswer(404, 'list.notFound')).toBe(true);
    expect(keepsAnswer(409, 'list.nameTaken')).toBe(true);
    expect(keepsAnswer(413, 'import.tooLarge')).toBe(true);
  });

  it('keeps no failure and no answer that says to retry', () => {
    expect(keepsAnswer(500, 'internal')).toBe(false);
    expect(keepsAnswer(503, 'provider.unavailable')).toBe(false);
    expect(keepsAnswer(409, 'contact.changed')).toBe(false);
    expect(keepsAnswer(409, 'write.contended')).toBe(false);
    expect(keepsAnswer(429, 'rateLimit.exceeded')).toBe(false);
  });

  it('lists as "retry" codes exactly those whose meaning tells the client to retry (a new code is classified here)', () => {
    const sayRetry = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) =>
      /\bretry\b/i.test(ERROR_CODES[code].meaning),
    );
    expect([...RETRY_CODES].sort()).toEqual(sayRetry.sort());
  });
});
