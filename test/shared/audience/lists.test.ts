import { beforeAll, describe, expect, it } from 'vitest';
import {
  createList,
  getList,
  listLists,
} from '../../../shared/audience/lists.ts';
import type { Deps } from '../../../shared/deps.ts';
import { ConflictError, NotFoundError } from '../../../shared/errors.ts';
import { createOrganization } from '../../../shared/organizations/organizations.ts';
import { createTestDeps } from '../../support/dynamo.ts';

describe('lists, on the embedded DynamoDB', () => {
  let deps: Deps;
  let orgId: string;
  let otherOrgId: string;

  beforeAll(async () => {
    ({ deps } = await createTestDeps());
    ({ id: orgId } = await createOrganization(deps, { name: 'Lists Inc' }));
    ({ id: otherOrgId } = await createOrganization(deps, { name: 'Other' }));
  });

  it('creates a list and reads it back without its count', async () => {
    const list = await createList(deps, orgId, { name: 'Weekly' });
    expect(await getList(deps, orgId, list.id)).toEqual(list);
  });

  it('refuses a second list of the same name, case-insensitively', async () => {
    await createList(deps, orgId, { name: 'Monthly' });
    await expect(createList(deps, orgId, { name: 'MONTHLY' })).rejects.toThrow(
      ConflictError,
    );
  });

  it('answers 404 for another organization’s list (Authentication 5)', async () => {
    const list = await createList(deps, otherOrgId, { name: 'Theirs' });
    await expect(getList(deps, orgId, list.id)).rejects.toThrow(NotFoundError);
  });

  it('pages newest first, with a total from the counter and contact counts', async () => {
    // Arrange
    const { deps: fresh } = await createTestDeps();
    const org = await createOrganization(fresh, { name: 'Pager' });
    const names = Array.from({ length: 7 }, (_, i) => `List ${i + 1}`);
    for (const name of names) await createList(fresh, org.id, { name });
    // Act
    const first = await listLists(fresh, org.id, { page: 1, limit: 3 });
    const third = await listLists(fresh, org.id, { page: 3, limit: 3 });
    const beyond = await listLists(fresh, org.id, { page: 4, limit: 3 });
    // Assert
    expect(first.total).toBe(7);
    expect(first.items.map((l) => l.name)).toEqual([
      'List 7',
      'List 6',
      'List 5',
    ]);
    expect(first.items[0]?.contactCount).toBe(0);
    expect(third.items.map((l) => l.name)).toEqual(['List 1']);
    expect(beyond).toEqual({ items: [], total: 7 });
  });
});
