/**
 * Application logic: the export of a person (GDPR Art. 15 and 20). A
 * person is one address across the organization's lists; an export holds
 * everything the organization keeps about it, read from the store at the
 * moment of the call, and keeps no copy. Agnostic to how it is called and
 * where data is stored.
 */
import { activityView, allActivityOf } from '../activity/listing.ts';
import type { Suppression } from '../audience/ports.ts';
import { NotFoundError, PayloadTooLargeError } from '../errors.ts';
import { utf8Bytes } from '../validation.ts';
import {
  exportedContact,
  exportedJourney,
  exportedMail,
  exportedTopic,
  type PersonExport,
} from './export-document.ts';
import type { ExportDeps as Deps } from './export-ports.ts';

/**
 * Most bytes of an export, measured as the Lambda answer carries it: the
 * document as a JSON string inside the JSON of the answer (its quotes and
 * backslashes escaped once more). A Lambda answer holds at most 6 MB; the
 * rest is the envelope and the headers' room.
 */
export const EXPORT_MAX_BYTES = 5_000_000;

/** The address's suppression as the export shows it. */
const suppressionOf = (found: Suppression | undefined) =>
  found ? { reason: found.reason, at: found.at } : null;

/** Who is exported: an address, or the address of a contact. */
export type ExportSubject = { email: string } | { contactId: string };

/** By `createdAt`, then by a tie-breaking id: one order for every read. */
const byTime =
  <T>(at: (item: T) => string | null, id: (item: T) => string) =>
  (a: T, b: T) =>
    (at(a) ?? '').localeCompare(at(b) ?? '') || id(a).localeCompare(id(b));

/**
 * Everything the organization holds about one address, as one document.
 * 1. The address: the one given (normalized by the body's schema), or the
 *    one a contact id names.
 * 2. Its contacts in every list and the topics it declined, together.
 * 3. Nothing held (no contact, no declined topic, no suppression): 404
 *    `person.notFound`, the same answer whether another
 *    organization holds the address or none does (by contact id, 404
 *    `contact.notFound`, as on any contact route).
 * 4. Its contacts' journeys and campaign mail, its tags' names and the
 *    organization's name, together.
 * 5. The document, each part oldest first; past `maxBytes` as an answer
 *    carries it, 413 `export.tooLarge` rather than an answer that fails.
 */
export const exportPerson = async (
  deps: Deps,
  orgId: string,
  subject: ExportSubject,
  { maxBytes = EXPORT_MAX_BYTES }: { maxBytes?: number } = {},
): Promise<PersonExport> => {
  const notHeld = () =>
    'contactId' in subject
      ? new NotFoundError('contact.notFound', `No contact ${subject.contactId}`)
      : // The address stays out of the message: this answer is the same
        // for every address the organization does not hold.
        new NotFoundError(
          'person.notFound',
          'The organization holds nothing about this address',
        );
  const email =
    'email' in subject
      ? subject.email
      : await deps.exportReader.addressOf(orgId, subject.contactId);
  if (email === undefined) throw notHeld();
  const [contacts, topics, suppressed] = await Promise.all([
    deps.exportReader.contactsOf(orgId, email),
    deps.exportReader.topicOptOutsOf(orgId, email),
    deps.delivery.suppressions(orgId, [email]),
  ]);
  // A contact id whose contact went meanwhile names no one either; an
  // address on the suppression list alone is held (by its address, or by
  // its key once erased: the document then says why it is suppressed).
  if (contacts.length === 0 && topics.length === 0 && suppressed.size === 0) {
    throw notHeld();
  }
  const held = contacts.map(({ contact }) => contact);
  const [journeys, mail, tags, organization, activity] = await Promise.all([
    deps.exportReader.journeysOf(
      orgId,
      held.map((contact) => contact.id),
    ),
    deps.exportReader.mailOf(orgId, held),
    deps.tags.refs(
      orgId,
      held.flatMap((contact) => contact.tagIds),
    ),
    deps.organizations.get(orgId),
    Promise.all(held.map((contact) => allActivityOf(deps, orgId, contact.id))),
  ]);
  if (!organization) throw new Error(`organization ${orgId} vanished`);
  const document: PersonExport = {
    email,
    exportedAt: deps.clock.now().toISOString(),
    organization: { id: organization.id, name: organization.name },
    contacts: contacts
      .map((record) => exportedContact(record, tags))
      .sort(
        byTime(
          (c) => c.createdAt,
          (c) => c.id,
        ),
      ),
    topics: topics.map(exportedTopic).sort(
      byTime(
        (t) => t.optedOutAt,
        (t) => t.topicId,
      ),
    ),
    journeys: journeys.map(exportedJourney).sort(
      byTime(
        (j) => j.enrolledAt,
        (j) => `${j.sequenceId}#${j.contactId}`,
      ),
    ),
    mail: mail.map(exportedMail).sort(
      byTime(
        (m) => m.sentAt,
        (m) => `${m.campaignId}#${m.contactId}`,
      ),
    ),
    activity: held.map((contact, i) => ({
      contactId: contact.id,
      events: (activity[i] ?? []).map(activityView),
    })),
    suppression: suppressionOf(suppressed.get(email)),
  };
  const bytes = utf8Bytes(JSON.stringify(JSON.stringify(document)));
  if (bytes > maxBytes) {
    throw new PayloadTooLargeError(
      'export.tooLarge',
      `The export of this address takes ${bytes} bytes, more than the ${maxBytes} one answer carries`,
    );
  }
  return document;
};
