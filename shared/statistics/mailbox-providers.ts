/**
 * Application logic: the mailbox provider of an address — Gmail,
 * Microsoft, Yahoo, Apple, or other — from its domain: a maintained table
 * of the consumer domains first, then, for any other domain, who receives
 * its mail (its MX: Google Workspace, Microsoft 365, Yahoo's and iCloud's
 * servers). MX answers are remembered a day per container; a domain
 * without an answer (no MX, or DNS failing) is `other`.
 */
import type { MailboxProvider } from './counters.ts';
import type { MxResolver } from './ports.ts';

/**
 * Consumer domains of each provider. Microsoft's and Yahoo's country
 * domains are their largest markets'; AOL's mail runs on Yahoo's (Yahoo
 * Inc. owns both), while yahoo.co.jp is another company's and stays out.
 */
const CONSUMER_DOMAINS: Record<Exclude<MailboxProvider, 'other'>, string[]> = {
  gmail: ['gmail.com', 'googlemail.com'],
  microsoft: [
    'outlook.com',
    'hotmail.com',
    'live.com',
    'msn.com',
    'passport.com',
    'windowslive.com',
    ...['co.uk', 'fr', 'de', 'it', 'es', 'be', 'nl', 'com.br', 'jp'].map(
      (tld) => `hotmail.${tld}`,
    ),
    ...['co.uk', 'fr', 'de', 'it', 'nl', 'com.au', 'ca'].map(
      (tld) => `live.${tld}`,
    ),
    ...['fr', 'de', 'it', 'es', 'co.uk', 'jp', 'com.br'].map(
      (tld) => `outlook.${tld}`,
    ),
  ],
  yahoo: [
    'yahoo.com',
    'ymail.com',
    'rocketmail.com',
    'aol.com',
    'aim.com',
    ...['co.uk', 'fr', 'de', 'it', 'es', 'ca', 'com.au', 'com.br', 'in'].map(
      (tld) => `yahoo.${tld}`,
    ),
  ],
  apple: ['icloud.com', 'me.com', 'mac.com'],
};

const BY_DOMAIN = new Map<string, MailboxProvider>(
  Object.entries(CONSUMER_DOMAINS).flatMap(([provider, domains]) =>
    domains.map((domain) => [domain, provider as MailboxProvider] as const),
  ),
);

/**
 * The receiving servers of each provider, by the end of an MX host: Google
 * Workspace (`aspmx.l.google.com`, `*.googlemail.com`), Microsoft 365
 * (`*.mail.protection.outlook.com`) and Outlook.com, Yahoo and AOL
 * (`*.yahoodns.net`), iCloud (`*.mail.icloud.com`).
 */
const MX_SUFFIXES: readonly [string, MailboxProvider][] = [
  ['google.com', 'gmail'],
  ['googlemail.com', 'gmail'],
  ['outlook.com', 'microsoft'],
  ['hotmail.com', 'microsoft'],
  ['yahoodns.net', 'yahoo'],
  ['icloud.com', 'apple'],
];

/** The domain of an address, lower case (empty when it has none). */
export const domainOf = (address: string): string => {
  const at = address.lastIndexOf('@');
  return at < 0
    ? ''
    : address
        .slice(at + 1)
        .trim()
        .toLowerCase()
        .replace(/\.$/, '');
};

/** The provider of a consumer domain of the table, if it is one. */
export const providerOfDomain = (domain: string): MailboxProvider | undefined =>
  BY_DOMAIN.get(domain.toLowerCase());

/** The provider whose servers an MX host is, or `other`. */
export const providerOfMx = (exchange: string): MailboxProvider => {
  const host = exchange.trim().toLowerCase().replace(/\.$/, '');
  return (
    MX_SUFFIXES.find(
      ([suffix]) => host === suffix || host.endsWith(`.${suffix}`),
    )?.[1] ?? 'other'
  );
};

/** A domain name worth asking DNS about. */
const LOOKS_LIKE_DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9-]{1,63}\.)+[a-z]{2,63}$/;

/**
 * The providers of addresses, with the MX answers of this container
 * remembered (a day, at most 10,000 domains; failures not remembered).
 */
export class MailboxProviders {
  private readonly known = new Map<
    string,
    { provider: MailboxProvider; until: number }
  >();

  constructor(
    private readonly ttlMs = 24 * 3600_000,
    private readonly max = 10_000,
  ) {}

  /**
   * The provider of an address: its consumer domain's, else its MX's
   * (the most preferred host), else `other`. Without a resolver (a caller
   * with no DNS), the table alone.
   */
  async of(
    deps: { mx?: MxResolver; clock: { now(): Date } },
    address: string,
  ): Promise<MailboxProvider> {
    const domain = domainOf(address);
    const listed = providerOfDomain(domain);
    if (listed) return listed;
    if (!deps.mx || !LOOKS_LIKE_DOMAIN.test(domain)) return 'other';
    const now = deps.clock.now().getTime();
    const found = this.known.get(domain);
    if (found && found.until > now) return found.provider;
    const hosts = await deps.mx.resolveMx(domain).catch(() => []);
    const first = [...hosts].sort((a, b) => a.priority - b.priority)[0];
    if (!first) return 'other';
    const provider = providerOfMx(first.exchange);
    if (this.known.size >= this.max) this.known.clear();
    this.known.set(domain, { provider, until: now + this.ttlMs });
    return provider;
  }
}
