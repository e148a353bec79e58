/**
 * Application logic of a contact's own events: what one committed write of
 * a contact (the item before and after it, as the table's change stream
 * delivers it) says happened to it — a status entered and how, a sign-up,
 * a confirmation with its consent, each tag gained or lost, the custom
 * field values changed. Called once per record the stream delivers (never
 * by the code that writes), so every write path is covered, an import's
 * too, and a crash between a write and its events loses none.
 */

import type { ContactWrite } from '../audience/facts.ts';
import type { ConsentRecord, Contact } from '../audience/model.ts';
import type { FieldValue } from '../fields/model.ts';
import {
  type ActivityEvent,
  activityId,
  type ContactActivityType,
  type FieldChange,
} from './model.ts';
import type { ActivityDeps } from './ports.ts';
import { withoutAddresses } from './without-addresses.ts';

/**
 * The consent a write recorded: the newest of `after` that `before` did
 * not hold (a sign-up through a hosted page appends one).
 */
export const newConsentOf = (
  before: Contact | undefined,
  after: Contact,
): ConsentRecord | undefined => {
  const last = after.consents?.at(-1);
  const known = (before?.consents ?? []).some(
    (consent) =>
      consent.pageId === last?.pageId &&
      consent.signedUpAt === last?.signedUpAt,
  );
  return last && !known ? last : undefined;
};

/** The consent a confirmation noted: the one it dated. */
const confirmedConsentOf = (after: Contact): ConsentRecord | undefined =>
  after.consents?.findLast(
    (consent) =>
      consent.confirmedAt !== undefined &&
      consent.confirmedAt === after.confirmedAt,
  );

/** The values that differ between two sets of field values, by key. */
const fieldChangesOf = (
  before: Record<string, FieldValue> = {},
  after: Record<string, FieldValue> = {},
): FieldChange[] =>
  [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .sort()
    .flatMap((key) => {
      const from = before[key] ?? null;
      const to = after[key] ?? null;
      return from === to ? [] : [{ key, from, to }];
    });

/** What an event of a write carries besides its type. */
type Detail = Omit<ActivityEvent, 'id' | 'type' | 'at' | 'via'>;

/**
 * An event's details without the contact's address, where text from
 * outside could carry it: a sign-up's referrer, a text field's value.
 */
const withoutAddress = (detail: Detail, email: string): Detail => {
  const text = (value: string) => withoutAddresses(value, [email]);
  const value = (held: FieldValue | null) =>
    typeof held === 'string' ? text(held) : held;
  const { consent, changes } = detail;
  return {
    ...detail,
    ...(consent?.referrer
      ? { consent: { ...consent, referrer: text(consent.referrer) } }
      : {}),
    ...(changes
      ? {
          changes: changes.map((change) => ({
            key: change.key,
            from: value(change.from),
            to: value(change.to),
          })),
        }
      : {}),
  };
};

/** The status event of a write, if its status (or a new sign-up) is one. */
const statusEventOf = ({
  before,
  after,
  origin,
}: Omit<ContactWrite, 'orgId'>): [ContactActivityType, Detail] | undefined => {
  const consent = newConsentOf(before, after);
  const signedUp: [ContactActivityType, Detail] = [
    'signed_up',
    consent ? { consent } : {},
  ];
  if (before?.status === after.status) {
    // A sign-up again on a hosted page keeps the status it found.
    return consent ? signedUp : undefined;
  }
  switch (after.status) {
    case 'pending':
      return signedUp;
    case 'subscribed': {
      if (origin !== 'confirmation') return ['subscribed', {}];
      const confirmed = confirmedConsentOf(after);
      return [
        'confirmed',
        {
          ...(confirmed ? { consent: confirmed } : {}),
          ...(after.confirmedIp ? { ip: after.confirmedIp } : {}),
        },
      ];
    }
    case 'unsubscribed':
      return ['unsubscribed', {}];
    default:
      return ['suppressed', { status: after.status }];
  }
};

/**
 * The events of one committed write, in this order: the status entered
 * (or a sign-up), the field values changed, each tag gained, each tag
 * lost. Each is dated by the write (`updatedAt`, the writer's clock) and
 * identified by the contact's version and its place in the write, so the
 * same record delivered again gives the same events. An import's write
 * counts as any other: the activity says it came by `import`. The
 * contact's address appears in none (a referrer or a text value that
 * holds it reads `[email]`).
 */
export const contactActivityOf = ({
  before,
  after,
  origin,
}: Omit<ContactWrite, 'orgId'>): ActivityEvent[] => {
  const found: [ContactActivityType, Detail][] = [];
  const status = statusEventOf({
    ...(before ? { before } : {}),
    after,
    origin,
  });
  if (status) found.push(status);
  const changes = fieldChangesOf(before?.fields, after.fields);
  if (changes.length) found.push(['fields_changed', { changes }]);
  for (const tagId of after.tagIds) {
    if (!before?.tagIds.includes(tagId)) found.push(['tagged', { tagId }]);
  }
  for (const tagId of before?.tagIds ?? []) {
    if (!after.tagIds.includes(tagId)) found.push(['untagged', { tagId }]);
  }
  const version = String(after.version).padStart(10, '0');
  return found.map(([type, detail], index) => ({
    id: activityId(
      after.updatedAt,
      `c${version}.${String(index).padStart(3, '0')}`,
    ),
    type,
    at: new Date(after.updatedAt).toISOString(),
    ...(origin === 'change' ? {} : { via: origin }),
    ...withoutAddress(detail, after.email),
  }));
};

/**
 * Records the events of one committed write in the contact's activity.
 * Idempotent: a record delivered again writes the same items over
 * themselves.
 */
export const recordContactActivity = async (
  deps: Pick<ActivityDeps, 'activity'>,
  write: ContactWrite,
): Promise<ActivityEvent[]> => {
  const events = contactActivityOf(write);
  if (events.length > 0) {
    await deps.activity.record(write.orgId, write.after.id, events);
  }
  return events;
};
