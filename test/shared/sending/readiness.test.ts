import { describe, expect, it } from 'vitest';
import {
  type Blocker,
  computeReadiness,
  type SendingFacts,
  type SetupStatus,
} from '../../../shared/sending/readiness.ts';

const verified = {
  domain: 'example.com',
  dkimStatus: 'SUCCESS',
  ownershipProved: true,
} as const;
const pending = {
  domain: 'example.org',
  dkimStatus: 'PENDING',
  ownershipProved: false,
} as const;
const failed = {
  domain: 'example.net',
  dkimStatus: 'FAILED',
  ownershipProved: false,
} as const;
const unproven = {
  domain: 'example.io',
  dkimStatus: 'SUCCESS',
  ownershipProved: false,
} as const;

/** Everything in place: ready, active. */
const clear: SendingFacts = {
  appSendingEnabled: true,
  organizationAllowed: true,
  providerSuspended: false,
  provisioning: 'provisioned',
  domains: [verified],
  defaultSender: 'news@example.com',
};

const cases: [string, Partial<SendingFacts>, Blocker[], SetupStatus][] = [
  ['active: nothing blocks and the isolation is in place', {}, [], 'active'],
  [
    'incomplete: nothing blocks but the isolation is half in place',
    { provisioning: 'incomplete' },
    [],
    'incomplete',
  ],
  [
    'incomplete: provisioning none is not a fault and stops nothing',
    { provisioning: 'none' },
    [],
    'incomplete',
  ],
  [
    'dns_pending: no domain declared (mail goes out under the application address)',
    { domains: [], defaultSender: 'a@gmail.test' },
    [],
    'dns_pending',
  ],
  [
    'dns_pending + domain_not_verified: DKIM pending',
    { domains: [pending] },
    ['domain_not_verified'],
    'dns_pending',
  ],
  [
    'verification_failed: a domain failed DKIM',
    { domains: [failed, pending] },
    ['domain_not_verified'],
    'verification_failed',
  ],
  [
    'ownership_pending + domain_ownership_unproven: DKIM succeeded, ownership not proved',
    { domains: [unproven] },
    ['domain_ownership_unproven'],
    'ownership_pending',
  ],
  [
    'both domain blockers when one domain waits on DKIM and another on ownership',
    { domains: [pending, unproven] },
    ['domain_not_verified', 'domain_ownership_unproven'],
    'dns_pending',
  ],
  [
    'no domain blocker once one domain is verified, even with others pending',
    { domains: [verified, pending] },
    [],
    'active',
  ],
  [
    'sender_mismatch + sender_not_on_verified_domain',
    { defaultSender: 'news@other.test' },
    ['sender_not_on_verified_domain'],
    'sender_mismatch',
  ],
  [
    'a subdomain of a verified domain is fine',
    { defaultSender: 'news@mail.example.com' },
    [],
    'active',
  ],
  [
    'no default with a verified domain: the application address, no blocker',
    { defaultSender: undefined },
    [],
    'active',
  ],
  [
    'no_sender_identity only next to a real blocker',
    { domains: [pending], defaultSender: undefined },
    ['domain_not_verified', 'no_sender_identity'],
    'dns_pending',
  ],
  [
    'no_sender_identity alone never blocks',
    { domains: [], defaultSender: undefined },
    [],
    'dns_pending',
  ],
  [
    'suspended + sending_paused: the provider suspended the organization',
    { providerSuspended: true },
    ['sending_paused'],
    'suspended',
  ],
  [
    'sending_disabled: the application-wide switch',
    { appSendingEnabled: false },
    ['sending_disabled'],
    'sending_disabled',
  ],
  [
    'not_allowed + organization_not_allowed',
    { organizationAllowed: false },
    ['organization_not_allowed'],
    'not_allowed',
  ],
  [
    'suspended wins over every other row',
    {
      providerSuspended: true,
      appSendingEnabled: false,
      organizationAllowed: false,
      domains: [pending],
    },
    [
      'sending_disabled',
      'organization_not_allowed',
      'sending_paused',
      'domain_not_verified',
    ],
    'suspended',
  ],
  [
    'sending_disabled wins over not_allowed',
    { appSendingEnabled: false, organizationAllowed: false },
    ['sending_disabled', 'organization_not_allowed'],
    'sending_disabled',
  ],
  [
    'not_allowed wins over the domain rows',
    { organizationAllowed: false, domains: [failed] },
    ['organization_not_allowed', 'domain_not_verified'],
    'not_allowed',
  ],
];

describe('readiness (Readiness object; setup.status; Blocker codes)', () => {
  it.each(cases)('%s', (_, facts, blockers, status) => {
    const readiness = computeReadiness({ ...clear, ...facts });
    expect(readiness.blockers).toEqual(blockers);
    expect(readiness.ready).toBe(blockers.length === 0);
    expect(readiness.setup.status).toBe(status);
    expect(readiness.setup.provisioning).toBe(
      { ...clear, ...facts }.provisioning,
    );
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
