/**
 * The message composer: turns content (subject and HTML), a contact and its
 * organization into a complete email — rendered subject and HTML, a plain
 * text alternative, the From, per-recipient signed unsubscribe and topic
 * opt-out links, and the List-Unsubscribe headers of RFC 2369 and RFC 8058
 * that Gmail's and Yahoo's bulk-sender rules require. Campaigns, sequence
 * steps and test sends all compose through here.
 */
import type { Contact } from '../audience/model.ts';
import { RuleViolationError } from '../errors.ts';
import {
  LINK_PURPOSES,
  MESSAGE_LINK_TTL_SECONDS,
  publicLinkUrl,
} from '../links/public-links.ts';
import type { CoreDeps as Deps, OutgoingMessage } from '../ports.ts';
import {
  analyzeTemplate,
  htmlToText,
  renderTemplate,
  renderText,
} from '../rendering/engine.ts';

/** What a message is made of. */
export interface ComposeInput {
  orgId: string;
  /** The recipient; a test send passes a stand-in. */
  contact: Pick<Contact, 'id' | 'email' | 'firstName' | 'lastName'>;
  subject: string;
  html: string;
  /** The From header: the sender identity, or the application address. */
  from: string;
  /**
   * The organization's own address while mail goes out From the
   * application's (`senderOf` gives both): the Reply-To.
   */
  replyTo?: string;
  /** The legal mention of the organization, if any. */
  postalAddress?: string;
  /** The topic of the campaign or step: required by {{topicOptOutUrl}}. */
  topicId?: string;
  /**
   * The campaign the message belongs to: its links name it (claim `k`), so
   * an unsubscribe through them counts in the campaign's stats.
   */
  campaignId?: string;
  /** A test or a preview: links lead to a test page and change nothing. */
  test?: boolean;
  /** Extra merge values (previews and tests); links cannot be overridden. */
  variables?: Record<string, unknown>;
  tenantName?: string;
}

/** The header pair that makes unsubscribing one click in mail clients. */
export const listUnsubscribeHeaders = (unsubscribeUrl: string) => ({
  'List-Unsubscribe': `<${unsubscribeUrl}>`,
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
});

/**
 * Composes a complete message for one recipient. Content that uses
 * {{topicOptOutUrl}} without a topic is refused (400): the link would have
 * nothing to opt out of.
 */
export const composeMessage = async (
  deps: Pick<Deps, 'links' | 'endpoints' | 'clock'>,
  input: ComposeInput,
): Promise<OutgoingMessage> => {
  // 1. The content's variables decide which links are needed.
  const { variables: used } = await analyzeTemplate(input.html);
  if (used.includes('topicOptOutUrl') && !input.topicId) {
    throw new RuleViolationError(
      'message.topicRequired',
      'The content uses {{topicOptOutUrl}} but no topic is set: set a topic, or remove the link',
    );
  }

  // 2. Signed, per-recipient links (no database read needed to check them).
  const claims = {
    o: input.orgId,
    c: input.contact.id,
    ...(input.campaignId ? { k: input.campaignId } : {}),
    ...(input.test ? { x: 'test' } : {}),
  };
  const sign = (purpose: string, extra: Record<string, string> = {}) =>
    deps.links.sign(purpose, { ...claims, ...extra }, MESSAGE_LINK_TTL_SECONDS);
  const { publicApiUrl } = deps.endpoints;
  const unsubscribeUrl = publicLinkUrl(
    publicApiUrl,
    'unsubscribe',
    await sign(LINK_PURPOSES.unsubscribe),
  );
  const topicOptOutUrl =
    input.topicId && used.includes('topicOptOutUrl')
      ? publicLinkUrl(
          publicApiUrl,
          'topicOptOut',
          await sign(LINK_PURPOSES.topicOptOut, { t: input.topicId }),
        )
      : '';

  // 3. Render: contact fields, caller values, then the values nobody overrides.
  const variables = {
    firstName: input.contact.firstName ?? '',
    lastName: input.contact.lastName ?? '',
    email: input.contact.email,
    ...input.variables,
    unsubscribeUrl,
    topicOptOutUrl,
    postalAddress: input.postalAddress ?? '',
    currentYear: String(deps.clock.now().getUTCFullYear()),
  };
  const html = await renderTemplate(input.html, variables);
  // One line, whatever a stored name or a merge value holds: no header
  // injection through the Subject (renderText folds line breaks).
  const subject = await renderText(input.subject, variables);

  return {
    from: input.from,
    ...(input.replyTo ? { replyTo: input.replyTo } : {}),
    to: input.contact.email,
    subject,
    html,
    text: await htmlToText(html),
    headers: listUnsubscribeHeaders(unsubscribeUrl),
    ...(input.tenantName ? { tenantName: input.tenantName } : {}),
  };
};
