/**
 * What each kind of signed link says, as a typed codec: one schema per
 * purpose, with named fields in the code and the compact one-letter claims
 * of the token (it travels in URLs) written in one place, next to their
 * names. The letters never change: links already in inboxes (a year for
 * an unsubscribe link) must keep working.
 */
import * as v from 'valibot';
import { InvalidLinkError } from '../errors.ts';
import type { LinkSigner } from '../ports.ts';
import {
  CONFIRMATION_TTL_SECONDS,
  LINK_PURPOSES,
  MESSAGE_LINK_TTL_SECONDS,
} from './public-links.ts';

/** A signed link's purpose, lifetime and claims, both ways. */
export interface LinkCodec<Claims> {
  purpose: string;
  ttlSeconds: number;
  /** The token's claims of these (absent optional fields are left out). */
  toWire(claims: Claims): Record<string, string>;
  /** The claims of a verified token; fails for one that lacks any. */
  fromWire: v.GenericSchema<Record<string, string>, Claims>;
}

/** Signs the claims of a link, for the codec's lifetime unless told. */
export const signLink = <Claims>(
  signer: Pick<LinkSigner, 'sign'>,
  codec: LinkCodec<Claims>,
  claims: Claims,
  ttlSeconds = codec.ttlSeconds,
): Promise<string> =>
  signer.sign(codec.purpose, codec.toWire(claims), ttlSeconds);

/**
 * The claims of a valid token of the codec's purpose: `InvalidLinkError`
 * for a tampered, foreign or incomplete one, `ExpiredLinkError` for an
 * expired one.
 */
export const readLink = async <Claims>(
  signer: Pick<LinkSigner, 'verify'>,
  codec: LinkCodec<Claims>,
  token: string,
): Promise<Claims> => {
  const read = v.safeParse(
    codec.fromWire,
    await signer.verify(codec.purpose, token),
  );
  if (!read.success) {
    throw new InvalidLinkError('link.invalid', 'This link is not valid');
  }
  return read.output;
};

/** A claim that is there, and not empty. */
export const Claim = v.pipe(v.string(), v.minLength(1));

/** The mark of a test's link (`x: 'test'`): it changes nothing. */
const TestMark = v.optional(v.literal('test'));

/** What the links of a marketing mail say. */
export interface MessageLinkClaims {
  orgId: string;
  contactId: string;
  /** The campaign whose message carried the link (counts in its stats). */
  campaignId?: string;
  /** The topic a topic opt-out link declines. */
  topicId?: string;
  /** A test send's or a preview's link: it leads to a test page. */
  test: boolean;
}

const messageLink = (purpose: string): LinkCodec<MessageLinkClaims> => ({
  purpose,
  ttlSeconds: MESSAGE_LINK_TTL_SECONDS,
  toWire: (claims) => ({
    o: claims.orgId,
    c: claims.contactId,
    // In the order tokens always had them: the same claims, the same bytes.
    ...(claims.campaignId ? { k: claims.campaignId } : {}),
    ...(claims.test ? { x: 'test' } : {}),
    ...(claims.topicId ? { t: claims.topicId } : {}),
  }),
  fromWire: v.pipe(
    v.object({
      o: Claim,
      c: Claim,
      k: v.optional(Claim),
      t: v.optional(Claim),
      x: TestMark,
    }),
    v.transform((wire) => ({
      orgId: wire.o,
      contactId: wire.c,
      ...(wire.k ? { campaignId: wire.k } : {}),
      ...(wire.t ? { topicId: wire.t } : {}),
      test: wire.x === 'test',
    })),
  ),
});

/** The unsubscribe link of a marketing mail. */
export const UNSUBSCRIBE_LINK = messageLink(LINK_PURPOSES.unsubscribe);

/** The topic opt-out link of a marketing mail (it names its topic). */
export const TOPIC_OPT_OUT_LINK = messageLink(LINK_PURPOSES.topicOptOut);

/** What a confirmation link says. */
export interface ConfirmLinkClaims {
  orgId: string;
  contactId: string;
  /** The sign-up it confirms: a newer sign-up's link supersedes it. */
  nonce: string;
  /** The link of an opt-in test send: it confirms nobody. */
  test: boolean;
}

/** The link of a confirmation email (double opt-in). */
export const CONFIRM_LINK: LinkCodec<ConfirmLinkClaims> = {
  purpose: LINK_PURPOSES.confirm,
  ttlSeconds: CONFIRMATION_TTL_SECONDS,
  toWire: (claims) => ({
    o: claims.orgId,
    c: claims.contactId,
    n: claims.nonce,
    ...(claims.test ? { x: 'test' } : {}),
  }),
  fromWire: v.pipe(
    v.object({ o: Claim, c: Claim, n: Claim, x: TestMark }),
    v.transform((wire) => ({
      orgId: wire.o,
      contactId: wire.c,
      nonce: wire.n,
      test: wire.x === 'test',
    })),
  ),
};
