/**
 * Why the email provider did not take a message, in the terms a sender acts
 * on: the Mailer port throws a SendRefusedError, so callers decide between
 * slowing down, failing one recipient, stopping a campaign, or recording
 * that the outcome is unknown, without knowing the provider's errors.
 */

/**
 * How a send was refused:
 * - `throttled`: too fast for the provider right now (its rate, or a request
 *   that never reached it); retry later, slower; never fail the recipient.
 * - `rejected`: this message or recipient is refused for good (a rejected
 *   message, an invalid address); fail this recipient only.
 * - `paused`: the account or the organization's tenant cannot send (sending
 *   paused or suspended, a sending domain not verified, a missing tenant or
 *   configuration set, the 24-hour quota spent); stop the whole campaign.
 * - `uncertain`: no answer (network error, timeout, a 5xx): the provider may
 *   or may not have accepted the message, so sending it again may send it
 *   twice.
 */
export type SendRefusalKind = 'throttled' | 'rejected' | 'paused' | 'uncertain';

/** A send the email provider refused (or may not have taken), classified. */
export class SendRefusedError extends Error {
  constructor(
    readonly kind: SendRefusalKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** True for a refused send; with `kind`, only for a refusal of that kind. */
export const isSendRefused = (
  error: unknown,
  kind?: SendRefusalKind,
): error is SendRefusedError =>
  error instanceof SendRefusedError &&
  (kind === undefined || error.kind === kind);
