/**
 * The tags (SES `EmailTags`) every message we send carries, so each event
 * SES publishes about it names its organization, its kind, and its contact
 * or campaign, without a lookup. Names and values: ASCII letters, digits,
 * `_` and `-` (ids qualify; email addresses do not).
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
  /** The sequence whose step it is, where there is one. */
  sequence: 'sequence',
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
 * contact and campaign where there is one (ids are valid tag values).
 */
export const emailTags = (tags: {
  organization: string;
  kind: MessageKind;
  contact?: string;
  campaign?: string;
  sequence?: string;
}): Record<string, string> => ({
  [EMAIL_TAGS.organization]: tags.organization,
  [EMAIL_TAGS.kind]: tags.kind,
  ...(tags.contact ? { [EMAIL_TAGS.contact]: tags.contact } : {}),
  ...(tags.campaign ? { [EMAIL_TAGS.campaign]: tags.campaign } : {}),
  ...(tags.sequence ? { [EMAIL_TAGS.sequence]: tags.sequence } : {}),
});
