/**
 * The local stand-in of the email provider (SES v2 identities, tenants and
 * the account), for the local stack and the tests: no emulator covers these
 * calls. Its state is a JSON file, read fresh on every call because other
 * processes (the admin CLI) change it; DKIM and MAIL FROM verification look
 * the records up through the DnsResolver, as SES does through public DNS.
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import {
  NotFoundError,
  RuleViolationError,
  ServiceUnavailableError,
} from '../../errors.ts';
import type { Clock } from '../../ports.ts';
import type {
  DnsRecord,
  DnsResolver,
  EmailProvider,
  ProviderAccount,
  ProviderDomain,
  ProviderTenant,
  TenantSendingStatus,
} from '../../sending/provider.ts';
import { systemClock } from '../system.ts';
import { readJsonFile, updateJsonFile } from './json-file.ts';
import { NO_SIMULATION, SimulationRates } from './simulated-engagement.ts';

/** The MX exchange SES asks for on a custom MAIL FROM domain (region "local"). */
export const LOCAL_FEEDBACK_MX = 'feedback-smtp.local.amazonses.com';

/** The SPF record SES asks for on a custom MAIL FROM domain. */
export const SES_SPF_VALUE = 'v=spf1 include:amazonses.com ~all';

/** The quota of a fresh local account: SES production defaults. */
export const DEFAULT_QUOTA: ProviderAccount = {
  max24HourSend: 50_000,
  maxSendRate: 14,
  sentLast24Hours: 0,
};

const Quota = v.object({
  max24HourSend: v.number(),
  maxSendRate: v.number(),
  sentLast24Hours: v.number(),
});

const ProviderState = v.object({
  domains: v.optional(
    v.record(
      v.string(),
      v.object({
        mailFromDomain: v.string(),
        tokens: v.array(v.string()),
      }),
    ),
    {},
  ),
  tenants: v.optional(
    v.record(
      v.string(),
      v.object({
        sendingStatus: v.picklist(['ENABLED', 'DISABLED']),
        configurationSetAssociated: v.boolean(),
        domains: v.array(v.string()),
      }),
    ),
    {},
  ),
  outage: v.optional(v.boolean(), false),
  quota: v.optional(Quota, () => ({ ...DEFAULT_QUOTA })),
  /**
   * What the simulated SES makes of ordinary addresses' mail: the shares
   * that bounce, complain, are opened by Apple's privacy proxy or scanned
   * by a gateway (`simulated-engagement.ts`).
   */
  simulation: v.optional(SimulationRates, () => ({ ...NO_SIMULATION })),
  /**
   * Accepted sends per minute (ISO time of the minute's start → count),
   * kept for 24 hours: the rolling count of the account
   * (local-send-limits.ts writes them).
   */
  sent: v.optional(
    v.record(
      v.pipe(v.string(), v.isoTimestamp()),
      v.pipe(v.number(), v.integer(), v.minValue(0)),
    ),
    {},
  ),
});

/** The contents of the provider's state file. */
export type ProviderState = v.InferOutput<typeof ProviderState>;

/**
 * Validates the JSON of a state file (undefined: no file yet, a fresh
 * account), filling in what is missing.
 */
export const parseProviderState = (
  json: unknown,
  file: string,
): ProviderState => {
  const parsed = v.safeParse(ProviderState, json ?? {});
  if (!parsed.success) {
    throw new Error(
      `${file} is not a provider state file: ${v.summarize(parsed.issues)}`,
    );
  }
  return parsed.output;
};

/** Reads the state file; a missing file is a fresh account. */
export const readProviderState = async (file: string): Promise<ProviderState> =>
  parseProviderState(await readJsonFile(file), file);

/** Changes the state file under its lock. */
const updateProviderState = (
  file: string,
  change: (state: ProviderState) => void,
): Promise<ProviderState> =>
  updateJsonFile(file, (current) => {
    const state = parseProviderState(current, file);
    change(state);
    return state;
  });

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** The start of the minute of `ms` (ms since the epoch). */
export const minuteOf = (ms: number): number =>
  Math.floor(ms / MINUTE_MS) * MINUTE_MS;

/**
 * True when the minute that starts at `minuteMs` is within the 24 hours
 * before `nowMs`, in part at least: a send leaves the count between 24 h and
 * 24 h 1 min after it. (A minute after `nowMs`, left by a clock since reset,
 * counts until it ages out.)
 */
const isWithin24Hours = (minuteMs: number, nowMs: number): boolean =>
  minuteMs + MINUTE_MS > nowMs - DAY_MS;

/** The per-minute counts of a state file, by the minute's start in ms. */
export const sentPerMinute = (state: ProviderState): Map<number, number> =>
  new Map(
    Object.entries(state.sent).map(([minute, count]) => [
      Date.parse(minute),
      count,
    ]),
  );

/** How many sends of `perMinute` are within the 24 hours before `now`. */
export const countLast24Hours = (
  perMinute: Map<number, number>,
  now: Date,
): number => {
  let total = 0;
  for (const [minute, count] of perMinute) {
    if (isWithin24Hours(minute, now.getTime())) total += count;
  }
  return total;
};

/**
 * Adds accepted sends (per minute, by the minute's start in ms) to the state
 * file, drops the minutes older than 24 hours, and stores the count as of
 * `now` in `quota.sentLast24Hours` (what the mailbox's GetAccount answers).
 * Returns the state written.
 */
export const recordSent = (
  file: string,
  added: Map<number, number>,
  now: Date,
): Promise<ProviderState> =>
  updateProviderState(file, (state) => {
    const perMinute = sentPerMinute(state);
    for (const [minute, count] of added) {
      perMinute.set(minute, (perMinute.get(minute) ?? 0) + count);
    }
    state.sent = {};
    for (const [minute, count] of [...perMinute].sort(([a], [b]) => a - b)) {
      if (isWithin24Hours(minute, now.getTime())) {
        state.sent[new Date(minute).toISOString()] = count;
      }
    }
    state.quota.sentLast24Hours = countLast24Hours(perMinute, now);
  });

/** DNS names compare without case and without a trailing dot. */
const normalize = (name: string) =>
  name.trim().toLowerCase().replace(/\.$/, '');

/** Deterministic DKIM tokens, so a domain's records never change. */
const dkimTokens = (domain: string): string[] =>
  [0, 1, 2].map((i) =>
    createHash('sha256').update(`${domain}${i}`).digest('hex').slice(0, 32),
  );

/** What SES takes as a domain identity's name. */
const DOMAIN_NAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

const missing = (message: string) =>
  new NotFoundError('provider.resourceMissing', message);

const unavailable = () =>
  new ServiceUnavailableError(
    'provider.unavailable',
    'The email provider cannot be reached right now',
  );

/** The email provider of the local stack: SES's behaviour over a JSON file. */
export class LocalEmailProvider implements EmailProvider {
  /**
   * @param clock the time of the rolling 24 hours of `sentLast24Hours`
   * (the local stack's movable clock).
   */
  constructor(
    private readonly stateFile: string,
    private readonly dns: DnsResolver,
    private readonly clock: Clock = systemClock,
  ) {}

  async createDomain(
    domain: string,
    mailFromDomain: string,
  ): Promise<ProviderDomain> {
    const name = normalize(domain);
    if (!DOMAIN_NAME.test(name)) {
      // SES answers BadRequestException to a name that is not a domain.
      throw new RuleViolationError(
        'domain.refusedByProvider',
        `The email provider refused ${domain}: not a domain name`,
      );
    }
    await this.update((state) => {
      state.domains[name] ??= {
        mailFromDomain: normalize(mailFromDomain),
        tokens: dkimTokens(name),
      };
    });
    const created = await this.getDomain(name);
    if (!created) throw new Error(`the identity ${name} vanished`);
    return created;
  }

  async getDomain(domain: string): Promise<ProviderDomain | undefined> {
    const name = normalize(domain);
    const identity = (await this.read()).domains[name];
    if (!identity) return undefined;
    const { mailFromDomain, tokens } = identity;
    const dkim: DnsRecord[] = tokens.map((token) => ({
      type: 'CNAME',
      name: `${token}._domainkey.${name}`,
      value: `${token}.dkim.amazonses.com`,
      purpose: 'dkim',
    }));
    const mailFrom: DnsRecord[] = [
      {
        type: 'MX',
        name: mailFromDomain,
        value: LOCAL_FEEDBACK_MX,
        priority: 10,
        purpose: 'mail_from',
      },
      {
        type: 'TXT',
        name: mailFromDomain,
        value: SES_SPF_VALUE,
        purpose: 'mail_from',
      },
    ];
    const [dkimPublished, mxPublished] = await Promise.all([
      Promise.all(
        dkim.map(async (record) =>
          (await this.dns.resolveCname(record.name))
            .map(normalize)
            .includes(record.value),
        ),
      ),
      this.dns
        .resolveMx(mailFromDomain)
        .then((mx) =>
          mx.some((m) => normalize(m.exchange) === LOCAL_FEEDBACK_MX),
        ),
    ]);
    return {
      dkimStatus: dkimPublished.every(Boolean) ? 'SUCCESS' : 'PENDING',
      mailFromDomain,
      mailFromStatus: mxPublished ? 'SUCCESS' : 'PENDING',
      records: [...dkim, ...mailFrom],
    };
  }

  async deleteDomain(domain: string): Promise<void> {
    const name = normalize(domain);
    await this.update((state) => {
      delete state.domains[name];
      for (const tenant of Object.values(state.tenants)) {
        tenant.domains = tenant.domains.filter((d) => d !== name);
      }
    });
  }

  async ensureTenant(tenantName: string): Promise<void> {
    await this.update((state) => {
      const tenant = state.tenants[tenantName];
      if (tenant) {
        tenant.configurationSetAssociated = true;
        return;
      }
      state.tenants[tenantName] = {
        sendingStatus: 'ENABLED',
        configurationSetAssociated: true,
        domains: [],
      };
    });
  }

  async getTenant(tenantName: string): Promise<ProviderTenant | undefined> {
    const tenant = (await this.read()).tenants[tenantName];
    return tenant ? { ...tenant, domains: [...tenant.domains] } : undefined;
  }

  async associateDomain(tenantName: string, domain: string): Promise<void> {
    const name = normalize(domain);
    await this.update((state) => {
      // SES refuses an association with a missing tenant or identity.
      const tenant = state.tenants[tenantName];
      if (!tenant) throw missing(`no tenant ${tenantName}`);
      if (!state.domains[name]) throw missing(`no identity ${name}`);
      if (!tenant.domains.includes(name)) tenant.domains.push(name);
    });
  }

  async dissociateDomain(tenantName: string, domain: string): Promise<void> {
    const name = normalize(domain);
    await this.update((state) => {
      const tenant = state.tenants[tenantName];
      if (tenant) tenant.domains = tenant.domains.filter((d) => d !== name);
    });
  }

  async getAccount(): Promise<ProviderAccount> {
    const state = await this.read();
    return {
      ...state.quota,
      sentLast24Hours: countLast24Hours(sentPerMinute(state), this.clock.now()),
    };
  }

  /** The state, or the outage every call of the real provider would meet. */
  private async read(): Promise<ProviderState> {
    const state = await readProviderState(this.stateFile);
    if (state.outage) throw unavailable();
    return state;
  }

  private async update(change: (state: ProviderState) => void): Promise<void> {
    await updateProviderState(this.stateFile, (state) => {
      if (state.outage) throw unavailable();
      change(state);
    });
  }
}

/** Simulates (or ends) an outage: every provider call then fails. */
export const setOutage = async (file: string, on: boolean): Promise<void> => {
  await updateProviderState(file, (state) => {
    state.outage = on;
  });
};

/** Suspends (DISABLED) or reinstates (ENABLED) a tenant, as SES would. */
export const setTenantStatus = async (
  file: string,
  tenantName: string,
  status: TenantSendingStatus,
): Promise<void> => {
  await updateProviderState(file, (state) => {
    const tenant = state.tenants[tenantName];
    if (!tenant) {
      throw new Error(
        'no tenant for this organization yet: declare a domain first',
      );
    }
    tenant.sendingStatus = status;
  });
};

/**
 * Sets the rates of the simulation that are given (the others stay), and
 * answers them all.
 */
export const setSimulation = async (
  file: string,
  rates: Partial<SimulationRates>,
): Promise<SimulationRates> =>
  (
    await updateProviderState(file, (state) => {
      state.simulation = { ...state.simulation, ...rates };
    })
  ).simulation;

/** Sets the account's quota (what SES grants on a limit increase). */
export const setQuota = async (
  file: string,
  quota: { max24HourSend: number; maxSendRate: number },
): Promise<void> => {
  await updateProviderState(file, (state) => {
    state.quota = { ...state.quota, ...quota };
  });
};
