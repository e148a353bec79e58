/**
 * Application logic: the webhook events of one committed write of a
 * contact, as the `contacts` stream consumer reads it (the item before and
 * after). What happened is what the contact's activity says happened (the
 * same derivation, `contactActivityOf`), plus its creation, a sign-up
 * form's submission and its removal. Each event carries the contact as
 * the API shows it after the write; a removal names only ids, since the
 * same removal may be a person's erasure.
 */
import {
  contactActivityOf,
  newConsentOf,
} from '../activity/contact-activity.ts';
import type { ActivityEvent } from '../activity/model.ts';
import { contactView } from '../audience/contact-view.ts';
import type { Contact, ContactWriteOrigin, TagRef } from '../audience/model.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import {
  type WebhookEvent,
  type WebhookEventType,
  webhookEventId,
} from './events.ts';
import type { WebhookEmitDeps } from './ports.ts';

/** One committed write of a contact, or its removal (no `after`). */
export interface ContactRecord {
  orgId: string;
  before?: Contact;
  after?: Contact;
  origin?: ContactWriteOrigin;
  /**
   * When the write was made, as the change stream says (to the second):
   * a removal's date, which leaves no item to carry one.
   */
  writtenAt?: string;
}

/** An event found, before the contact's view is built. */
interface Found {
  type: WebhookEventType;
  /** What the event comes from, unique among the contact's events. */
  from: string;
  at: string;
  /** What the event says besides the contact. */
  detail: Record<string, unknown>;
}

/** How a write came, as events say it: null when the write did not say. */
const viaOf = (origin: ContactWriteOrigin | undefined) =>
  origin === undefined || origin === 'change' ? null : origin;

/** The events an activity event of the write stands for. */
const fromActivity = (
  event: ActivityEvent,
  via: string | null,
  tags: ReadonlyMap<string, TagRef>,
): Omit<Found, 'from' | 'at'> | undefined => {
  const tag = (id: string | undefined) =>
    id ? (tags.get(id) ?? { id, name: null }) : null;
  switch (event.type) {
    case 'subscribed':
      return { type: 'contact.subscribed', detail: { via, confirmed: false } };
    case 'confirmed':
      return { type: 'contact.subscribed', detail: { via, confirmed: true } };
    case 'unsubscribed':
      return { type: 'contact.unsubscribed', detail: { via } };
    case 'suppressed':
      return event.status === 'complained'
        ? { type: 'contact.complained', detail: { via } }
        : { type: 'contact.bounced', detail: { via } };
    case 'tagged':
      return { type: 'contact.tagged', detail: { tag: tag(event.tagId) } };
    case 'untagged':
      return { type: 'contact.untagged', detail: { tag: tag(event.tagId) } };
    case 'fields_changed':
      return { type: 'contact.updated', detail: { changes: event.changes } };
    default:
      // A sign-up is told by its consent (below), a pending status by none.
      return undefined;
  }
};

/**
 * When a contact was removed: when the stream says the removal was
 * written, never before the contact's last write (the stream's time is
 * cut to the second); its last write when the stream does not say.
 */
const removalDate = (before: Contact, writtenAt: string | undefined) => {
  const last = new Date(before.updatedAt).toISOString();
  return writtenAt && writtenAt > last ? writtenAt : last;
};

/**
 * The events of one write, in order: created, the status entered (or a
 * sign-up), the field values, each tag gained and lost. Pure: the tags
 * named are looked up in `tags` (a tag deleted meanwhile has a null name).
 */
export const contactEventsOf = (
  { before, after, origin, writtenAt }: ContactRecord,
  tags: ReadonlyMap<string, TagRef> = new Map(),
): (Found & { contact?: Contact })[] => {
  if (!after) {
    if (!before) return [];
    return [
      {
        type: 'contact.deleted',
        from: `contact:${before.id}:removed:${before.version}`,
        at: removalDate(before, writtenAt),
        detail: { contactId: before.id, listId: before.listId },
      },
    ];
  }
  const via = viaOf(origin);
  const at = new Date(after.updatedAt).toISOString();
  const found: Found[] = [];
  if (!before) {
    found.push({
      type: 'contact.created',
      from: `contact:${after.id}:created:${after.createdAt}`,
      at: new Date(after.createdAt).toISOString(),
      detail: { via },
    });
  }
  const consent = newConsentOf(before, after);
  if (consent) {
    found.push({
      type: 'signup.submitted',
      from: `contact:${after.id}:v${after.version}:signup`,
      at,
      detail: { pageId: consent.pageId, signedUpAt: consent.signedUpAt },
    });
  }
  for (const event of contactActivityOf({
    ...(before ? { before } : {}),
    after,
    origin: origin ?? 'change',
  })) {
    const derived = fromActivity(event, via, tags);
    if (derived)
      found.push({ ...derived, from: `contact:${after.id}:${event.id}`, at });
  }
  return found.map((event) => ({ ...event, contact: after }));
};

/**
 * The webhook events of one contact record that an endpoint of its
 * organization takes: nothing read when none takes any of them. The tags
 * the contact carries are read once for its view.
 */
export const contactWebhookEvents = async (
  deps: WebhookEmitDeps & Pick<AudienceDeps, 'tags'>,
  record: ContactRecord,
): Promise<WebhookEvent[]> => {
  const wanted = await deps.webhookEvents.wanted(record.orgId);
  if (wanted.size === 0) return [];
  const named = [
    ...new Set([
      ...(record.after?.tagIds ?? []),
      ...(record.before?.tagIds ?? []),
    ]),
  ];
  const candidates = contactEventsOf(record).filter((event) =>
    wanted.has(event.type),
  );
  if (candidates.length === 0) return [];
  const tags =
    named.length > 0
      ? await deps.tags.refs(record.orgId, named)
      : new Map<string, TagRef>();
  const events = contactEventsOf(record, tags)
    .filter((event) => wanted.has(event.type))
    .map(
      ({ type, from, at, detail, contact }): WebhookEvent => ({
        id: webhookEventId(record.orgId, type, from),
        type,
        orgId: record.orgId,
        occurredAt: at,
        data:
          type === 'contact.deleted' || !contact
            ? detail
            : { contact: contactView(contact, tags), ...detail },
      }),
    );
  return events;
};
