/**
 * The message composer: turns content (subject and HTML), a contact and its
 * organization into a complete email — rendered subject and HTML, a plain
 * text alternative, the From, per-recipient signed unsubscribe and topic
 * opt-out links, the contact's custom field values, and the
 * List-Unsubscribe headers of RFC 2369 and RFC 8058 that Gmail's and
 * Yahoo's bulk-sender rules require. Campaigns, sequence steps, series
 * steps, previews and test sends all compose through here.
 */
import { RuleViolationError } from '../errors.ts';
import { type MergeValue, prepareFieldMerge } from '../fields/merge-values.ts';
import type { Field, FieldValue } from '../fields/model.ts';
import type { FieldsDeps } from '../fields/ports.ts';
import { definitionsOf } from '../fields/values.ts';
import {
  type MessageLinkClaims,
  signLink,
  TOPIC_OPT_OUT_LINK,
  UNSUBSCRIBE_LINK,
} from '../links/claims.ts';
import { publicLinkUrl } from '../links/public-links.ts';
import type { CoreDeps as Deps, OutgoingMessage } from '../ports.ts';
import { prepareTemplate, prepareText } from '../rendering/engine.ts';
import { FIELDS } from '../rendering/variables.ts';

/**
 * The recipient of one mail, as mail sees a contact: its id (named by its
 * links), its address, the names and the custom field values it may merge.
 */
export interface MailRecipient {
  id: string;
  email: string;
  firstName?: string;
  lastName?: string;
  fields?: Readonly<Record<string, FieldValue>>;
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
  /**
   * Extra merge values (previews and tests): `fields.<key>` names a custom
   * field's value; links and the `fields` namespace cannot be overridden.
   */
  variables?: Record<string, unknown>;
  tenantName?: string;
  /**
   * The organization's fields, when the caller has read them already (a
   * preview reports on them): otherwise read once here, and only when the
   * content or the subject reads `fields`.
   */
  fieldDefinitions?: ReadonlyMap<string, Field>;
}

/** The header pair that makes unsubscribing one click in mail clients. */
export const listUnsubscribeHeaders = (unsubscribeUrl: string) => ({
  'List-Unsubscribe': `<${unsubscribeUrl}>`,
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
});

/** What every recipient of a message shares: all of it but the recipient. */
export type MessageContent = Omit<ComposeInput, 'contact' | 'variables'>;

/** What composing needs: links, addresses, time and the fields' store. */
export type ComposeDeps = Pick<Deps, 'links' | 'endpoints' | 'clock'> &
  Pick<FieldsDeps, 'fields'>;

/** An extra merge value that fills a custom field: `fields.<key>`. */
const FIELD_VALUE_NAME = /^fields\.([a-z][a-z0-9_]{0,39})$/;

/**
 * Extra merge values split: the plain ones, and the custom field values
 * named `fields.<key>` (they go into the `fields` namespace, over the
 * contact's). Any other name in the namespace (`fields` itself, which is
 * the contact's, or `fields.` and no possible key: the request schema
 * refuses both) is dropped.
 */
const splitExtra = (extra: Record<string, unknown> | undefined) => {
  const plain: Record<string, unknown> = {};
  const fields: Record<string, MergeValue> = {};
  for (const [name, value] of Object.entries(extra ?? {})) {
    if (name !== FIELDS && !name.startsWith(`${FIELDS}.`)) {
      plain[name] = value;
      continue;
    }
    const key = FIELD_VALUE_NAME.exec(name)?.[1];
    if (
      key !== undefined &&
      (typeof value === 'string' ||
        typeof value === 'number' ||
        typeof value === 'boolean')
    ) {
      fields[key] = value;
    }
  }
  return { plain, fields };
};

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
 * refused by each message, as `composeMessage` refuses it. The
 * organization's fields are read here, once (one Query), and only when the
 * content or the subject reads `fields`: never per recipient.
 */
export const prepareMessage = async (
  deps: ComposeDeps,
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
  const readsFields =
    html.variables.includes(FIELDS) || subject.variables.includes(FIELDS);
  const fieldMerge = readsFields
    ? prepareFieldMerge(
        (
          content.fieldDefinitions ?? (await definitionsOf(deps, content.orgId))
        ).values(),
      )
    : undefined;

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

    // 3. Render: contact names, caller values, then the values nobody
    //    overrides (the field values, the caller's `fields.<key>` over the
    //    contact's; links).
    const given = splitExtra(extra);
    const variables = {
      firstName: contact.firstName ?? '',
      lastName: contact.lastName ?? '',
      email: contact.email,
      ...given.plain,
      [FIELDS]: { ...fieldMerge?.(contact.fields), ...given.fields },
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
  deps: ComposeDeps,
  input: ComposeInput,
): Promise<OutgoingMessage> => {
  const { contact, variables, ...content } = input;
  return (await prepareMessage(deps, content))(contact, variables);
};
