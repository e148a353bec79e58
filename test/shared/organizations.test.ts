import { beforeAll, describe, expect, it } from 'vitest';
import { describeCaller } from '../../shared/access/caller.ts';
import type { Deps } from '../../shared/deps.ts';
import { NotFoundError } from '../../shared/errors.ts';
import {
  createOrganization,
  setSendingAllowed,
  setSendingEnabled,
} from '../../shared/organizations/organizations.ts';
import { createTestDeps } from '../support/dynamo.ts';

describe('organizations, on the embedded DynamoDB', () => {
  let deps: Deps;

  beforeAll(async () => {
    ({ deps } = await createTestDeps());
  });

  it('derives a unique slug from the name', async () => {
    const first = await createOrganization(deps, { name: 'Café Olé!' });
    const second = await createOrganization(deps, { name: 'cafe ole' });
    expect(first.slug).toBe('cafe-ole');
    expect(second.slug).toBe('cafe-ole-2');
    expect(second.id).not.toBe(first.id);
  });

  it('starts off the sending allowlist, and the operator can allow it', async () => {
    // Arrange
    const org = await createOrganization(deps, { name: 'Allow me' });
    const caller = {
      orgId: org.id,
      keyId: 'k',
      userId: 'u',
      role: 'owner' as const,
    };
    // Act
    const before = await describeCaller(deps, caller);
    await setSendingAllowed(deps, { orgId: org.id }, true);
    const after = await describeCaller(deps, caller);
    // Assert
    expect(before.sending).toEqual({
      ready: false,
      // The address book is empty: reported next to the real blocker.
      blockers: ['organization_not_allowed', 'no_sender_identity'],
      setup: { status: 'not_allowed', provisioning: 'none' },
    });
    expect(after.sending.ready).toBe(true);
  });

  it('reports the application-wide switch in every organization', async () => {
    const org = await createOrganization(deps, { name: 'Switch' });
    await setSendingAllowed(deps, { orgId: org.id }, true);
    const caller = {
      orgId: org.id,
      keyId: 'k',
      userId: 'u',
      role: 'admin' as const,
    };
    await setSendingEnabled(deps, false);
    const off = await describeCaller(deps, caller);
    await setSendingEnabled(deps, true);
    expect(off.sending.blockers).toEqual([
      'sending_disabled',
      'no_sender_identity',
    ]);
    expect(off.sending.setup.status).toBe('sending_disabled');
  });

  it('refuses to allow an unknown organization', async () => {
    await expect(
      setSendingAllowed(
        deps,
        { orgId: '01a20000-0000-7000-8000-00000000dead' },
        true,
      ),
    ).rejects.toThrow(NotFoundError);
  });
});
