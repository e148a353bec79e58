/**
 * The records the local DNS server answers, in a JSON file
 * (`$LOCAL_DATA_DIR/dns.json`): `{ records: [{ name, type, value, priority? }] }`.
 * The admin CLI and the tests write it; the server re-reads it when it changes.
 */
import * as v from 'valibot';
import {
  readJsonFile,
  updateJsonFile,
} from '../../shared/adapters/local/json-file.ts';

/** The record types the local DNS server answers. */
export const DNS_RECORD_TYPES = ['TXT', 'CNAME', 'MX'] as const;

const LocalDnsRecord = v.object({
  name: v.string(),
  type: v.picklist(DNS_RECORD_TYPES),
  value: v.string(),
  priority: v.optional(v.number()),
});

const RecordsFile = v.object({
  records: v.optional(v.array(LocalDnsRecord), []),
});

/** One record of the local DNS server. */
export type LocalDnsRecord = v.InferOutput<typeof LocalDnsRecord>;

/** DNS names compare without case and without a trailing dot. */
export const normalizeDnsName = (name: string): string =>
  name.trim().toLowerCase().replace(/\.$/, '');

const parseRecords = (file: string, json: unknown): LocalDnsRecord[] => {
  const parsed = v.safeParse(RecordsFile, json ?? {});
  if (!parsed.success) {
    throw new Error(
      `${file} is not a DNS records file: ${v.summarize(parsed.issues)}`,
    );
  }
  return parsed.output.records;
};

/** The records of a file; none when the file does not exist. */
export const readDnsRecords = async (file: string): Promise<LocalDnsRecord[]> =>
  parseRecords(file, await readJsonFile(file));

/**
 * Publishes a record, replacing every record of the same name and type (so
 * setting a value twice leaves one record).
 */
export const setDnsRecord = async (
  file: string,
  record: LocalDnsRecord,
): Promise<LocalDnsRecord> => {
  const entry: LocalDnsRecord = {
    name: normalizeDnsName(record.name),
    type: record.type,
    value: record.value,
    ...(record.type === 'MX' ? { priority: record.priority ?? 10 } : {}),
  };
  await updateJsonFile(file, (current) => ({
    records: [
      ...parseRecords(file, current).filter(
        (r) =>
          !(normalizeDnsName(r.name) === entry.name && r.type === entry.type),
      ),
      entry,
    ],
  }));
  return entry;
};

/** Removes every record. */
export const clearDnsRecords = async (file: string): Promise<void> => {
  await updateJsonFile(file, () => ({ records: [] }));
};

/** Creates an empty records file unless one exists. */
export const ensureDnsRecordsFile = async (file: string): Promise<void> => {
  if ((await readJsonFile(file)) !== undefined) return;
  await updateJsonFile(file, (current) => current ?? { records: [] });
};
