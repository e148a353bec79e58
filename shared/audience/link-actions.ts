/**
 * Application logic behind the links of emails: unsubscribe and topic
 * opt-out. Reading a link (GET) never changes anything, so mail scanners
 * that follow links do no harm; acting on it (POST, including RFC 8058
 * one-click from mail clients) does, idempotently. Links of test emails
 * change nothing.
 */
import { InvalidLinkError } from '../errors.ts';
import {
  readLink,
  TOPIC_OPT_OUT_LINK,
  UNSUBSCRIBE_LINK,
} from '../links/claims.ts';
import type { Topic } from '../topics/model.ts';
import { changeContact, withStatus } from './contact-changes.ts';
import type { Contact, ContactWritePath } from './model.ts';
import type {
  CampaignUnsubscribeCounter,
  AudienceDeps as Deps,
} from './ports.ts';

/** What a link leads to. */
export type LinkTarget =
  | { kind: 'test' }
  | { kind: 'gone' }
  | {
      kind: 'contact';
      email: string;
      organizationName: string;
      /** Already done: unsubscribed, or topic already declined. */
      done: boolean;
      topicName?: string;
    };

type LinkDeps = Pick<
  Deps,
  'links' | 'contacts' | 'organizations' | 'topics' | 'clock'
>;

const organizationName = async (deps: LinkDeps, orgId: string) =>
  (await deps.organizations.get(orgId))?.name ?? 'the sender';

/** What an unsubscribe link would do (GET: changes nothing). */
export const readUnsubscribeLink = async (
  deps: LinkDeps,
  token: string,
): Promise<LinkTarget> => {
  const { orgId, contactId, test } = await readLink(
    deps.links,
    UNSUBSCRIBE_LINK,
    token,
  );
  if (test) return { kind: 'test' };
  const contact = await deps.contacts.findById(orgId, contactId);
  if (!contact) return { kind: 'gone' };
  return {
    kind: 'contact',
    email: contact.email,
    organizationName: await organizationName(deps, orgId),
    done: contact.status === 'unsubscribed',
  };
};

/**
 * Unsubscribes the contact of an unsubscribe link (POST). Idempotent. The
 * link of a campaign's message counts in that campaign's unsubscribes when
 * this call is the one that unsubscribed the contact. `via` is how the
 * link was followed, as the contact's activity tells it: the button of the
 * link's page, or (any other POST) a mail client's one-click (RFC 8058).
 */
export const unsubscribeByLink = async (
  deps: LinkDeps & { campaignStats: CampaignUnsubscribeCounter },
  token: string,
  via: Extract<ContactWritePath, 'link' | 'one_click'> = 'one_click',
): Promise<LinkTarget> => {
  const { orgId, contactId, campaignId, test } = await readLink(
    deps.links,
    UNSUBSCRIBE_LINK,
    token,
  );
  if (test) return { kind: 'test' };
  const contact = await deps.contacts.findById(orgId, contactId);
  if (!contact) return { kind: 'gone' };
  const { before, after } = await changeContact(
    deps,
    orgId,
    () => deps.contacts.findById(orgId, contactId),
    (current, now) => withStatus(current, 'unsubscribed', now),
    via,
  );
  const unsubscribedNow =
    before.status !== 'unsubscribed' && after.status === 'unsubscribed';
  if (campaignId && unsubscribedNow) {
    await deps.campaignStats.recordUnsubscribe(
      orgId,
      campaignId,
      contactId,
      after.updatedAt,
    );
  }
  return {
    kind: 'contact',
    email: contact.email,
    organizationName: await organizationName(deps, orgId),
    done: before.status === 'unsubscribed',
  };
};

/** Where a topic link leads: a page at once, or a contact and a topic. */
type TopicLink =
  | { target: LinkTarget }
  | { orgId: string; contact: Contact; topic: Topic };

const topicTarget = async (
  deps: LinkDeps,
  token: string,
): Promise<TopicLink> => {
  const claims = await readLink(deps.links, TOPIC_OPT_OUT_LINK, token);
  if (claims.test) return { target: { kind: 'test' } };
  if (!claims.topicId) {
    throw new InvalidLinkError('link.invalid', 'This link is not valid');
  }
  const [contact, topic] = await Promise.all([
    deps.contacts.findById(claims.orgId, claims.contactId),
    deps.topics.get(claims.orgId, claims.topicId),
  ]);
  if (!contact || !topic) return { target: { kind: 'gone' } };
  return { orgId: claims.orgId, contact, topic };
};

/** What a topic opt-out link would do (GET: changes nothing). */
export const readTopicOptOutLink = async (
  deps: LinkDeps,
  token: string,
): Promise<LinkTarget> => {
  const found = await topicTarget(deps, token);
  if ('target' in found) return found.target;
  const { orgId, contact, topic } = found;
  const declined = await deps.topics.optedOut(orgId, topic.id, [contact.email]);
  return {
    kind: 'contact',
    email: contact.email,
    topicName: topic.name,
    organizationName: await organizationName(deps, orgId),
    done: declined.has(contact.email),
  };
};

/** Records the topic opt-out of a link (POST). Idempotent. */
export const optOutByLink = async (
  deps: LinkDeps,
  token: string,
): Promise<LinkTarget> => {
  const found = await topicTarget(deps, token);
  if ('target' in found) return found.target;
  const { orgId, contact, topic } = found;
  const created = await deps.topics.addOptOut(orgId, topic.id, {
    email: contact.email,
    contactId: contact.id,
    optedOutAt: deps.clock.now().toISOString(),
  });
  return {
    kind: 'contact',
    email: contact.email,
    topicName: topic.name,
    organizationName: await organizationName(deps, orgId),
    done: !created,
  };
};
