import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.ts';
import {
  createOrganization,
  setSendingAllowed,
} from '../../../shared/organizations/organizations.ts';
import { DEFAULT_OPTIN_SETTINGS } from '../../../shared/settings/optin.ts';
import {
  OptinTestSendBody,
  UpdateOptinBody,
  updateOptinSettings,
} from '../../../shared/settings/optin-settings.ts';
import { parse } from '../../../shared/validation.ts';
import { createTestDeps } from '../../support/dynamo.ts';

const setup = async () => {
  const test = await createTestDeps();
  const org = await createOrganization(test.deps, {
    name: `Org ${randomUUID()}`,
  });
  await setSendingAllowed(test.deps, { orgId: org.id }, true);
  return { ...test, orgId: org.id };
};

const issuesOf = (schema: Parameters<typeof parse>[0], input: unknown) => {
  try {
    parse(schema, input);
  } catch (error) {
    if (error instanceof ValidationError) return error.details;
    throw error;
  }
  return [];
};

// A loop the engine's memory limit stops: it parses, it cannot render.
const LOOP = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';

describe('opt-in settings (PATCH /settings/optin; test send)', () => {
  it('A5: a 4xx writes nothing: content or a subject that parses but cannot render is refused when saved, naming it', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    // Act
    const content = await updateOptinSettings(deps, orgId, {
      required: true,
      content: `<a href="{{confirmationUrl}}">Yes</a>${LOOP}`,
    }).catch((e: unknown) => e);
    const subject = await updateOptinSettings(deps, orgId, {
      required: true,
      subject: `Confirm ${LOOP}`,
    }).catch((e: unknown) => e);
    // Assert
    expect(content).toBeInstanceOf(ValidationError);
    expect(content).toMatchObject({
      code: 'template.invalid',
      details: [{ field: 'content' }],
    });
    expect(subject).toBeInstanceOf(ValidationError);
    expect(subject).toMatchObject({
      code: 'template.invalid',
      details: [{ field: 'subject' }],
    });
    expect(await deps.optinSettings.get(orgId)).toEqual(DEFAULT_OPTIN_SETTINGS);
  });

  it('A4: no CR, LF or NUL in a mail header: a subject with a control character is refused, naming it', () => {
    // Arrange
    const subjects = [
      'Confirm\r\nBcc: x@evil.test',
      'Confirm\nnow',
      'Confirm\u0000',
      'Confirm\u0085now',
      'Confirm\u2028now',
    ];
    // Act
    const update = subjects.map((subject) =>
      issuesOf(UpdateOptinBody, { subject }),
    );
    const testSend = subjects.map((subject) =>
      issuesOf(OptinTestSendBody, { email: 'a@example.test', subject }),
    );
    // Assert
    for (const issues of [...update, ...testSend]) {
      expect(issues).toEqual([
        {
          field: 'subject',
          message: 'must not contain control characters or line breaks',
        },
      ]);
    }
  });

  it('A7: sizes in bytes: content of 150,000 × "€" (450,000 bytes of UTF-8) is refused naming content; a subject of 134 × "€" (402 bytes) too', () => {
    // Arrange: both within the old limits counted in characters.
    const content = `<a href="{{confirmationUrl}}">Yes</a>${'€'.repeat(150_000)}`;
    const subject = '€'.repeat(134);
    // Act
    const issues = issuesOf(UpdateOptinBody, { content, subject });
    // Assert
    expect(issues).toEqual([
      { field: 'subject', message: 'must be at most 400 bytes of UTF-8' },
      { field: 'content', message: 'must be at most 300000 bytes of UTF-8' },
    ]);
    expect(
      issuesOf(UpdateOptinBody, {
        content: `<a href="{{confirmationUrl}}">Yes</a>${'€'.repeat(99_000)}`,
        subject: '€'.repeat(133),
      }),
    ).toEqual([]);
  });
});
