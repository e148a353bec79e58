/**
 * The message composer: turns content (subject and HTML), a contact and its
 * organization into a complete email — rendered subject and HTML, a plain
 * text alternative, the From, per-recipient signed unsubscribe and topic
 * opt-out links, and the List-Unsubscribe headers of RFC 2369 and RFC 8058
 * that Gmail's and Yahoo's bulk-sender rules require. Campaigns, sequence
 * steps and test sends all compose through here.
 */
import { RuleViolationError } from '../errors.ts';
import {
  type MessageLinkClaims,
  signLink,
  TOPIC_OPT_OUT_LINK,
  UNSUBSCRIBE_LINK,
} from '../links/claims.ts';
import { publicLinkUrl } from '../links/public-links.ts';
import type { CoreDeps as Deps, OutgoingMessage } from '../ports.ts';
import { prepareTemplate, prepareText } from '../rendering/engine.ts';

/**
 * The recipient of one mail, as mail sees a contact: its id (named by its
 * links), its address and the names it may merge.
 */
export interface MailRecipient {
  id: string;
  email: string;
  firstName?: string;
  lastName?: string;
}

/** What a message is made of. */
export interface ComposeInput {
  orgId: string;
  /** The recipient; a test send passes a stand-in. */
  contact: MailRecipient;
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

/** What every recipient of a message shares: all of it but the recipient. */
export type MessageContent = Omit<ComposeInput, 'contact' | 'variables'>;

/**
 * Composes the message of prepared content for one recipient, with extra
 * merge values if any.
 */
export type ComposeFor = (
  contact: MailRecipient,
  variables?: Record<string, unknown>,
) => Promise<OutgoingMessage>;

/**
 * Prepares content once for many recipients (a batch of a campaign): the
 * HTML analysed and parsed, the subject parsed, and from the second message
 * on the text part made from a plan instead of converting each HTML. Each
 * message is then what `composeMessage` gives, byte for byte. Content that
 * uses {{topicOptOutUrl}} without a topic is refused (400) here: the link
 * would have nothing to opt out of. A subject that does not parse is
 * refused by each message, as `composeMessage` refuses it.
 */
export const prepareMessage = async (
  deps: Pick<Deps, 'links' | 'endpoints' | 'clock'>,
  content: MessageContent,
): Promise<ComposeFor> => {
  // 1. The content's variables decide which links are needed.
  const html = await prepareTemplate(content.html);
  const topicLink = html.variables.includes('topicOptOutUrl');
  if (topicLink && !content.topicId) {
    throw new RuleViolationError(
      'message.topicRequired',
      'The content uses {{topicOptOutUrl}} but no topic is set: set a topic, or remove the link',
    );
  }
  const subject = await prepareText(content.subject);
  const { publicApiUrl } = deps.endpoints;

  return async (contact, extra) => {
    // 2. Signed, per-recipient links (no database read needed to check them).
    const claims: MessageLinkClaims = {
      orgId: content.orgId,
      contactId: contact.id,
      ...(content.campaignId ? { campaignId: content.campaignId } : {}),
      test: content.test === true,
    };
    const unsubscribeUrl = publicLinkUrl(
      publicApiUrl,
      'unsubscribe',
      await signLink(deps.links, UNSUBSCRIBE_LINK, claims),
    );
    const topicOptOutUrl =
      content.topicId && topicLink
        ? publicLinkUrl(
            publicApiUrl,
            'topicOptOut',
            await signLink(deps.links, TOPIC_OPT_OUT_LINK, {
              ...claims,
              topicId: content.topicId,
            }),
          )
        : '';

    // 3. Render: contact fields, caller values, then the values nobody
    //    overrides.
    const variables = {
      firstName: contact.firstName ?? '',
      lastName: contact.lastName ?? '',
      email: contact.email,
      ...extra,
      unsubscribeUrl,
      topicOptOutUrl,
      postalAddress: content.postalAddress ?? '',
      currentYear: String(deps.clock.now().getUTCFullYear()),
    };
    const rendered = await html.render(variables);
    // One line, whatever a stored name or a merge value holds: no header
    // injection through the Subject (renderText folds line breaks).
    const renderedSubject = await subject.render(variables);

    return {
      from: content.from,
      ...(content.replyTo ? { replyTo: content.replyTo } : {}),
      to: contact.email,
      subject: renderedSubject,
      html: rendered,
      text: html.textOf(rendered, variables),
      headers: listUnsubscribeHeaders(unsubscribeUrl),
      ...(content.tenantName ? { tenantName: content.tenantName } : {}),
    };
  };
};

/**
 * Composes a complete message for one recipient: `prepareMessage` for one.
 * Content that uses {{topicOptOutUrl}} without a topic is refused (400).
 */
export const composeMessage = async (
  deps: Pick<Deps, 'links' | 'endpoints' | 'clock'>,
  input: ComposeInput,
): Promise<OutgoingMessage> => {
  const { contact, variables, ...content } = input;
  return (await prepareMessage(deps, content))(contact, variables);
};
