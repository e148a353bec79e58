/**
 * The typed codecs of signed links: named claims in the code, the same
 * one-letter claims in the token as before (links already in inboxes keep
 * working), and a token that lacks a claim its purpose needs is invalid.
 */
import { describe, expect, it } from 'vitest';
import { JoseLinkSigner } from '../../../shared/adapters/jose-link-signer.ts';
import { InvalidLinkError } from '../../../shared/errors.ts';
import {
  CONFIRM_LINK,
  readLink,
  signLink,
  TOPIC_OPT_OUT_LINK,
  UNSUBSCRIBE_LINK,
} from '../../../shared/links/claims.ts';
import { LINK_PURPOSES } from '../../../shared/links/public-links.ts';
import { TEST_LINK_SECRET } from '../../support/dynamo.ts';

const signer = new JoseLinkSigner(async () => TEST_LINK_SECRET, {
  now: () => new Date(),
});

describe('signed link claims', () => {
  it('round-trips the claims of each purpose by name', async () => {
    const message = {
      orgId: 'org1',
      contactId: 'c1',
      campaignId: 'k1',
      topicId: 't1',
      test: false,
    };
    const optOut = await signLink(signer, TOPIC_OPT_OUT_LINK, message);
    expect(await readLink(signer, TOPIC_OPT_OUT_LINK, optOut)).toEqual(message);
    const confirm = { orgId: 'o', contactId: 'c', nonce: 'n', test: true };
    expect(
      await readLink(
        signer,
        CONFIRM_LINK,
        await signLink(signer, CONFIRM_LINK, confirm),
      ),
    ).toEqual(confirm);
  });

  it('writes the same one-letter claims as the tokens already sent, and reads theirs', async () => {
    const token = await signLink(signer, UNSUBSCRIBE_LINK, {
      orgId: 'org1',
      contactId: 'c1',
      campaignId: 'k1',
      test: true,
    });
    expect(await signer.verify(LINK_PURPOSES.unsubscribe, token)).toEqual({
      pur: 'unsubscribe',
      o: 'org1',
      c: 'c1',
      k: 'k1',
      x: 'test',
    });
    // A token signed the old way, letters by hand, reads by name.
    const old = await signer.sign(
      LINK_PURPOSES.confirm,
      { o: 'org1', c: 'c1', n: 'nonce' },
      3600,
    );
    expect(await readLink(signer, CONFIRM_LINK, old)).toEqual({
      orgId: 'org1',
      contactId: 'c1',
      nonce: 'nonce',
      test: false,
    });
  });

  it('refuses a token that lacks a claim of its purpose, or of another purpose', async () => {
    const noNonce = await signer.sign(
      LINK_PURPOSES.confirm,
      { o: 'org1', c: 'c1', n: '' },
      3600,
    );
    await expect(readLink(signer, CONFIRM_LINK, noNonce)).rejects.toThrow(
      InvalidLinkError,
    );
    const unsubscribe = await signLink(signer, UNSUBSCRIBE_LINK, {
      orgId: 'org1',
      contactId: 'c1',
      test: false,
    });
    await expect(
      readLink(signer, TOPIC_OPT_OUT_LINK, unsubscribe),
    ).rejects.toThrow(InvalidLinkError);
  });
});
