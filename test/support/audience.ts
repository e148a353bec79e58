import { randomUUID } from 'node:crypto';
import { createList } from '../../shared/audience/lists.ts';
import type { Deps } from '../../shared/deps.ts';
import {
  createOrganization,
  setSendingAllowed,
} from '../../shared/organizations/organizations.ts';

/** A new organization, allowed to send, with one list. */
export const orgWithList = async (deps: Deps, allowed = true) => {
  const org = await createOrganization(deps, { name: `Org ${randomUUID()}` });
  if (allowed) await setSendingAllowed(deps, { orgId: org.id }, true);
  const list = await createList(deps, org.id, { name: 'Newsletter' });
  return { orgId: org.id, listId: list.id };
};

/** A unique address, so test files sharing the mailbox keep apart. */
export const uniqueEmail = (name = 'reader') =>
  `${name}-${randomUUID().slice(0, 8)}@example.test`;
