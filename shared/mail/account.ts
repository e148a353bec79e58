/**
 * The SES account's quota as the pipeline reads it: asked of the provider
 * (GetAccount) at most once a minute per container, so that batches are
 * sized and sends paced to the current `MaxSendRate` without a call each.
 */
import type { ProviderAccount } from '../sending/provider.ts';
import type { MailDeps as Deps } from './ports.ts';

/** How long a container trusts the account's quota it read. */
export const ACCOUNT_TTL_MS = 60_000;

let cached: { account: ProviderAccount; at: number } | undefined;

/** The account's quota, read again once a minute. */
export const currentAccount = async (
  deps: Pick<Deps, 'provider'>,
): Promise<ProviderAccount> => {
  const now = Date.now();
  if (!cached || now - cached.at >= ACCOUNT_TTL_MS) {
    cached = { account: await deps.provider.getAccount(), at: now };
  }
  return cached.account;
};

/** The account's sending rate in messages per second (at least 1). */
export const accountRate = async (
  deps: Pick<Deps, 'provider'>,
): Promise<number> => Math.max(1, (await currentAccount(deps)).maxSendRate);

/** Forgets the quota read (tests, and `admin local quota set` locally). */
export const forgetAccount = (): void => {
  cached = undefined;
};
