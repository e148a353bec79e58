import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';
import { fixedClock } from '../support/dynamo.ts';

// A clock in the future: DynamoDB Local deletes items whose TTL is past.
const clock = fixedClock('2030-01-07T10:00:55.000Z');

describe('429 (Limits: 120 requests per key in any 60 seconds), through the pipeline', () => {
  let client: ApiClient;
  let org: TestOrganization;

  beforeAll(async () => {
    client = await createApiClient({ clock });
    org = await createOrganizationWithKeys(client);
  });

  it('refuses the 121st request within 60 s, across a minute boundary, writes nothing, and tells when to retry', async () => {
    // Arrange: 120 requests from 10:00:55 to 10:01:06.9.
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) {
      statuses.push((await client.get('/lists', { key: org.ownerKey })).status);
      clock.advance(100);
    }
    const before = await client.scan();
    // Act: a write, 12 s after the first request, in another calendar minute.
    const refused = await client.post('/lists', {
      key: org.ownerKey,
      body: { name: 'Over the limit' },
    });
    // Assert
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(refused.status).toBe(429);
    expect(refused.json.code).toBe('rateLimit.exceeded');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // The first request (10:00:55.0) leaves the window at 10:01:55.0.
    expect(refused.headers['retry-after']).toBe('48');
    expect(await client.scan()).toEqual(before);
    // Another key of the same organization is not limited.
    const other = await client.get('/lists', { key: org.memberKey });
    expect(other.status).toBe(200);
    expect(other.json.pagination.total).toBe(0);
  });

  it('admits the key again once its oldest request has left the window', async () => {
    clock.set('2030-01-07T10:01:55.000Z');
    const again = await client.get('/lists', { key: org.ownerKey });
    expect(again.status).toBe(200);
    expect(again.headers['ratelimit-remaining']).toBe('0');
  });
});
