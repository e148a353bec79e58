/**
 * The tags (SES `EmailTags`) every message we send carries, so each event
 * SES publishes about it names its organization, its kind, and its contact,
 * campaign, sequence or series step, without a lookup (the contact's
 * activity is written from them alone). Names and values: ASCII letters,
 * digits, `_` and `-` (ids qualify; email addresses do not).
 */

/** The `EmailTags` of every message we send (SES message tags). */
export const EMAIL_TAGS = {
  /** The organization that sent it. */
  organization: 'org',
  /** What kind of message it is: one of {@link MESSAGE_KINDS}. */
  kind: 'kind',
  /** The contact it went to, where there is one. */
  contact: 'contact',
  /** The campaign it belongs to, where there is one. */
  campaign: 'campaign',
  /**
   * The sequence whose step it is, or the series whose step made its
   * campaign, where there is one.
   */
  sequence: 'sequence',
  /**
   * The step of that sequence or series: 1 for its version's first email,
   * and so on.
   */
  step: 'step',
} as const;

/** The kinds of message we send. */
export const MESSAGE_KINDS = [
  /** A double opt-in confirmation to a pending contact. */
  'confirmation',
  /** A test send of a template or of the opt-in email, to the sender. */
  'test',
  /** A campaign's email to one recipient. */
  'campaign',
  /** A sequence or series step to one contact. */
  'sequence',
] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/**
 * The `EmailTags` of a message: the organization, the kind, and the
 * contact, campaign, sequence and step where there is one (ids and
 * numbers are valid tag values).
 */
export const emailTags = (tags: {
  organization: string;
  kind: MessageKind;
  contact?: string;
  campaign?: string;
  sequence?: string;
  step?: number;
}): Record<string, string> => ({
  [EMAIL_TAGS.organization]: tags.organization,
  [EMAIL_TAGS.kind]: tags.kind,
  ...(tags.contact ? { [EMAIL_TAGS.contact]: tags.contact } : {}),
  ...(tags.campaign ? { [EMAIL_TAGS.campaign]: tags.campaign } : {}),
  ...(tags.sequence ? { [EMAIL_TAGS.sequence]: tags.sequence } : {}),
  ...(tags.step ? { [EMAIL_TAGS.step]: String(tags.step) } : {}),
});
