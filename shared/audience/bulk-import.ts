/**
 * Application logic of the bulk import (spec, "Audience: bulk import"): up to
 * 500 contacts upserted by email into one list. It sends nothing, queues
 * nothing and starts no automation; one bad line rejects only itself.
 */
import * as v from 'valibot';
import { ConflictError, PayloadTooLargeError } from '../errors.ts';
import type { Field } from '../fields/model.ts';
import {
  definitionsOf,
  fieldValueIssues,
  valuesSizeIssue,
  withFieldValues,
  withValuesApplied,
} from '../fields/values.ts';
import { retryOnConflict } from '../retry.ts';
import { Count, fieldIssues } from '../validation.ts';
import {
  ImportEntry,
  type ImportEntryInput,
  MAX_IMPORT_ENTRIES,
  MAX_TAGS_PER_CONTACT,
} from './contact.schema.ts';
import { requireList } from './lists.ts';
import {
  type Contact,
  type ContactStatus,
  tagNameKey,
  withNamesGiven,
} from './model.ts';
import type {
  ContactChange,
  AudienceDeps as Deps,
  Suppression,
} from './ports.ts';
import {
  SUPPRESSION_OF_STATUS,
  type SuppressedStatus,
  suppressAddresses,
  suppressedStatuses,
} from './suppressed.ts';
import { resolveTags } from './tags.ts';

/** One refused line of an import. */
export const ImportError = v.pipe(
  v.object({
    index: v.pipe(
      Count,
      v.description('Position of the line in the submitted array, from 0'),
    ),
    email: v.pipe(
      v.string(),
      v.description(
        "The line's email: as submitted when the line does not validate (empty when it has none), normalized otherwise",
      ),
    ),
    reason: v.pipe(
      v.string(),
      v.description(
        'Why the line was refused, of the form `<field>: <message>`',
      ),
    ),
  }),
  v.title('ImportError'),
);
export type ImportError = v.InferOutput<typeof ImportError>;

/** The report of an import: total = created + updated + rejected. */
export const ImportReport = v.pipe(
  v.object({
    total: v.pipe(
      Count,
      v.description('Lines submitted; equals created + updated + rejected'),
    ),
    created: v.pipe(
      Count,
      v.description('Contacts that did not exist in the list'),
    ),
    updated: v.pipe(
      Count,
      v.description(
        'Lines that completed a contact already there (or created by an earlier line of the import), without a status change',
      ),
    ),
    rejected: v.pipe(Count, v.description('Lines refused')),
    errors: v.pipe(
      v.array(ImportError),
      v.description('One entry per refused line, in submission order'),
    ),
  }),
  v.title('ImportReport'),
);
export type ImportReport = v.InferOutput<typeof ImportReport>;

/** The lines of one email, merged in submission order. */
interface MergedLine {
  email: string;
  indices: number[];
  entry: ImportEntryInput;
}

const CONSENT_FIELDS = [
  'optinAt',
  'optinIp',
  'confirmedAt',
  'confirmedIp',
] as const;

/** Distinct tag names one import may name (each new one is a write). */
export const MAX_TAGS_PER_IMPORT = 100;

/**
 * Imports contacts into a list and reports line by line.
 *
 * Duplicate emails within one import behave as if the lines were applied
 * one after the other: the first line creates the contact (with its status)
 * or updates it, every later line updates it (names and consent fields it
 * provides win, tags add up) and counts as updated.
 */
export const importContacts = async (
  deps: Pick<
    Deps,
    'lists' | 'contacts' | 'tags' | 'ids' | 'clock' | 'delivery' | 'fields'
  >,
  orgId: string,
  listId: string,
  lines: unknown[],
): Promise<ImportReport> => {
  // 1. The size limit first: over it, nothing is read or written.
  if (lines.length > MAX_IMPORT_ENTRIES) {
    throw new PayloadTooLargeError(
      'import.tooLarge',
      `A bulk import takes at most ${MAX_IMPORT_ENTRIES} contacts; this one has ${lines.length}. Split it into several imports.`,
    );
  }
  await requireList(deps, orgId, listId);

  // 2. Each line on its own: a bad line rejects only itself. What the
  // lines will meet is read first (read only: nothing is created yet), so
  // that the tag cap of a contact is judged line by line, in order.
  const checkedLines = lines.map(checkLine);
  const valid = checkedLines.flatMap((c) => ('entry' in c ? [c.entry] : []));
  // Read at once: the contacts, the tags they name, and which addresses
  // are suppressed (step 4).
  const emails = valid.map((entry) => entry.email);
  const [existingTags, knownTags, suppressed, definitions] = await Promise.all([
    deps.contacts.getMany(orgId, listId, emails),
    deps.tags.findByNames(orgId, [
      ...new Set(valid.flatMap((entry) => entry.tags ?? [])),
    ]),
    suppressedStatuses(deps, orgId, emails),
    // The field definitions, when a line sets values: one Query.
    valid.some((entry) => entry.fields)
      ? definitionsOf(deps, orgId)
      : new Map<string, Field>(),
  ]);
  // A tag as the contact will carry it: its id, or its name while new.
  const tagIdentity = (name: string) =>
    knownTags.get(tagNameKey(name))?.id ?? `new:${tagNameKey(name)}`;
  const carried = new Map<string, Set<string>>();

  const errors: ImportError[] = [];
  const merged = new Map<string, MergedLine>();
  const tagKeys = new Set<string>();
  checkedLines.forEach((checked, index) => {
    if ('reason' in checked) {
      errors.push({
        index,
        email: rawEmail(lines[index]),
        reason: checked.reason,
      });
      return;
    }
    const entry = checked.entry;
    // Each new tag is a write of its own: bound them, line by line.
    const newKeys = new Set(
      (entry.tags ?? []).map(tagNameKey).filter((key) => !tagKeys.has(key)),
    );
    if (tagKeys.size + newKeys.size > MAX_TAGS_PER_IMPORT) {
      errors.push({
        index,
        email: entry.email,
        reason: `tags: one import names at most ${MAX_TAGS_PER_IMPORT} distinct tags; import this line in another batch`,
      });
      return;
    }
    // The contact's tags after this line: at most MAX_TAGS_PER_CONTACT.
    const before =
      carried.get(entry.email) ??
      new Set(existingTags.get(entry.email)?.tagIds ?? []);
    const after = new Set([...before, ...(entry.tags ?? []).map(tagIdentity)]);
    if (after.size > MAX_TAGS_PER_CONTACT && after.size > before.size) {
      errors.push({
        index,
        email: entry.email,
        reason: `tags: a contact carries at most ${MAX_TAGS_PER_CONTACT} tags; this line would bring ${entry.email} to ${after.size}`,
      });
      return;
    }
    const previous = merged.get(entry.email);
    // Values of the organization's fields, each of its type; the
    // contact's values after this line within their size.
    if (entry.fields) {
      const [issue] = fieldValueIssues(definitions, entry.fields);
      const size = issue
        ? undefined
        : valuesSizeIssue(existingTags.get(entry.email)?.fields, {
            ...previous?.entry.fields,
            ...entry.fields,
          });
      const refusal = issue ? `${issue.field}: ${issue.message}` : size;
      if (refusal) {
        errors.push({ index, email: entry.email, reason: refusal });
        return;
      }
    }
    carried.set(entry.email, after);
    for (const key of newKeys) tagKeys.add(key);
    merged.set(
      entry.email,
      previous
        ? {
            email: entry.email,
            indices: [...previous.indices, index],
            entry: mergeLines(previous.entry, entry),
          }
        : { email: entry.email, indices: [index], entry },
    );
  });

  // 3. Tags by name, created in the organization when missing.
  const tagIdsByKey = new Map(
    (
      await resolveTags(
        deps,
        orgId,
        [...merged.values()].flatMap((m) => m.entry.tags ?? []),
      )
    ).map((tag) => [tagNameKey(tag.name), tag.id]),
  );
  const tagIdsOf = (entry: ImportEntryInput) =>
    (entry.tags ?? []).flatMap((name) => {
      const id = tagIdsByKey.get(tagNameKey(name));
      return id ? [id] : [];
    });

  // 4. Addresses that bounced for good or complained are created as such
  // (`suppressed`, read in step 2).

  // 5. Read, build and store; re-read and rebuild whatever raced.
  let created = 0;
  /** Lines that say bounced or complained, of contacts that are (step 6). */
  const suppressedByLine: Suppression[] = [];
  let updated = 0;
  let pending = [...merged.values()];
  const stillRacing = new ConflictError(
    'contact.changed',
    'Contacts kept changing during the import',
  );
  // The first pass writes over the contacts read in step 2: every write is
  // conditional on the version read, so a contact changed since fails its
  // write and is read again here, on the next pass.
  let firstRead: Map<string, Contact> | undefined = existingTags;
  await retryOnConflict(async (retryable) => {
    if (!pending.length) return;
    const existing =
      firstRead ??
      (await deps.contacts.getMany(
        orgId,
        listId,
        pending.map((m) => m.email),
      ));
    firstRead = undefined;
    const now = deps.clock.now().toISOString();
    const changes = pending.map(
      (line): ContactChange & { line: MergedLine } => {
        const before = existing.get(line.email);
        return {
          line,
          // Marks the stored contacts: this write starts no automation.
          origin: 'import',
          ...(before ? { before } : {}),
          after: before
            ? completeContact(before, line.entry, tagIdsOf(line.entry), now)
            : newContact(
                deps.ids.id(),
                listId,
                line.entry,
                tagIdsOf(line.entry),
                now,
                suppressed.get(line.email),
              ),
        };
      },
    );
    const conflicted = new Set(await deps.contacts.saveMany(orgId, changes));
    for (const change of changes) {
      if (conflicted.has(change)) continue;
      const lineCount = change.line.indices.length;
      created += change.before ? 0 : 1;
      // A line saying bounced or complained whose contact is so: again on
      // a retry too, so an import cut short is completed by running it
      // again (every step is idempotent).
      const reason = SUPPRESSION_OF_STATUS[change.after.status];
      const stated = change.line.entry.status;
      if (reason && stated && SUPPRESSION_OF_STATUS[stated]) {
        suppressedByLine.push({
          email: change.line.email,
          reason,
          at: now,
          source: 'import',
        });
      }
      updated += change.before ? lineCount : lineCount - 1;
    }
    pending = changes.filter((c) => conflicted.has(c)).map((c) => c.line);
    if (pending.length) retryable(stillRacing);
  }).catch((error) => {
    // Lines still racing after the budget are reported, not thrown.
    if (error !== stillRacing) throw error;
  });
  for (const line of pending) {
    for (const index of line.indices) {
      errors.push({
        index,
        email: line.email,
        reason:
          'email: the contact kept changing during the import; retry this line',
      });
    }
  }

  // 6. An address imported as bounced or complained is suppressed in the
  // organization as an SES report would: every list, every later send.
  await suppressAddresses(deps, orgId, suppressedByLine);

  errors.sort((a, b) => a.index - b.index);
  return {
    total: lines.length,
    created,
    updated,
    rejected: errors.length,
    errors,
  };
};

const rawEmail = (line: unknown): string => {
  const email = (line as { email?: unknown } | null)?.email;
  return typeof email === 'string' ? email : '';
};

const checkLine = (
  line: unknown,
): { entry: ImportEntryInput } | { reason: string } => {
  if (typeof line !== 'object' || line === null || Array.isArray(line)) {
    return { reason: 'entry: must be an object' };
  }
  if ('doubleOptIn' in line) {
    return {
      reason:
        'doubleOptIn: not accepted in a bulk import, which sends nothing; use POST /lists/{listId}/contacts',
    };
  }
  const result = v.safeParse(ImportEntry, line);
  if (result.success) return { entry: result.output };
  const [first] = fieldIssues(result.issues);
  return {
    reason: first ? `${first.field}: ${first.message}` : 'entry: invalid',
  };
};

/** A later line of the same email, applied over the earlier ones. */
const mergeLines = (
  earlier: ImportEntryInput,
  later: ImportEntryInput,
): ImportEntryInput => {
  const merged: ImportEntryInput = { ...earlier };
  for (const field of ['firstName', 'lastName', ...CONSENT_FIELDS] as const) {
    if (later[field] !== undefined) merged[field] = later[field];
  }
  const tags = [...(earlier.tags ?? []), ...(later.tags ?? [])];
  if (tags.length) merged.tags = tags;
  if (later.fields) merged.fields = { ...earlier.fields, ...later.fields };
  // The status applies on creation only, i.e. from the first line.
  return merged;
};

const newContact = (
  id: string,
  listId: string,
  entry: ImportEntryInput,
  tagIds: string[],
  now: string,
  suppressed?: SuppressedStatus,
): Contact => {
  // A suppressed address takes its suppression's status, whatever the line.
  const status: ContactStatus = suppressed ?? entry.status ?? 'subscribed';
  return {
    id,
    listId,
    email: entry.email,
    ...(entry.firstName ? { firstName: entry.firstName } : {}),
    ...(entry.lastName ? { lastName: entry.lastName } : {}),
    ...withFieldValues(undefined, entry.fields),
    status,
    tagIds: [...new Set(tagIds)].sort(),
    ...consentOf(entry),
    // Imported subscribers have joined, but no automation starts for them.
    ...(status === 'subscribed' ? { joinedAt: now } : {}),
    ...(status === 'unsubscribed' ? { unsubscribedAt: now } : {}),
    createdAt: now,
    updatedAt: now,
    version: 0,
  };
};

/** An existing contact completed by a line: its status never changes. */
const completeContact = (
  before: Contact,
  entry: ImportEntryInput,
  tagIds: string[],
  now: string,
): Contact =>
  withValuesApplied(
    {
      ...withNamesGiven(
        before,
        (['firstName', 'lastName'] as const).filter((name) => entry[name]),
      ),
      ...(entry.firstName ? { firstName: entry.firstName } : {}),
      ...(entry.lastName ? { lastName: entry.lastName } : {}),
      ...consentOf(entry),
      tagIds: [...new Set([...before.tagIds, ...tagIds])].sort(),
      updatedAt: now,
    },
    before.fields,
    entry.fields,
  );

const consentOf = (entry: ImportEntryInput) =>
  Object.fromEntries(
    CONSENT_FIELDS.flatMap((field) =>
      entry[field] === undefined ? [] : [[field, entry[field]]],
    ),
  ) as Pick<Contact, (typeof CONSENT_FIELDS)[number]>;
