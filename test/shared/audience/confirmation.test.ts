import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { addContact, getContact } from '../../../shared/audience/contacts.ts';
import { keys } from '../../../shared/db/keys.ts';
import { updateOptinSettings } from '../../../shared/settings/optin-settings.ts';
import { orgWithList, uniqueEmail } from '../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../support/dynamo.ts';
import { mailTo } from '../../support/mailbox.ts';

// A loop the engine's memory limit stops: it parses, it cannot render.
const LOOP = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';

const setup = async () => {
  const test = await createTestDeps();
  const { orgId, listId } = await orgWithList(test.deps);
  return { ...test, orgId, listId };
};

describe('the confirmation email of a contact added with double opt-in', () => {
  it('A5: a 4xx writes nothing: content stored unrenderable makes the add a success whose confirmation failed', async () => {
    // Arrange: content written past the save-time check (as older data is).
    const { deps, events, tableName, orgId, listId } = await setup();
    await testEngineClient().send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.optinSettings(orgId),
          _type: 'OptinSettings',
          required: true,
          subject: 'Please confirm',
          content: `<a href="{{confirmationUrl}}">Yes</a>${LOOP}`,
        },
      }),
    );
    const email = uniqueEmail('unrenderable');
    // Act
    const result = await addContact(deps, orgId, listId, { email });
    // Assert: stored pending, and the answer says the email failed.
    expect(result).toMatchObject({
      created: true,
      contact: { email, status: 'pending' },
      confirmation: { status: 'failed', reason: 'content_invalid' },
    });
    expect(await getContact(deps, orgId, result.contact.id)).toMatchObject({
      status: 'pending',
    });
    expect(await events.settle()).toEqual([]);
    expect(await mailTo(email)).toEqual([]);
  });

  it('A5: content that renders with sample values but not for one contact: the add succeeds, its confirmation failed', async () => {
    // Arrange: the loop runs only for one first name.
    const { deps, orgId, listId } = await setup();
    await updateOptinSettings(deps, orgId, {
      required: true,
      content: `<a href="{{confirmationUrl}}">Yes</a>{% if firstName == "Loop" %}${LOOP}{% endif %}`,
    });
    const email = uniqueEmail('loop');
    // Act
    const result = await addContact(deps, orgId, listId, {
      email,
      firstName: 'Loop',
    });
    // Assert
    expect(result.contact.status).toBe('pending');
    expect(result.confirmation).toEqual({
      status: 'failed',
      reason: 'content_invalid',
    });
    expect(await mailTo(email)).toEqual([]);
  });

  it('A4: a stored name with CR/LF reaches the confirmation subject as one line', async () => {
    // Arrange: a subject using the name; a name stored before names were
    // checked would hold a line break.
    const { deps, orgId, listId } = await setup();
    await updateOptinSettings(deps, orgId, {
      required: true,
      subject: 'Confirm, {{ firstName }}',
    });
    const email = uniqueEmail('crlf');
    // Act
    const result = await addContact(deps, orgId, listId, {
      email,
      firstName: 'a\r\nBcc: x@evil.test',
    });
    // Assert
    expect(result.confirmation).toEqual({ status: 'sent' });
    const [mail] = await mailTo(email);
    expect(mail?.subject).toBe('Confirm, a Bcc: x@evil.test');
  });
});
