import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { setTenantStatus } from '../../../shared/adapters/local/local-email-provider.ts';
import { addContact } from '../../../shared/audience/contacts.ts';
import { createList } from '../../../shared/audience/lists.ts';
import { keys } from '../../../shared/db/keys.ts';
import type { Deps } from '../../../shared/deps.ts';
import {
  ConflictError,
  NotFoundError,
  RuleViolationError,
  ValidationError,
} from '../../../shared/errors.ts';
import {
  createOrganization,
  setSendingAllowed,
  setSendingEnabled,
} from '../../../shared/organizations/organizations.ts';
import {
  declareDomain,
  verifyDomain,
} from '../../../shared/sending/domains.ts';
import {
  createIdentity,
  deleteIdentity,
  listIdentities,
  updateIdentity,
} from '../../../shared/sending/identities.ts';
import { tenantNameOf } from '../../../shared/sending/isolation.ts';
import { DEFAULT_OPTIN_CONTENT } from '../../../shared/settings/optin.ts';
import {
  testSendOptin,
  updateOptinSettings,
} from '../../../shared/settings/optin-settings.ts';
import {
  getSettings,
  updateSendingSettings,
} from '../../../shared/settings/settings.ts';
import {
  createTemplate,
  testSendTemplate,
} from '../../../shared/templates/templates.ts';
import { uniqueEmail } from '../../support/audience.ts';
import {
  createTestDeps,
  publishDns,
  testEngineClient,
} from '../../support/dynamo.ts';
import { mailTo } from '../../support/mailbox.ts';

const setup = async () => {
  const test = await createTestDeps({ providerStatusTtlSeconds: 0 });
  const org = await createOrganization(test.deps, {
    name: `Org ${randomUUID()}`,
  });
  await setSendingAllowed(test.deps, { orgId: org.id }, true);
  return { ...test, orgId: org.id };
};

/** Declares and fully verifies a domain for the organization. */
const verifiedDomain = async (deps: Deps, orgId: string) => {
  const domain = `${randomUUID().slice(0, 8)}.example.test`;
  const declared = await declareDomain(deps, orgId, { domain });
  for (const record of declared.dnsRecords.filter(
    (r) => r.type !== 'TXT' || r.purpose === 'ownership',
  )) {
    await publishDns({
      name: record.name,
      type: record.type,
      value: record.value,
      ...(record.priority ? { priority: record.priority } : {}),
    });
  }
  expect((await verifyDomain(deps, orgId, declared.id)).verified).toBe(true);
  return domain;
};

describe('the address book (Settings and sender identities, rules 1–5)', () => {
  it('keeps exactly one default, listed first; the first address becomes it', async () => {
    const { deps, orgId } = await setup();
    const first = await createIdentity(deps, orgId, {
      senderEmail: 'a@acme.test',
      senderName: 'A',
    });
    const second = await createIdentity(deps, orgId, {
      senderEmail: 'b@acme.test',
    });
    const third = await createIdentity(deps, orgId, {
      senderEmail: 'c@acme.test',
      isDefault: true,
    });
    expect(first.isDefault).toBe(true);
    expect(second.isDefault).toBe(false);
    expect(third.isDefault).toBe(true);
    const book = await listIdentities(deps, orgId);
    expect(book.map((i) => [i.senderEmail, i.isDefault])).toEqual([
      ['c@acme.test', true],
      ['a@acme.test', false],
      ['b@acme.test', false],
    ]);
    await updateIdentity(deps, orgId, second.id, { isDefault: true });
    expect(
      (await listIdentities(deps, orgId))
        .filter((i) => i.isDefault)
        .map((i) => i.id),
    ).toEqual([second.id]);
    await expect(
      createIdentity(deps, orgId, { senderEmail: 'A@acme.test' }),
    ).rejects.toThrow(ConflictError);
  });

  it('rule 1: refuses to delete the default while others remain, naming the address', async () => {
    const { deps, orgId } = await setup();
    const main = await createIdentity(deps, orgId, {
      senderEmail: 'main@acme.test',
    });
    await createIdentity(deps, orgId, { senderEmail: 'other@acme.test' });
    const error = await deleteIdentity(deps, orgId, main.id).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RuleViolationError);
    expect((error as Error).message).toContain('main@acme.test');
  });

  it('rule 2: refuses isDefault false, naming the address', async () => {
    const { deps, orgId } = await setup();
    const main = await createIdentity(deps, orgId, {
      senderEmail: 'main@acme.test',
    });
    await expect(
      updateIdentity(deps, orgId, main.id, { isDefault: false }),
    ).rejects.toThrow(/main@acme\.test/);
  });

  it('rule 3: deleting the last address falls back to the application address', async () => {
    const { deps, orgId } = await setup();
    const only = await createIdentity(deps, orgId, {
      senderEmail: 'only@acme.test',
      senderName: 'Only',
    });
    expect((await getSettings(deps, orgId)).sending).toMatchObject({
      effectiveSender: '"Only" <no-reply@mail.localhost.test>',
      effectiveReplyTo: 'only@acme.test',
    });
    expect(await deleteIdentity(deps, orgId, only.id)).toEqual({ id: only.id });
    const settings = await getSettings(deps, orgId);
    expect(settings.sending).toMatchObject({
      senderEmail: null,
      effectiveSender: 'no-reply@mail.localhost.test',
      effectiveReplyTo: null,
    });
  });

  it('rule 4: refuses to delete an address named by a campaign, naming the campaigns', async () => {
    const { deps, orgId, tableName } = await setup();
    await createIdentity(deps, orgId, { senderEmail: 'main@acme.test' });
    const used = await createIdentity(deps, orgId, {
      senderEmail: 'used@acme.test',
    });
    await testEngineClient().send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.campaign(orgId, 'c-1'),
          id: 'c-1',
          name: 'Spring sale',
          sendingIdentityId: used.id,
        },
      }),
    );
    const error = await deleteIdentity(deps, orgId, used.id).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RuleViolationError);
    expect((error as Error).message).toContain('Spring sale');
  });

  it('rule 5: a confirmation email is signed by the default address, and carries the postal address', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    const domain = await verifiedDomain(deps, orgId);
    await updateSendingSettings(deps, orgId, {
      senderEmail: `news@${domain}`,
      senderName: 'Acme News',
      postalAddress: '1 Main St',
    });
    const list = await createList(deps, orgId, { name: 'Rule 5' });
    const email = uniqueEmail('rule5');
    // Act
    await addContact(deps, orgId, list.id, { email, doubleOptIn: true });
    // Assert
    const [mail] = await mailTo(email);
    expect(mail?.from).toBe(`"Acme News" <news@${domain}>`);
    expect(mail?.replyTo ?? []).toEqual([]);
    expect(mail?.body.html).toContain('1 Main St');
  });

  it('applies the sender address rule once a domain is verified, naming both', async () => {
    const { deps, orgId } = await setup();
    const before = await createIdentity(deps, orgId, {
      senderEmail: 'free@anywhere.test',
    });
    const domain = await verifiedDomain(deps, orgId);
    const error = await createIdentity(deps, orgId, {
      senderEmail: 'x@elsewhere.test',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuleViolationError);
    expect((error as Error).message).toContain(domain);
    expect((error as Error).message).toContain('x@elsewhere.test');
    await createIdentity(deps, orgId, { senderEmail: `news@mail.${domain}` });
    // The old default is now off the verified domain: a blocker says so.
    expect((await getSettings(deps, orgId)).readiness.blockers).toEqual([
      'sender_not_on_verified_domain',
    ]);
    await expect(
      updateIdentity(deps, orgId, before.id, {
        senderEmail: 'y@elsewhere.test',
      }),
    ).rejects.toThrow(RuleViolationError);
  });

  it('answers 404 for another organization’s identity', async () => {
    const { deps, orgId } = await setup();
    const other = await setup();
    const theirs = await createIdentity(other.deps, other.orgId, {
      senderEmail: 't@x.test',
    });
    await expect(
      updateIdentity(deps, orgId, theirs.id, { senderName: 'x' }),
    ).rejects.toThrow(NotFoundError);
    await expect(deleteIdentity(deps, orgId, theirs.id)).rejects.toThrow(
      NotFoundError,
    );
  });
});

describe('A2: no organization sends as an address it has not proved', () => {
  const APP = 'no-reply@mail.localhost.test';

  /** Every email the organization sends to `to`: confirmation, opt-in test, template test. */
  const sendEveryKind = async (deps: Deps, orgId: string, to: string) => {
    const list = await createList(deps, orgId, { name: `L ${randomUUID()}` });
    await addContact(deps, orgId, list.id, { email: to, doubleOptIn: true });
    await testSendOptin(deps, orgId, { email: to });
    const template = await createTemplate(deps, orgId, {
      name: `T ${randomUUID()}`,
      defaultSubject: 'Hello',
      content: '<p>Hi <a href="{{unsubscribeUrl}}">unsubscribe</a></p>',
    });
    await testSendTemplate(deps, orgId, template.id, {
      email: to,
      variables: {},
    });
    const mails = await mailTo(to);
    expect(mails).toHaveLength(3);
    return mails.map((mail) => ({ from: mail.from, replyTo: mail.replyTo }));
  };

  it('A2: until a domain is verified, mail goes out from the application address', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    await updateSendingSettings(deps, orgId, {
      senderEmail: 'news@acme.test',
      senderName: 'Security Team',
    });
    const to = uniqueEmail('a2-unverified');
    // Act
    const sent = await sendEveryKind(deps, orgId, to);
    const { sending } = await getSettings(deps, orgId);
    // Assert: effectiveSender says exactly what went out.
    const expected = {
      from: `"Security Team" <${APP}>`,
      replyTo: ['news@acme.test'],
    };
    expect(sent).toEqual([expected, expected, expected]);
    expect(sending).toMatchObject({
      senderEmail: 'news@acme.test',
      effectiveSender: expected.from,
      effectiveReplyTo: 'news@acme.test',
    });
  });

  it('A2: an address on a verified domain of the organization signs its mail, with no Reply-To', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    const domain = await verifiedDomain(deps, orgId);
    await updateSendingSettings(deps, orgId, {
      senderEmail: `news@mail.${domain}`,
      senderName: 'Acme',
    });
    const to = uniqueEmail('a2-verified');
    // Act
    const sent = await sendEveryKind(deps, orgId, to);
    const { sending } = await getSettings(deps, orgId);
    // Assert
    const expected = { from: `"Acme" <news@mail.${domain}>`, replyTo: [] };
    expect(sent).toEqual([expected, expected, expected]);
    expect(sending).toMatchObject({
      effectiveSender: expected.from,
      effectiveReplyTo: null,
    });
  });

  it('A2: while the provider pauses the organization, its test sends go out under the application address, as effectiveSender says', async () => {
    // Arrange: an address on a verified domain; the provider pauses the org.
    const { deps, orgId, providerStateFile } = await setup();
    const domain = await verifiedDomain(deps, orgId);
    await updateSendingSettings(deps, orgId, {
      senderEmail: `news@${domain}`,
      senderName: 'Acme',
    });
    await setTenantStatus(providerStateFile, tenantNameOf(orgId), 'DISABLED');
    const template = await createTemplate(deps, orgId, {
      name: `T ${randomUUID()}`,
      defaultSubject: 'Hello',
      content: '<p>Hi <a href="{{unsubscribeUrl}}">unsubscribe</a></p>',
    });
    const to = uniqueEmail('a2-paused');
    // Act: the settings read sees the suspension; then a test send.
    const { sending, readiness } = await getSettings(deps, orgId);
    const result = await testSendTemplate(deps, orgId, template.id, {
      email: to,
      variables: {},
    });
    const [mail] = await mailTo(to);
    // Assert
    const expected = { from: `"Acme" <${APP}>`, replyTo: [`news@${domain}`] };
    expect(readiness.blockers).toContain('sending_paused');
    expect(result.status).toBe('sent');
    expect({ from: mail?.from, replyTo: mail?.replyTo }).toEqual(expected);
    expect(sending).toMatchObject({
      effectiveSender: expected.from,
      effectiveReplyTo: `news@${domain}`,
    });
  });

  it('A2: refuses an address on a domain (or under a domain) another organization has proved, naming the field and the address', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    const other = await createOrganization(deps, { name: `O ${randomUUID()}` });
    const theirs = await verifiedDomain(deps, other.id);
    await createIdentity(deps, orgId, { senderEmail: 'mine@acme.test' });
    const mine = await createIdentity(deps, orgId, {
      senderEmail: 'two@acme.test',
    });
    const bookBefore = await listIdentities(deps, orgId);
    // Act
    const attempts = await Promise.all([
      updateSendingSettings(deps, orgId, {
        senderEmail: `ceo@${theirs}`,
      }).catch((e: unknown) => e),
      createIdentity(deps, orgId, {
        senderEmail: `ceo@news.${theirs}`,
      }).catch((e: unknown) => e),
      updateIdentity(deps, orgId, mine.id, {
        senderEmail: `ceo@${theirs}`,
      }).catch((e: unknown) => e),
    ]);
    // Assert
    const addresses = [`ceo@${theirs}`, `ceo@news.${theirs}`, `ceo@${theirs}`];
    attempts.forEach((error, i) => {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toContain(addresses[i]);
      expect((error as ValidationError).details).toEqual([
        { field: 'senderEmail', message: expect.stringContaining(theirs) },
      ]);
    });
    expect(await listIdentities(deps, orgId)).toEqual(bookBefore);
  });

  it('A2: refuses an address on the application’s own domain or a subdomain of it, naming the field and the address', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    // Act
    const attempts = await Promise.all(
      [APP, 'security@eu.mail.localhost.test'].map((senderEmail) =>
        updateSendingSettings(deps, orgId, {
          senderEmail,
          senderName: 'Security Team',
        }).catch((e: unknown) => e),
      ),
    );
    // Assert
    for (const [i, error] of attempts.entries()) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toContain(
        [APP, 'security@eu.mail.localhost.test'][i],
      );
      expect((error as ValidationError).details[0]?.field).toBe('senderEmail');
    }
    expect((await getSettings(deps, orgId)).sending.senderEmail).toBeNull();
  });
});

describe('PATCH /settings/sending (the effects table)', () => {
  it('creates the default from senderEmail, renames it, keeps the postal address on the organization', async () => {
    const { deps, orgId } = await setup();
    const created = await updateSendingSettings(deps, orgId, {
      senderEmail: 'hi@acme.test',
      senderName: 'Acme',
    });
    const renamed = await updateSendingSettings(deps, orgId, {
      senderName: 'Acme News',
    });
    const postal = await updateSendingSettings(deps, orgId, {
      postalAddress: '1 Main St\nSpringfield',
    });
    expect(created.sending).toMatchObject({
      senderEmail: 'hi@acme.test',
      senderName: 'Acme',
    });
    expect(renamed.sending).toMatchObject({
      effectiveSender: '"Acme News" <no-reply@mail.localhost.test>',
      effectiveReplyTo: 'hi@acme.test',
    });
    expect(postal.sending.postalAddress).toBe('1 Main St\nSpringfield');
    const cleared = await updateSendingSettings(deps, orgId, {
      postalAddress: null,
    });
    expect(cleared.sending.postalAddress).toBeNull();
  });

  it('senderEmail null removes the default, or answers 400 with more than one address', async () => {
    const { deps, orgId } = await setup();
    await updateSendingSettings(deps, orgId, { senderEmail: 'hi@acme.test' });
    const removed = await updateSendingSettings(deps, orgId, {
      senderEmail: null,
    });
    expect(removed.sending).toMatchObject({
      senderEmail: null,
      effectiveSender: 'no-reply@mail.localhost.test',
    });
    await createIdentity(deps, orgId, { senderEmail: 'a@acme.test' });
    await createIdentity(deps, orgId, { senderEmail: 'b@acme.test' });
    await expect(
      updateSendingSettings(deps, orgId, { senderEmail: null }),
    ).rejects.toThrow(RuleViolationError);
  });

  it('keeps the time zone on the organization: UTC until set, left out unchanged, null back to UTC', async () => {
    const { deps, orgId } = await setup();
    const before = await getSettings(deps, orgId);
    const paris = await updateSendingSettings(deps, orgId, {
      timezone: 'Europe/Paris',
    });
    const unchanged = await updateSendingSettings(deps, orgId, {
      postalAddress: '1 Main St',
    });
    const reset = await updateSendingSettings(deps, orgId, { timezone: null });
    expect(before.sending.timezone).toBe('UTC');
    expect(paris.sending.timezone).toBe('Europe/Paris');
    expect(unchanged.sending.timezone).toBe('Europe/Paris');
    expect(reset.sending.timezone).toBe('UTC');
    expect((await deps.organizations.get(orgId))?.timezone).toBeUndefined();
  });

  it('senderName alone answers 400 when there is no default', async () => {
    const { deps, orgId } = await setup();
    await expect(
      updateSendingSettings(deps, orgId, { senderName: 'Nobody' }),
    ).rejects.toThrow(RuleViolationError);
  });
});

describe('double opt-in settings (PATCH /settings/optin; test send)', () => {
  it('needs {{confirmationUrl}} in the content, naming it', async () => {
    const { deps, orgId } = await setup();
    const error = await updateOptinSettings(deps, orgId, {
      content: '<p>Hello</p>',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details).toEqual([
      { field: 'content', message: 'must contain {{confirmationUrl}}' },
    ]);
  });

  it('stores the default content as empty (customized false), a custom one as is', async () => {
    const { deps, orgId } = await setup();
    const custom = await updateOptinSettings(deps, orgId, {
      required: true,
      content: '<a href="{{confirmationUrl}}">Yes</a>',
    });
    expect(custom).toMatchObject({ required: true, customized: true });
    const back = await updateOptinSettings(deps, orgId, {
      content: DEFAULT_OPTIN_CONTENT,
    });
    expect(back).toMatchObject({
      required: true,
      customized: false,
      content: DEFAULT_OPTIN_CONTENT,
    });
  });

  it('test-sends through the real guards: sent, blocked, not_allowed', async () => {
    const { deps, orgId } = await setup();
    await updateSendingSettings(deps, orgId, {
      senderEmail: 'hello@acme.test',
      senderName: 'Acme',
    });
    const to = uniqueEmail('optin-test');
    const sent = await testSendOptin(deps, orgId, {
      email: to,
      subject: 'Confirm, {{firstName}}',
    });
    const [mail] = await mailTo(to);
    await setSendingEnabled(deps, false);
    const blocked = await testSendOptin(deps, orgId, { email: to });
    await setSendingEnabled(deps, true);
    await setSendingAllowed(deps, { orgId }, false);
    const notAllowed = await testSendOptin(deps, orgId, { email: to });
    expect([sent.status, blocked.status, notAllowed.status]).toEqual([
      'sent',
      'blocked',
      'not_allowed',
    ]);
    expect(mail).toMatchObject({
      from: '"Acme" <no-reply@mail.localhost.test>',
      replyTo: ['hello@acme.test'],
      subject: '[Test] Confirm, Test',
    });
    expect(await mailTo(to)).toHaveLength(1);
  });
});
