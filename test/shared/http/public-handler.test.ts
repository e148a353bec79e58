import { beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../../functions/groups.ts';
import { createTestDeps } from '../../support/dynamo.ts';
import { lambdaContext, restEvent } from '../../support/events.ts';

describe('public pages (no key)', () => {
  let invoke: (
    event: ReturnType<typeof restEvent>,
  ) => Promise<{ statusCode: number; headers?: Record<string, unknown> }>;

  beforeAll(async () => {
    const { deps } = await createTestDeps();
    const group = endpointGroups.find((g) => g.name === 'public');
    if (!group) throw new Error('no public group');
    const handler = group.createHandler(deps) as unknown as (
      event: ReturnType<typeof restEvent>,
      context: ReturnType<typeof lambdaContext>,
    ) => Promise<{ statusCode: number; headers?: Record<string, unknown> }>;
    invoke = (event) => handler(event, lambdaContext());
  });

  it.each([
    ['GET', '/api/v1/public/unsubscribe'],
    ['POST', '/api/v1/public/unsubscribe'],
    ['GET', '/api/v1/public/confirm'],
    ['GET', '/api/v1/public/topic-opt-out'],
  ])(
    'A13: %s %s may never be framed (frame-ancestors none), error pages included',
    async (method, resource) => {
      // Act: a token that does not verify.
      const result = await invoke(
        restEvent({ method, resource, query: { token: 'forged.token.value' } }),
      );
      // Assert
      expect(result.statusCode).toBe(400);
      const csp = String(result.headers?.['content-security-policy']);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(result.headers?.['x-frame-options']).toBe('DENY');
      expect(result.headers?.['x-content-type-options']).toBe('nosniff');
    },
  );
});
