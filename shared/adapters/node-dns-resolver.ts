/**
 * DNS lookups through Node's resolver (c-ares): the system's servers on AWS,
 * the local DNS server of the local stack and tests.
 */
import { Resolver } from 'node:dns/promises';
import { logger } from '../observability.ts';
import type { DnsResolver } from '../sending/provider.ts';

/** The answers a missing name or record type gets: no records, no warning. */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

/** The DnsResolver over `node:dns`, optionally with its own servers. */
export class NodeDnsResolver implements DnsResolver {
  private readonly resolver: Resolver;

  /** @param servers e.g. `['127.0.0.1:5353']`; the system's when omitted. */
  constructor(servers?: string[]) {
    this.resolver = new Resolver({ timeout: 2000, tries: 1 });
    if (servers?.length) this.resolver.setServers(servers);
  }

  async resolveTxt(name: string): Promise<string[]> {
    const records = await this.lookup(name, 'TXT', () =>
      this.resolver.resolveTxt(name),
    );
    return records.map((chunks) => chunks.join(''));
  }

  resolveCname(name: string): Promise<string[]> {
    return this.lookup(name, 'CNAME', () => this.resolver.resolveCname(name));
  }

  resolveMx(name: string): Promise<{ exchange: string; priority: number }[]> {
    return this.lookup(name, 'MX', () => this.resolver.resolveMx(name));
  }

  /** Runs a query; no records on a missing name, and on failure after a warning. */
  private async lookup<T>(
    name: string,
    type: string,
    query: () => Promise<T[]>,
  ): Promise<T[]> {
    try {
      return await query();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code && NOT_FOUND.has(code)) return [];
      logger.warn('DNS lookup failed', {
        name,
        type,
        code,
        servers: this.resolver.getServers(),
        error: error as Error,
      });
      return [];
    }
  }
}
