import type {
  DnsResolver,
  EmailProvider,
} from '../../shared/sending/provider.ts';

const refuse = (what: string) => async () => {
  throw new Error(`${what} is not expected to be used by this test`);
};

/** An email provider that fails loudly if a test reaches it. */
export const unreachableProvider: EmailProvider = {
  createDomain: refuse('the email provider'),
  getDomain: refuse('the email provider'),
  deleteDomain: refuse('the email provider'),
  ensureTenant: refuse('the email provider'),
  getTenant: refuse('the email provider'),
  associateDomain: refuse('the email provider'),
  dissociateDomain: refuse('the email provider'),
  getAccount: refuse('the email provider'),
};

/** A DNS resolver that fails loudly if a test reaches it. */
export const unreachableDns: DnsResolver = {
  resolveTxt: refuse('DNS'),
  resolveCname: refuse('DNS'),
  resolveMx: refuse('DNS'),
};
