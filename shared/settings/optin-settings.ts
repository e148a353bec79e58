/**
 * Application logic of PATCH /settings/optin and its test send.
 */

import * as v from 'valibot';
import { NotFoundError, ValidationError } from '../errors.ts';
import { CONFIRM_LINK, signLink } from '../links/claims.ts';
import { publicLinkUrl } from '../links/public-links.ts';
import { composeConfirmation } from '../mail/confirmation.ts';
import { asTestMail, sendNow } from '../mail/send-now.ts';
import {
  analyzeTemplate,
  renderTemplate,
  renderText,
} from '../rendering/engine.ts';
import { SAMPLE_VALUES } from '../rendering/variables.ts';
import { hasSomeField } from '../schema-notes.ts';
import { type ReadinessDeps, sendingStateOf } from '../sending/readiness.ts';
import { EmailAddress, HtmlContent, Subject } from '../validation.ts';
import { DEFAULT_OPTIN_CONTENT, type OptinSettings } from './optin.ts';
import type { SettingsDeps as Deps } from './ports.ts';

/** Body of PATCH /settings/optin. */
export const UpdateOptinBody = v.pipe(
  v.object({
    required: v.optional(v.boolean('must be true or false')),
    subject: v.optional(Subject),
    content: v.optional(HtmlContent),
  }),
  v.check(
    hasSomeField,
    'must change at least one of required, subject, content',
  ),
);

/** Body of POST /settings/optin/test-send. */
export const OptinTestSendBody = v.object({
  email: EmailAddress,
  subject: v.optional(Subject),
  content: v.optional(HtmlContent),
});

/** Refuses opt-in content without {{confirmationUrl}}, naming it. */
const checkContent = async (content: string) => {
  const { variables } = await analyzeTemplate(content, 'content');
  if (!variables.includes('confirmationUrl')) {
    throw new ValidationError(
      'The confirmation email must contain {{confirmationUrl}}',
      [{ field: 'content', message: 'must contain {{confirmationUrl}}' }],
      { code: 'optin.confirmationUrlMissing' },
    );
  }
};

/**
 * Changes the opt-in settings. Content equal to the default is stored empty,
 * so the organization keeps following the default (customized false).
 * A content or subject is rendered with sample values of every variable a
 * confirmation has before anything is stored: one that parses but cannot
 * render (a loop past the engine's limits) is a 400 naming it, so no add of
 * a contact later meets it.
 */
export const updateOptinSettings = async (
  deps: Pick<Deps, 'optinSettings'>,
  orgId: string,
  input: v.InferOutput<typeof UpdateOptinBody>,
): Promise<OptinSettings> => {
  if (input.content !== undefined) {
    await checkContent(input.content);
    await renderTemplate(input.content, SAMPLE_VALUES, 'confirmation email');
  }
  if (input.subject !== undefined) {
    await renderText(input.subject, SAMPLE_VALUES);
  }
  const current = await deps.optinSettings.get(orgId);
  const content = input.content ?? (current.customized ? current.content : '');
  await deps.optinSettings.save(orgId, {
    required: input.required ?? current.required,
    subject: input.subject ?? current.subject,
    content: content.trim() === DEFAULT_OPTIN_CONTENT.trim() ? '' : content,
  });
  return deps.optinSettings.get(orgId);
};

/** What became of an opt-in test send. */
export const OPTIN_TEST_STATUSES = [
  'sent',
  'blocked',
  'not_allowed',
  'send_refused',
] as const;

/** The answer of an opt-in test send. */
export const OptinTestResult = v.pipe(
  v.object({
    status: v.pipe(
      v.picklist(OPTIN_TEST_STATUSES),
      v.description(
        '`sent`; `blocked`: sending is off application-wide; `not_allowed`: any other blocker (organization not allowed, domain not verified, provider suspension); `send_refused`: the provider refused the send',
      ),
    ),
    to: v.pipe(v.string(), v.email(), v.description('The recipient')),
  }),
  v.title('OptinTestResult'),
);
export type OptinTestResult = v.InferOutput<typeof OptinTestResult>;

/**
 * Sends the confirmation email (stored, or overridden by the body) to one
 * address, through the same guards as a real one: blocked while sending is
 * off application-wide; not_allowed for any other blocker (organization not
 * allowed, domain not verified, provider suspension); send_refused when the
 * provider refuses. Its confirmation link is a test link.
 */
export const testSendOptin = async (
  deps: ReadinessDeps &
    Pick<Deps, 'optinSettings' | 'links' | 'mailer' | 'endpoints'>,
  orgId: string,
  input: v.InferOutput<typeof OptinTestSendBody>,
): Promise<OptinTestResult> => {
  const to = input.email;
  if (input.content !== undefined) await checkContent(input.content);
  const org = await deps.organizations.get(orgId);
  if (!org)
    throw new NotFoundError(
      'organization.notFound',
      `No organization ${orgId}`,
    );
  const { readiness, sender } = await sendingStateOf(deps, org);
  if (readiness.blockers.includes('sending_disabled'))
    return { status: 'blocked', to };
  if (!readiness.ready) return { status: 'not_allowed', to };

  const settings = await deps.optinSettings.get(orgId);
  // A test link, an hour long: it confirms nobody.
  const token = await signLink(
    deps.links,
    CONFIRM_LINK,
    { orgId, contactId: 'test', nonce: 'test', test: true },
    3600,
  );
  const mail = await composeConfirmation(deps, {
    org,
    content: input.content ?? settings.content,
    subject: input.subject ?? settings.subject,
    confirmationUrl: publicLinkUrl(
      deps.endpoints.publicApiUrl,
      'confirm',
      token,
    ),
    email: to,
    names: { firstName: 'Test', lastName: 'Reader' },
  });
  const status = await sendNow(
    deps,
    asTestMail({ ...sender, to, ...mail }, orgId),
    { refused: 'Opt-in test send refused by the provider', orgId },
  );
  return { status, to };
};
