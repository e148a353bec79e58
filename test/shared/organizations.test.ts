import { beforeAll, describe, expect, it } from 'vitest';
import { describeCaller } from '../../shared/access/caller.ts';
import type { Deps } from '../../shared/deps.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { DEFAULT_SEND_QUOTA_24H } from '../../shared/organizations/model.ts';
import {
  createOrganization,
  sendQuotaOf,
  setSendingAllowed,
  setSendingEnabled,
  setSendQuota,
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

  describe('the 24-hour sending quota', () => {
    /** The organization as stored. */
    const stored = async (orgId: string) => {
      const org = await deps.organizations.get(orgId);
      if (!org) throw new Error(`no organization ${orgId}`);
      return org;
    };

    it('is the default until the operator sets one', async () => {
      // Arrange
      const { id } = await createOrganization(deps, { name: 'Quota' });
      const before = await stored(id);

      // Act
      const set = await setSendQuota(deps, { orgId: id, max24h: 25_000 });

      // Assert
      expect(DEFAULT_SEND_QUOTA_24H).toBe(10_000);
      expect(before.sendQuota24h).toBeUndefined();
      expect(sendQuotaOf(before)).toBe(10_000);
      expect(set).toEqual({ orgId: id, sendQuota24h: 25_000 });
      expect((await stored(id)).sendQuota24h).toBe(25_000);
      expect(sendQuotaOf(await stored(id))).toBe(25_000);
    });

    it('takes the decimal digits of the admin CLI’s flag, up to 10,000,000', async () => {
      // Arrange
      const { id } = await createOrganization(deps, { name: 'Quota flag' });

      // Act
      const set = await setSendQuota(deps, { orgId: id, max24h: '10000000' });

      // Assert
      expect(set.sendQuota24h).toBe(10_000_000);
      expect(sendQuotaOf(await stored(id))).toBe(10_000_000);
    });

    it.each([0, -5, 1.5, 10_000_001, Number.NaN, '', '12abc', '1e3', ' 7'])(
      'refuses %j, naming max24h, and changes nothing',
      async (max24h) => {
        // Arrange
        const { id } = await createOrganization(deps, { name: 'Bad quota' });

        // Act
        const error = await setSendQuota(deps, { orgId: id, max24h }).catch(
          (e: unknown) => e,
        );

        // Assert
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).details).toEqual([
          {
            field: 'max24h',
            message: 'must be a whole number from 1 to 10,000,000',
          },
        ]);
        expect((await stored(id)).sendQuota24h).toBeUndefined();
      },
    );

    it('is 404 for an unknown organization', async () => {
      await expect(
        setSendQuota(deps, {
          orgId: '01a20000-0000-7000-8000-00000000dead',
          max24h: 100,
        }),
      ).rejects.toThrow(NotFoundError);
    });
  });
});
