/**
 * The provider's recent answers about domain identities, kept in the memory
 * of one container: a read that accepts an answer up to `maxAgeSeconds` old
 * (GET /domains within the freshness) asks the provider nothing. Never
 * stored: DNS records only ever come from the provider or from this memory.
 */
import type { Clock } from '../ports.ts';
import type { EmailProvider, ProviderDomain } from './provider.ts';

/**
 * An EmailProvider that remembers each domain's last answer (and its time)
 * and serves it to `getDomain(domain, { maxAgeSeconds })` while it is young
 * enough. Writes through: creating or deleting an identity replaces or
 * forgets what is remembered; every other call goes straight through.
 */
export class RecentDomainAnswers implements EmailProvider {
  private readonly answers = new Map<
    string,
    { at: number; domain: ProviderDomain | undefined }
  >();

  constructor(
    private readonly provider: EmailProvider,
    private readonly clock: Clock,
  ) {}

  async createDomain(
    domain: string,
    mailFromDomain: string,
  ): Promise<ProviderDomain> {
    return this.remember(
      domain,
      await this.provider.createDomain(domain, mailFromDomain),
    );
  }

  async getDomain(
    domain: string,
    options: { maxAgeSeconds?: number } = {},
  ): Promise<ProviderDomain | undefined> {
    const known = this.answers.get(domain);
    const age = known && this.clock.now().getTime() - known.at;
    if (
      known &&
      age !== undefined &&
      age < (options.maxAgeSeconds ?? 0) * 1000
    ) {
      return known.domain;
    }
    return this.remember(domain, await this.provider.getDomain(domain));
  }

  async deleteDomain(domain: string): Promise<void> {
    this.answers.delete(domain);
    await this.provider.deleteDomain(domain);
  }

  ensureTenant(tenantName: string): Promise<void> {
    return this.provider.ensureTenant(tenantName);
  }

  getTenant(tenantName: string) {
    return this.provider.getTenant(tenantName);
  }

  associateDomain(tenantName: string, domain: string): Promise<void> {
    return this.provider.associateDomain(tenantName, domain);
  }

  dissociateDomain(tenantName: string, domain: string): Promise<void> {
    return this.provider.dissociateDomain(tenantName, domain);
  }

  getAccount() {
    return this.provider.getAccount();
  }

  private remember<T extends ProviderDomain | undefined>(
    domain: string,
    answer: T,
  ): T {
    this.answers.set(domain, {
      at: this.clock.now().getTime(),
      domain: answer,
    });
    return answer;
  }
}
