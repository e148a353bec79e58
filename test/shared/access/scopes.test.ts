/**
 * Key scopes (issue 32): which routes a scoped key takes, what a refusal
 * says, and which new keys stay within a key's scopes.
 */
import { describe, expect, it } from 'vitest';
import {
  orderedScopes,
  scopeRefusal,
  scopesAllow,
  scopesWithin,
} from '../../../shared/access/scopes.ts';

const audienceWrite = { method: 'POST', scope: 'audience' } as const;
const audienceRead = { method: 'GET', scope: 'audience' } as const;

describe('scopes', () => {
  it('gives full access to a key without scopes, on every route, declared or not', () => {
    expect(scopesAllow(undefined, audienceWrite)).toBe(true);
    expect(scopesAllow(undefined, { method: 'POST' })).toBe(true);
  });

  it('lets a scoped key take its scope’s routes, read every GET, and any key a route of no scope', () => {
    expect(scopesAllow(['audience'], audienceWrite)).toBe(true);
    expect(scopesAllow(['read'], audienceRead)).toBe(true);
    expect(scopesAllow(['read'], audienceWrite)).toBe(false);
    expect(scopesAllow(['campaigns'], audienceRead)).toBe(false);
    expect(scopesAllow(['campaigns'], { method: 'GET', scope: 'none' })).toBe(
      true,
    );
  });

  it('keeps a keyed route that declares no scope for full-access keys (fail closed)', () => {
    expect(scopesAllow(['read'], { method: 'GET' })).toBe(false);
    expect(scopeRefusal(['read'], { method: 'GET' })).toBe(
      'This operation is open to keys with full access only; your key is narrowed to read',
    );
  });

  it('names the scope a refused key needs, and read beside it on a GET', () => {
    expect(scopeRefusal(['settings'], audienceWrite)).toBe(
      'This operation needs the audience scope; your key is narrowed to settings',
    );
    expect(scopeRefusal(['settings'], audienceRead)).toBe(
      'This operation needs the audience scope (or read, as a GET); your key is narrowed to settings',
    );
    expect(scopeRefusal(['audience'], audienceWrite)).toBeUndefined();
  });

  it('lets a key create only keys within its own scopes', () => {
    expect(scopesWithin(undefined, undefined)).toBe(true);
    expect(scopesWithin(['read'], undefined)).toBe(true);
    expect(scopesWithin(undefined, ['read'])).toBe(false);
    expect(scopesWithin(['audience'], ['audience', 'settings'])).toBe(true);
    // `read` covers the campaigns' GETs, which `audience` does not.
    expect(scopesWithin(['read'], ['audience', 'settings'])).toBe(false);
  });

  it('orders scopes as declared, each once', () => {
    expect(orderedScopes(['settings', 'read', 'settings'])).toEqual([
      'read',
      'settings',
    ]);
  });
});
