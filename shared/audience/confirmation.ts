/**
 * Application logic of double opt-in: the confirmation email, and the
 * public confirmation of its signed, single-use link.
 */
import * as v from 'valibot';
import { InvalidLinkError } from '../errors.ts';
import { CONFIRM_LINK, readLink, signLink } from '../links/claims.ts';
import { publicLinkUrl } from '../links/public-links.ts';
import {
  type ConfirmationMail,
  composeConfirmation,
} from '../mail/confirmation.ts';
import { sendNow } from '../mail/send-now.ts';
import { emailTags } from '../mail/tags.ts';
import { logger } from '../observability.ts';
import {
  Blocker,
  type ReadinessDeps,
  sendingStateOf,
} from '../sending/readiness.ts';
import { changeContact, withStatus } from './contact-changes.ts';
import type { Contact } from './model.ts';
import type { AudienceDeps as Deps } from './ports.ts';
import { suppressedStatuses } from './suppressed.ts';

/** Why a confirmation email did not go out although it could be sent. */
export const CONFIRMATION_FAILURES = [
  /** The opt-in content or subject could not render for this contact. */
  'content_invalid',
  /** The email provider refused the send. */
  'send_refused',
  /** The address bounced for good or complained: nothing is sent to it. */
  'suppressed',
] as const;
/** Why a confirmation email did not go out although it could be sent. */
export type ConfirmationFailure = (typeof CONFIRMATION_FAILURES)[number];

/**
 * What happened to a confirmation email. It is decided after the contact
 * is stored, so every outcome is part of a success answer, never an error.
 */
export const ConfirmationOutcome = v.pipe(
  v.variant('status', [
    v.object({ status: v.literal('not_required') }),
    v.object({ status: v.literal('sent') }),
    v.object({
      status: v.literal('blocked'),
      blockers: v.pipe(
        v.array(Blocker),
        v.description('Why the organization cannot send now'),
      ),
    }),
    v.object({
      status: v.literal('failed'),
      reason: v.pipe(
        v.picklist(CONFIRMATION_FAILURES),
        v.description(
          '`content_invalid`: the opt-in subject or content could not render for this contact; `send_refused`: the email provider refused the send; `suppressed`: the address bounced for good or complained in this organization, and nothing is sent to it again',
        ),
      ),
    }),
  ]),
  v.title('ConfirmationOutcome'),
  v.description(
    [
      'What happened to the confirmation email, decided after the contact is stored (never an error):',
      '- `not_required`: no new confirmation link (no double opt-in, or the contact is not pending);',
      '- `sent`: the email went out;',
      '- `blocked`: the organization cannot send now (`blockers` say why); nothing went out, the contact stays pending, adding it again later sends a link;',
      '- `failed`: it could not go out (`reason`); the contact stays pending, adding it again sends a new link.',
    ].join('\n'),
  ),
);
export type ConfirmationOutcome = v.InferOutput<typeof ConfirmationOutcome>;

/**
 * The names a confirmation may merge: those the organization gave (through
 * the API or an import); one typed on a public form renders empty.
 */
export const mergeableNames = (
  contact: Contact,
): { firstName: string; lastName: string } => {
  const strangers = new Set(contact.signupNames ?? []);
  return {
    firstName: strangers.has('firstName') ? '' : (contact.firstName ?? ''),
    lastName: strangers.has('lastName') ? '' : (contact.lastName ?? ''),
  };
};

/**
 * Sends the confirmation email of a pending contact, through the same guards
 * as any send to contacts: while the organization cannot send, nothing goes
 * out and the contact stays pending (adding it again sends a new link).
 * The contact is already stored: content that cannot render for it, or a
 * provider refusal, is reported as `failed` with its reason, not thrown.
 */
export const sendConfirmation = async (
  deps: ReadinessDeps &
    Pick<Deps, 'optinSettings' | 'links' | 'mailer' | 'endpoints' | 'delivery'>,
  orgId: string,
  contact: Contact,
): Promise<ConfirmationOutcome> => {
  // 0. Never to an address that bounced for good or complained.
  if ((await suppressedStatuses(deps, orgId, [contact.email])).size > 0) {
    return { status: 'failed', reason: 'suppressed' };
  }

  // 1. The guards of every send to contacts.
  const org = await deps.organizations.get(orgId);
  if (!org) throw new Error(`organization ${orgId} vanished`);
  const { readiness, sender } = await sendingStateOf(deps, org);
  if (!readiness.ready) {
    return { status: 'blocked', blockers: readiness.blockers };
  }

  // 2. A signed link naming this contact and its current nonce.
  const token = await signLink(deps.links, CONFIRM_LINK, {
    orgId,
    contactId: contact.id,
    nonce: contact.confirmationNonce ?? '',
    test: false,
  });

  // 3. The organization's confirmation email, rendered.
  const settings = await deps.optinSettings.get(orgId);
  let mail: ConfirmationMail;
  try {
    mail = await composeConfirmation(deps, {
      org,
      content: settings.content,
      subject: settings.subject,
      confirmationUrl: publicLinkUrl(
        deps.endpoints.publicApiUrl,
        'confirm',
        token,
      ),
      email: contact.email,
      // Names typed on a public form are a stranger's text until
      // confirmed: they never become words of a mail sent in the
      // organization's name.
      names: mergeableNames(contact),
    });
  } catch (error) {
    // Saved content renders with sample values; this contact's did not.
    logger.warn('Confirmation email cannot render', { error, orgId });
    return { status: 'failed', reason: 'content_invalid' };
  }

  // 4. Send; a refusal leaves the contact pending and is reported.
  // Signed by the default identity (spec, rule 5), through the tenant.
  const sent = await sendNow(
    deps,
    {
      ...sender,
      to: contact.email,
      ...mail,
      tags: emailTags({
        organization: orgId,
        kind: 'confirmation',
        contact: contact.id,
      }),
    },
    { refused: 'Confirmation email refused', orgId },
  );
  return sent === 'sent'
    ? { status: 'sent' }
    : { status: 'failed', reason: 'send_refused' };
};

/**
 * The consent records with this confirmation noted on the latest sign-up
 * still unconfirmed (the one whose email carried the link).
 */
const confirmedConsents = (
  contact: Contact,
  now: string,
): Pick<Contact, 'consents'> => {
  if (!contact.consents?.length) return {};
  const consents = [...contact.consents];
  for (let i = consents.length - 1; i >= 0; i--) {
    const consent = consents[i];
    if (consent && !consent.confirmedAt) {
      consents[i] = { ...consent, confirmedAt: now };
      break;
    }
  }
  return { consents };
};

/** How a confirmation link was received. */
export type ConfirmResult =
  | 'test'
  | 'confirmed'
  | 'already_confirmed'
  | 'superseded'
  | 'not_pending';

/**
 * Confirms the subscription behind a confirmation link: the link must be
 * authentic, unexpired, and the latest sent to a pending contact. Records
 * confirmedAt and confirmedIp; the contact joins the list (once).
 */
export const confirmSubscription = async (
  deps: Pick<Deps, 'links' | 'contacts' | 'clock'>,
  token: string,
  ip: string | undefined,
): Promise<{ result: ConfirmResult; email: string }> => {
  const { orgId, contactId, nonce, test } = await readLink(
    deps.links,
    CONFIRM_LINK,
    token,
  );
  // The fake link of an opt-in test send confirms nobody.
  if (test) return { result: 'test', email: '' };
  let result: ConfirmResult = 'confirmed';
  const { after } = await changeContact(
    deps,
    orgId,
    async () => {
      const contact = await deps.contacts.findById(orgId, contactId);
      if (!contact) {
        throw new InvalidLinkError(
          'link.contactGone',
          'This subscription no longer exists',
        );
      }
      return contact;
    },
    (contact, now) => {
      // An unsubscribed address that signed up again on a hosted page
      // holds the nonce of that sign-up: its link subscribes it again.
      const resigned =
        contact.status === 'unsubscribed' &&
        contact.confirmationNonce !== undefined &&
        contact.confirmationNonce === nonce;
      if (contact.status !== 'pending' && !resigned) {
        result =
          contact.status === 'subscribed' && contact.confirmedAt
            ? 'already_confirmed'
            : 'not_pending';
        return contact;
      }
      if (contact.confirmationNonce !== nonce) {
        result = 'superseded';
        return contact;
      }
      result = 'confirmed';
      return {
        ...withStatus(contact, 'subscribed', now),
        confirmedAt: now,
        ...(ip ? { confirmedIp: ip } : {}),
        ...confirmedConsents(contact, now),
      };
    },
    'confirmation',
  );
  return { result, email: after.email };
};
