/**
 * One mail now, outside the pacer: the mail of a single address that a
 * person is waiting for (a confirmation, a test send). Sends to a list or
 * a sequence's contacts go through `sendPaced` instead. A refusal of the
 * provider is an outcome the caller reports, never thrown: the caller's
 * own writes are already done.
 */
import { logger } from '../observability.ts';
import type { CoreDeps, OutgoingMessage } from '../ports.ts';
import { emailTags } from './tags.ts';

/** What became of one mail sent now. */
export type SentNow = 'sent' | 'send_refused';

/**
 * Sends one message; a refusal is logged with `about` (what the mail was,
 * and whose) and answered `send_refused`.
 */
export const sendNow = async (
  deps: Pick<CoreDeps, 'mailer'>,
  message: OutgoingMessage,
  about: { refused: string; orgId: string } & Record<string, unknown>,
): Promise<SentNow> => {
  try {
    await deps.mailer.send(message);
    return 'sent';
  } catch (error) {
    const { refused, ...context } = about;
    logger.warn(refused, { error, ...context });
    return 'send_refused';
  }
};

/**
 * A test of a mail: its subject marked `[Test]`, and tagged as a test (its
 * events count in no statistics).
 */
export const asTestMail = (
  message: OutgoingMessage,
  orgId: string,
): OutgoingMessage => ({
  ...message,
  subject: `[Test] ${message.subject}`,
  tags: emailTags({ organization: orgId, kind: 'test' }),
});
