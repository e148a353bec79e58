/**
 * An email ready to leave: what the Mailer port sends.
 */

/** A complete outgoing message. */
export interface OutgoingMessage {
  /** `Name <address>` or a bare address. */
  from: string;
  /** Where replies go when they must not go to `from`: a bare address. */
  replyTo?: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  /** Extra headers, e.g. List-Unsubscribe. */
  headers?: Record<string, string>;
  /**
   * The SES tenant of the organization, once provisioned; the configuration
   * set of the same name goes with it.
   */
  tenantName?: string;
}
