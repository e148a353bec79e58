import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, createApiClient } from '../support/api-client.ts';

describe('401 (Authentication 1 and 3) through the pipeline (in process)', () => {
  let client: ApiClient;

  beforeAll(async () => {
    client = await createApiClient();
  });

  it('refuses a request without a key, naming x-api-key', async () => {
    const { status, json } = await client.get('/lists');
    expect(status).toBe(401);
    expect(json.error).toContain('x-api-key');
  });

  it('refuses a malformed key and a well-formed unknown one', async () => {
    const garbage = await client.get('/lists', { key: 'hello' });
    const unknown = await client.get('/lists', {
      key: `emk_${'0'.repeat(32)}_${'A'.repeat(43)}`,
    });
    expect([garbage.status, unknown.status]).toEqual([401, 401]);
  });
});
