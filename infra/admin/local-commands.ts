/**
 * The admin CLI's local-only operations: they change the files of a local
 * data dir (the DNS server's records, the local email provider's state) to
 * play what, on AWS, the world does: publishing DNS records, SES suspending
 * a tenant, an SES outage, a quota increase, readers and gateways (the
 * simulation's rates). No running stack is needed.
 */
import * as v from 'valibot';
import {
  setOutage,
  setQuota,
  setSimulation,
  setTenantStatus,
} from '../../shared/adapters/local/local-email-provider.ts';
import type { SimulationRates } from '../../shared/adapters/local/simulated-engagement.ts';
import { ValidationError } from '../../shared/errors.ts';
import { tenantNameOf } from '../../shared/sending/isolation.ts';
import type { TenantSendingStatus } from '../../shared/sending/provider.ts';
import { parse } from '../../shared/validation.ts';
import {
  clearDnsRecords,
  DNS_RECORD_TYPES,
  type LocalDnsRecord,
  setDnsRecord,
} from '../local/dns-records.ts';

/** The files of a local data dir the local commands change. */
export interface LocalFiles {
  dnsRecordsFile: string;
  providerStateFile: string;
  /** The messages the simulated SES accepted (JSON lines). */
  sentLogFile: string;
  /** The data dir itself: its stack.json says how to reach a running stack. */
  dataDir: string;
  clockFile: string;
}

/** Whether `name` is a fully qualified domain name (a trailing dot allowed). */
export const isFqdn = (name: string): boolean => {
  const labels = name.replace(/\.$/, '').split('.');
  return (
    name.length <= 254 &&
    labels.length >= 2 &&
    labels.every((label) =>
      // Underscores: service labels such as _dmarc and _domainkey.
      /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/i.test(label),
    ) &&
    /[a-z]/i.test(labels.at(-1) ?? '')
  );
};

const Fqdn = v.pipe(
  v.string(),
  v.trim(),
  v.toLowerCase(),
  v.check(isFqdn, 'must be a fully qualified domain name'),
);

/** A decimal integer within bounds, given as a string. */
const IntegerString = (min: number, max: number, message: string) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, message),
    v.transform(Number),
    v.integer(message),
    v.minValue(min, message),
    v.maxValue(max, message),
  );

const DnsSetInput = v.object({
  name: Fqdn,
  type: v.pipe(
    v.string(),
    v.toUpperCase(),
    v.picklist(
      DNS_RECORD_TYPES,
      `must be one of ${DNS_RECORD_TYPES.join(', ')}`,
    ),
  ),
  value: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(4000, 'must be at most 4000 characters'),
  ),
  priority: v.optional(
    IntegerString(0, 65_535, 'must be an integer from 0 to 65535'),
  ),
});

/** Publishes a record on the local DNS server (replacing same name+type). */
export const setLocalDnsRecord = async (
  files: LocalFiles,
  input: { name?: string; type?: string; value?: string; priority?: string },
): Promise<{ name: string; type: string; value: string }> => {
  const { name, type, value, priority } = parse(DnsSetInput, input);
  const invalid = (field: string, message: string) =>
    new ValidationError(`Invalid input: ${field}: ${message}`, [
      { field, message },
    ]);
  if (type !== 'TXT' && !isFqdn(value)) {
    throw invalid('value', `must be a domain name for a ${type} record`);
  }
  if (priority !== undefined && type !== 'MX') {
    throw invalid('priority', 'only MX records have a priority');
  }
  const record: LocalDnsRecord = {
    name,
    type,
    value: type === 'TXT' ? value : value.toLowerCase(),
    ...(priority !== undefined ? { priority } : {}),
  };
  const set = await setDnsRecord(files.dnsRecordsFile, record);
  return { name: set.name, type: set.type, value: set.value };
};

/** Removes every record of the local DNS server. */
export const clearLocalDns = async (
  files: LocalFiles,
): Promise<{ cleared: true }> => {
  await clearDnsRecords(files.dnsRecordsFile);
  return { cleared: true };
};

const OrgInput = v.object({
  orgId: v.pipe(v.string(), v.uuid('must be an organization id')),
});

/** Suspends (DISABLED) or reinstates (ENABLED) an organization's tenant. */
export const setLocalTenantStatus = async (
  files: LocalFiles,
  input: { orgId?: string },
  sendingStatus: TenantSendingStatus,
): Promise<{ orgId: string; sendingStatus: TenantSendingStatus }> => {
  const { orgId } = parse(OrgInput, input);
  await setTenantStatus(
    files.providerStateFile,
    tenantNameOf(orgId),
    sendingStatus,
  );
  return { orgId, sendingStatus };
};

/** Starts or ends a simulated outage of the email provider. */
export const setLocalOutage = async (
  files: LocalFiles,
  outage: boolean,
): Promise<{ outage: boolean }> => {
  await setOutage(files.providerStateFile, outage);
  return { outage };
};

const QuotaInput = v.object({
  max24h: IntegerString(1, 1_000_000_000, 'must be a positive integer'),
  rate: IntegerString(1, 100_000, 'must be a positive integer'),
});

const RateString = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^(?:0(?:\.\d+)?|1(?:\.0+)?)$/, 'must be a share from 0 to 1'),
    v.transform(Number),
  ),
);

const SimulationInput = v.object({
  bounces: RateString,
  complaints: RateString,
  'machine-opens': RateString,
  'scanner-clicks': RateString,
});

/**
 * Sets the shares of the simulated SES's mail to ordinary addresses that
 * bounce, complain, are opened by Apple's privacy proxy or scanned by a
 * gateway (those given; the others stay), and answers them all.
 */
export const setLocalSimulation = async (
  files: LocalFiles,
  input: {
    bounces?: string;
    complaints?: string;
    'machine-opens'?: string;
    'scanner-clicks'?: string;
  },
): Promise<SimulationRates> => {
  const rates = parse(SimulationInput, input);
  return setSimulation(files.providerStateFile, {
    ...(rates.bounces !== undefined ? { bounces: rates.bounces } : {}),
    ...(rates.complaints !== undefined ? { complaints: rates.complaints } : {}),
    ...(rates['machine-opens'] !== undefined
      ? { machineOpens: rates['machine-opens'] }
      : {}),
    ...(rates['scanner-clicks'] !== undefined
      ? { scannerClicks: rates['scanner-clicks'] }
      : {}),
  });
};

/** Sets the account's sending quota. */
export const setLocalQuota = async (
  files: LocalFiles,
  input: { max24h?: string; rate?: string },
): Promise<{ max24HourSend: number; maxSendRate: number }> => {
  const { max24h, rate } = parse(QuotaInput, input);
  const quota = { max24HourSend: max24h, maxSendRate: rate };
  await setQuota(files.providerStateFile, quota);
  return quota;
};
