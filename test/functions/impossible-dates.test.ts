/**
 * Issue 29, defect 2: a date naming a day or an hour that does not exist
 * (30 February, 31 April, 24:00) is refused with 400 naming the field on
 * every route that takes one — never rolled over to the next day. The
 * shared validator does the work; this shows each route uses it. Input is
 * validated before anything is read, so the ids need not exist.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';

const IMPOSSIBLE = [
  '2027-02-30T10:00Z',
  '2027-04-31T10:00:00+02:00',
  '2027-03-01T24:00Z',
];

describe('impossible dates are refused, not rolled over (issue 29, defect 2)', () => {
  let client: ApiClient;
  let org: TestOrganization;

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Dates');
  });

  const cases: [string, string, (date: string) => unknown, string][] = [
    [
      'POST',
      `/campaigns/${randomUUID()}/send`,
      (date) => ({ scheduledAt: date }),
      'scheduledAt',
    ],
    [
      'POST',
      '/series',
      (date) => ({ name: 'Course', listId: randomUUID(), startsAt: date }),
      'startsAt',
    ],
    [
      'PATCH',
      `/series/${randomUUID()}`,
      (date) => ({ startsAt: date }),
      'startsAt',
    ],
    [
      'POST',
      '/segments',
      (date) => ({
        name: 'Recent',
        listId: randomUUID(),
        match: 'all',
        conditions: [{ field: 'joinedAt', operator: 'after', value: date }],
      }),
      'conditions.0.value',
    ],
  ];

  it.each(cases)(
    '%s %s refuses each with 400 naming %s, and writes nothing',
    async (method, path, body, field) => {
      const before = await client.scan();
      for (const date of IMPOSSIBLE) {
        const answer = await client.call(method, path, {
          key: org.ownerKey,
          body: body(date),
        });
        expect(answer.status, date).toBe(400);
        expect(answer.json.details, date).toEqual([
          {
            field,
            message:
              'must be a real date and time (no 30 February, no 24:00), in the years 1000 to 9999',
          },
        ]);
      }
      expect(await client.scan()).toEqual(before);
    },
  );
});
