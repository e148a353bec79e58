/**
 * The confirmation email of double opt-in, composed in one place for the
 * real one (a pending contact's) and the organization's test of it: the
 * organization's content and subject rendered with the confirmation link,
 * the recipient, the legal mention and the year.
 */
import type { Organization } from '../organizations/model.ts';
import type { Clock } from '../ports.ts';
import { htmlToText, renderTemplate, renderText } from '../rendering/engine.ts';

/** A confirmation email's words, rendered. */
export interface ConfirmationMail {
  subject: string;
  html: string;
  text: string;
}

/**
 * Renders a confirmation email. `names` are the merge values the caller
 * allows: a stranger's text typed on a public form is never among them.
 * Throws as the rendering engine does when the content cannot render.
 */
export const composeConfirmation = async (
  deps: { clock: Clock },
  input: {
    org: Pick<Organization, 'postalAddress'>;
    content: string;
    subject: string;
    confirmationUrl: string;
    email: string;
    names: { firstName?: string; lastName?: string };
  },
): Promise<ConfirmationMail> => {
  const variables = {
    confirmationUrl: input.confirmationUrl,
    ...input.names,
    email: input.email,
    postalAddress: input.org.postalAddress ?? '',
    currentYear: String(deps.clock.now().getUTCFullYear()),
  };
  const html = await renderTemplate(
    input.content,
    variables,
    'confirmation email',
  );
  return {
    subject: await renderText(input.subject, variables),
    html,
    text: await htmlToText(html),
  };
};
