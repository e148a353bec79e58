import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.ts';

describe('configuration', () => {
  it('reads the table name and defaults the key cache to 10 seconds', () => {
    expect(loadConfig({ TABLE_NAME: 'table' })).toEqual({
      TABLE_NAME: 'table',
      API_KEY_CACHE_TTL_SECONDS: 10,
    });
  });

  it('fails fast, naming every bad variable', () => {
    expect(() => loadConfig({ API_KEY_CACHE_TTL_SECONDS: 'soon' })).toThrow(
      /TABLE_NAME.*API_KEY_CACHE_TTL_SECONDS/,
    );
  });
});
