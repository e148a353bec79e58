import { describe, expect, it } from 'vitest';
import { JoseLinkSigner } from '../../../shared/adapters/jose-link-signer.ts';
import { RuleViolationError } from '../../../shared/errors.ts';
import { LINK_PURPOSES } from '../../../shared/links/public-links.ts';
import { composeMessage } from '../../../shared/messaging/composer.ts';
import { fixedClock, TEST_LINK_SECRET } from '../../support/dynamo.ts';

const clock = fixedClock();
const links = new JoseLinkSigner(async () => TEST_LINK_SECRET, clock);
const deps = {
  links,
  clock,
  endpoints: {
    publicApiUrl: 'https://mail.example.test/api/v1',
    appFromAddress: 'no-reply@example.test',
    pagesUrl: 'https://pages.example.test',
  },
};
const contact = {
  id: '01a20000-0000-7000-8000-00000000c0de',
  email: 'ann@example.test',
  firstName: 'Ann <3',
};
const html =
  '<p>Hi {{firstName}}, {{email}}</p><p>{{postalAddress}} © {{currentYear}}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

const tokenOf = (url: string) => new URL(url).searchParams.get('token') ?? '';

describe('the message composer', () => {
  it('sets List-Unsubscribe (https) and List-Unsubscribe-Post for one-click (RFC 8058)', async () => {
    // Act
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News for {{firstName}}',
      html,
      from: 'Acme <news@acme.test>',
      postalAddress: '1 Main St',
    });
    // Assert
    const unsubscribe = /^<(https:\/\/[^>]+)>$/.exec(
      message.headers?.['List-Unsubscribe'] ?? '',
    )?.[1];
    expect(unsubscribe).toMatch(
      /^https:\/\/mail\.example\.test\/api\/v1\/public\/unsubscribe\?token=/,
    );
    expect(message.headers?.['List-Unsubscribe-Post']).toBe(
      'List-Unsubscribe=One-Click',
    );
    expect(message.html).toContain(
      `href="${unsubscribe?.replaceAll('&', '&amp;')}"`,
    );
    expect(
      await links.verify(LINK_PURPOSES.unsubscribe, tokenOf(unsubscribe ?? '')),
    ).toMatchObject({
      o: 'org-1',
      c: contact.id,
    });
  });

  it('A2: carries the Reply-To senderOf gives (the organization’s address while the From is the application’s)', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News',
      html,
      from: '"Acme" <no-reply@example.test>',
      replyTo: 'news@acme.test',
    });
    const withoutReplyTo = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News',
      html,
      from: 'Acme <news@acme.test>',
    });
    expect(message).toMatchObject({
      from: '"Acme" <no-reply@example.test>',
      replyTo: 'news@acme.test',
    });
    expect(withoutReplyTo).not.toHaveProperty('replyTo');
  });

  it('renders subject, escaped HTML and a text part with the contact and organization values', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 'News for {{firstName}}',
      html,
      from: 'Acme <news@acme.test>',
      postalAddress: '1 Main St',
    });
    expect(message).toMatchObject({
      from: 'Acme <news@acme.test>',
      to: 'ann@example.test',
      subject: 'News for Ann <3',
    });
    expect(message.html).toContain('Hi Ann &lt;3, ann@example.test');
    expect(message.html).toContain('1 Main St © 2026');
    expect(message.text).toContain('Hi Ann <3, ann@example.test');
    // Long links wrap onto their own line.
    expect(message.text).toMatch(
      /Unsubscribe\s+\[https:\/\/mail\.example\.test\/api\/v1\/public\/unsubscribe\?token=/,
    );
  });

  it('A4: no CR, LF or NUL in a mail header: a merge value folds to one line in the subject', async () => {
    // Arrange: a stored name and a caller value trying to add a header.
    const injected = 'a\r\nBcc: x@evil.test';
    // Act
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact: { ...contact, firstName: injected, lastName: 'b\u2028c\u0085d' },
      subject: 'News for {{firstName}} {{lastName}} {{coupon}}\r\n',
      html,
      from: 'Acme <news@acme.test>',
      variables: { coupon: 'x\u0000\nTo: y@evil.test' },
    });
    // Assert
    expect(message.subject).toBe(
      'News for a Bcc: x@evil.test b c d x To: y@evil.test ',
    );
    // The HTML keeps the value as it is: a line break is harmless there.
    expect(message.html).toContain('Hi a\r\nBcc: x@evil.test,');
  });

  it('refuses content with {{topicOptOutUrl}} when no topic is set', async () => {
    await expect(
      composeMessage(deps, {
        orgId: 'org-1',
        contact,
        subject: 's',
        html: `${html}<a href="{{topicOptOutUrl}}">Less of this</a>`,
        from: 'a@b.test',
      }),
    ).rejects.toThrow(RuleViolationError);
  });

  it('signs a topic opt-out link naming the topic', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 's',
      html: '<a href="{{topicOptOutUrl}}">Less of this</a>',
      from: 'a@b.test',
      topicId: 'topic-9',
    });
    const url =
      /href="([^"]+)"/.exec(message.html)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(url).toContain('/public/topic-opt-out?token=');
    expect(
      await links.verify(LINK_PURPOSES.topicOptOut, tokenOf(url)),
    ).toMatchObject({
      o: 'org-1',
      c: contact.id,
      t: 'topic-9',
    });
  });

  it('lets no merge value replace the links', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact,
      subject: 's',
      html,
      from: 'a@b.test',
      variables: { unsubscribeUrl: 'https://evil.test/' },
    });
    expect(message.html).not.toContain('evil.test');
  });

  it('marks the links of a test as test links', async () => {
    const message = await composeMessage(deps, {
      orgId: 'org-1',
      contact: { id: 'test', email: 'qa@example.test' },
      subject: 's',
      html,
      from: 'a@b.test',
      test: true,
    });
    const url =
      /<([^>]+)>/.exec(message.headers?.['List-Unsubscribe'] ?? '')?.[1] ?? '';
    expect(
      (await links.verify(LINK_PURPOSES.unsubscribe, tokenOf(url))).x,
    ).toBe('test');
  });
});
