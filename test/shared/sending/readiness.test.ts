import { describe, expect, it } from 'vitest';
import {
  computeReadiness,
  type SendingFacts,
} from '../../../shared/sending/readiness.ts';

const clear: SendingFacts = {
  appSendingEnabled: true,
  organizationAllowed: true,
  providerSuspended: false,
  provisioning: 'provisioned',
};

describe('readiness (Readiness object; setup.status; Blocker codes)', () => {
  it.each([
    ['nothing blocks and isolation is in place', {}, [], 'active'],
    [
      'isolation not attempted yet (provisioning none is not a fault)',
      { provisioning: 'none' },
      [],
      'incomplete',
    ],
    [
      'isolation half in place',
      { provisioning: 'incomplete' },
      [],
      'incomplete',
    ],
    [
      'sending switched off application-wide',
      { appSendingEnabled: false },
      ['sending_disabled'],
      'sending_disabled',
    ],
    [
      'organization not on the allowlist',
      { organizationAllowed: false },
      ['organization_not_allowed'],
      'not_allowed',
    ],
    [
      'provider suspension wins over every other row',
      {
        providerSuspended: true,
        appSendingEnabled: false,
        organizationAllowed: false,
      },
      ['sending_disabled', 'organization_not_allowed', 'sending_paused'],
      'suspended',
    ],
    [
      'switch off wins over not allowed',
      { appSendingEnabled: false, organizationAllowed: false },
      ['sending_disabled', 'organization_not_allowed'],
      'sending_disabled',
    ],
  ] as const)('%s', (_, facts, blockers, status) => {
    const readiness = computeReadiness({ ...clear, ...facts });
    expect(readiness.blockers).toEqual(blockers);
    expect(readiness.ready).toBe(blockers.length === 0);
    expect(readiness.setup.status).toBe(status);
  });

  it('never reads active for an organization that is not allowed', () => {
    for (const provisioning of ['none', 'provisioned', 'incomplete'] as const) {
      const readiness = computeReadiness({
        ...clear,
        organizationAllowed: false,
        provisioning,
      });
      expect(readiness.setup.status).not.toBe('active');
    }
  });
});
