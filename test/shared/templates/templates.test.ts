import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { keys } from '../../../shared/db/keys.ts';
import {
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
  CreateTemplateBody,
  RenderBody,
  TestSendBody,
} from '../../../shared/templates/template.schema.ts';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  renderPreview,
  testSendTemplate,
  updateTemplate,
} from '../../../shared/templates/templates.ts';
import { parse } from '../../../shared/validation.ts';
import { uniqueEmail } from '../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../support/dynamo.ts';
import { mailTo } from '../../support/mailbox.ts';

const CONTENT =
  '<p>Hello {{ firstName | default: "friend" }} *|FNAME|*</p><p>{{ coupon }}</p><a href="{{ unsubscribeUrl }}">Unsubscribe</a>';

/** The fields and messages `schema` refuses `input` with ([] when valid). */
const issuesOf = (schema: Parameters<typeof parse>[0], input: unknown) => {
  try {
    parse(schema, input);
  } catch (error) {
    if (error instanceof ValidationError) return error.details;
    throw error;
  }
  return [];
};

const setup = async () => {
  const { deps, tableName } = await createTestDeps();
  const org = await createOrganization(deps, { name: 'Templates Inc' });
  await setSendingAllowed(deps, { orgId: org.id }, true);
  return { deps, orgId: org.id, tableName };
};

describe('templates (Templates and rendering)', () => {
  it('creates a template and reports unsupported tags and unknown variables', async () => {
    const { deps, orgId } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'Welcome',
      defaultSubject: 'Welcome, {{firstName}}',
      content: CONTENT,
    });
    expect(template).toMatchObject({
      id: expect.any(String),
      name: 'Welcome',
      unsupportedTags: ['*|FNAME|*'],
      unknownVariables: ['coupon'],
    });
    expect(await getTemplate(deps, orgId, template.id)).toMatchObject({
      content: CONTENT,
    });
  });

  it('answers 400 naming the field for a syntax error, and stores nothing', async () => {
    const { deps, orgId } = await setup();
    const error = await createTemplate(deps, orgId, {
      name: 'Broken',
      defaultSubject: 'Hi {{ firstName',
      content: '<p>ok</p>',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details[0]?.field).toBe('defaultSubject');
    expect(
      (await listTemplates(deps, orgId, { page: 1, limit: 10 })).total,
    ).toBe(0);
  });

  it('A5: a 4xx writes nothing: content or a subject that parses but cannot render is refused when saved, naming it', async () => {
    // Arrange: a loop the engine's memory limit stops.
    const { deps, orgId } = await setup();
    const loop = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';
    const kept = await createTemplate(deps, orgId, {
      name: 'Kept',
      defaultSubject: 'Hello',
      content: CONTENT,
    });
    // Act
    const created = await createTemplate(deps, orgId, {
      name: 'Endless',
      defaultSubject: 'Hello',
      content: `${CONTENT}${loop}`,
    }).catch((e: unknown) => e);
    const updated = await updateTemplate(deps, orgId, kept.id, {
      name: 'Renamed',
      defaultSubject: `Hello ${loop}`,
    }).catch((e: unknown) => e);
    // Assert
    expect(created).toBeInstanceOf(ValidationError);
    expect(created).toMatchObject({
      code: 'template.invalid',
      details: [{ field: 'content' }],
    });
    expect(updated).toBeInstanceOf(ValidationError);
    expect(updated).toMatchObject({
      code: 'template.invalid',
      details: [{ field: 'defaultSubject' }],
    });
    const page = await listTemplates(deps, orgId, { page: 1, limit: 10 });
    expect(page.items.map((t) => [t.name, t.defaultSubject])).toEqual([
      ['Kept', 'Hello'],
    ]);
  });

  it('lists templates newest first without HTML, updates and deletes them', async () => {
    const { deps, orgId } = await setup();
    const first = await createTemplate(deps, orgId, {
      name: 'A',
      defaultSubject: 'a',
      content: CONTENT,
    });
    const second = await createTemplate(deps, orgId, {
      name: 'B',
      defaultSubject: 'b',
      content: CONTENT,
    });
    const page = await listTemplates(deps, orgId, { page: 1, limit: 10 });
    expect(page.total).toBe(2);
    expect(page.items.map((t) => t.name)).toEqual(['B', 'A']);
    expect(page.items[0]).not.toHaveProperty('content');

    const updated = await updateTemplate(deps, orgId, first.id, {
      name: 'A2',
      content: '<a href="{{unsubscribeUrl}}">bye</a>',
    });
    expect(updated).toMatchObject({
      name: 'A2',
      defaultSubject: 'a',
      unknownVariables: [],
    });

    expect(await deleteTemplate(deps, orgId, second.id)).toEqual({
      id: second.id,
    });
    await expect(getTemplate(deps, orgId, second.id)).rejects.toThrow(
      NotFoundError,
    );
    await expect(deleteTemplate(deps, orgId, second.id)).rejects.toThrow(
      NotFoundError,
    );
    expect(
      (await listTemplates(deps, orgId, { page: 1, limit: 10 })).total,
    ).toBe(1);
  });

  it('leaves campaigns untouched when a template is deleted: they keep their own copy', async () => {
    // Arrange: a campaign created from the template holds a copy of its content.
    const { deps, orgId, tableName } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'Base',
      defaultSubject: 's',
      content: CONTENT,
    });
    const dynamo = testEngineClient();
    const campaign = {
      ...keys.campaign(orgId, 'c-1'),
      id: 'c-1',
      name: 'Spring',
      templateId: template.id,
      subject: 's',
      content: CONTENT,
    };
    await dynamo.send(new PutCommand({ TableName: tableName, Item: campaign }));
    // Act
    await deleteTemplate(deps, orgId, template.id);
    // Assert
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.campaign(orgId, 'c-1'),
      }),
    );
    expect(Item).toEqual(campaign);
  });

  it('answers 404 for another organization’s template, for reads and writes', async () => {
    const { deps, orgId } = await setup();
    const other = await setup();
    const theirs = await createTemplate(other.deps, other.orgId, {
      name: 'T',
      defaultSubject: 's',
      content: CONTENT,
    });
    await expect(getTemplate(deps, orgId, theirs.id)).rejects.toThrow(
      NotFoundError,
    );
    await expect(
      updateTemplate(deps, orgId, theirs.id, { name: 'x' }),
    ).rejects.toThrow(NotFoundError);
    await expect(deleteTemplate(deps, orgId, theirs.id)).rejects.toThrow(
      NotFoundError,
    );
  });
});

describe('template bodies: one-line names and subjects, limits in UTF-8 bytes', () => {
  it('A4: no CR, LF or NUL in a mail header: a name or defaultSubject with a control character is refused naming it; merge values refuse NUL', () => {
    // Arrange
    const content = '<a href="{{unsubscribeUrl}}">Unsubscribe</a>';
    const templateId = randomUUID();
    // Act
    const issues = [
      issuesOf(CreateTemplateBody, {
        name: 'News\u2028Bcc: x',
        defaultSubject: 'Hi\u0085there\r\nBcc: x@evil.test',
        content,
      }),
      issuesOf(RenderBody, { templateId, variables: { coupon: 'a\u0000' } }),
      issuesOf(TestSendBody, {
        email: 'qa@example.test',
        variables: { 'co\r\nupon': 'a' },
      }),
    ];
    // Assert
    const oneLine = 'must not contain control characters or line breaks';
    expect(issues).toEqual([
      [
        { field: 'name', message: oneLine },
        { field: 'defaultSubject', message: oneLine },
      ],
      [
        {
          field: 'variables.coupon',
          message: 'must not contain control characters',
        },
      ],
      [{ field: 'variables.co\r\nupon', message: oneLine }],
    ]);
  });

  it('A7: sizes in bytes: a defaultSubject of 134 × "€" (402 bytes), content of 100,001 × "€" and a merge value of 3,334 × "€" are refused naming them', () => {
    // Arrange: the subject and the value are within the old limits counted
    // in characters (200 and 10,000).
    const templateId = randomUUID();
    const unsubscribe = '<a href="{{unsubscribeUrl}}">Unsubscribe</a>';
    // Act
    const tooLarge = [
      issuesOf(CreateTemplateBody, {
        name: 'a'.repeat(101),
        defaultSubject: '€'.repeat(134),
        content: `${unsubscribe}${'€'.repeat(100_001)}`,
      }),
      issuesOf(RenderBody, {
        templateId,
        variables: { coupon: '€'.repeat(3_334) },
      }),
    ];
    const atTheLimits = [
      issuesOf(CreateTemplateBody, {
        name: '€'.repeat(100),
        defaultSubject: '€'.repeat(133),
        content: `${unsubscribe}${'€'.repeat(99_000)}`,
      }),
      issuesOf(RenderBody, {
        templateId,
        variables: { coupon: '€'.repeat(3_333) },
      }),
    ];
    // Assert
    expect(tooLarge).toEqual([
      [
        { field: 'name', message: 'must be at most 100 characters' },
        {
          field: 'defaultSubject',
          message: 'must be at most 400 bytes of UTF-8',
        },
        { field: 'content', message: 'must be at most 300000 bytes of UTF-8' },
      ],
      [
        {
          field: 'variables.coupon',
          message: 'must be at most 10000 bytes of UTF-8',
        },
      ],
    ]);
    expect(atTheLimits).toEqual([[], []]);
  });
});

describe('POST /render (preview)', () => {
  it('renders subject, escaped HTML and text with the merge values given', async () => {
    const { deps, orgId } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'P',
      defaultSubject: 'For {{firstName}}',
      content: CONTENT,
    });
    const preview = await renderPreview(deps, orgId, {
      templateId: template.id,
      variables: { firstName: '<i>Zoe</i>', coupon: 'SAVE10' },
    });
    expect(preview.subject).toBe('For <i>Zoe</i>');
    expect(preview.html).toContain('Hello &lt;i&gt;Zoe&lt;/i&gt; *|FNAME|*');
    expect(preview.html).toContain('SAVE10');
    expect(preview.html).toContain('/public/unsubscribe?token=');
    expect(preview.text).toContain('SAVE10');
    expect(preview.unknownVariables).toEqual(['coupon']);
    expect(preview.unsupportedTags).toEqual(['*|FNAME|*']);
  });

  it('A6: an escaped merge value stays inert: "><script> and placeholder markers stay escaped inside an attribute', async () => {
    // Arrange: a template with a foreign construct holding quotes, and a
    // value holding the old engine's placeholder of that construct.
    const { deps, orgId } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'Attribute',
      defaultSubject: 'Hi',
      content:
        '<a href="{{ unsubscribeUrl }}" title="{{ coupon }}">Unsubscribe</a>{% include "footer" %}',
    });
    // Act
    const preview = await renderPreview(deps, orgId, {
      templateId: template.id,
      variables: { coupon: '\u{E000}0\u{E001}"><script>alert(1)</script>' },
    });
    // Assert
    expect(preview.html).toContain(
      'title="\u{E000}0\u{E001}&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">',
    );
    expect(preview.html).not.toContain('<script>');
    expect(preview.html.split('{% include "footer" %}')).toHaveLength(2);
  });

  it('A4: no CR, LF or NUL in a mail header: a merge value the subject uses must be one line (400 naming it), one only the HTML uses may hold line breaks', async () => {
    // Arrange
    const { deps, orgId } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'Subject values',
      defaultSubject: 'Hi {{ firstName | append: coupon }}',
      content: `${CONTENT}<p>{{ note }}</p>`,
    });
    const to = uniqueEmail('crlf');
    const variables = {
      firstName: 'a\r\nBcc: x@evil.test',
      coupon: 'b\u2028c',
      note: 'two\r\nlines',
    };
    // Act
    const preview = await renderPreview(deps, orgId, {
      templateId: template.id,
      variables,
    }).catch((e: unknown) => e);
    const testSend = await testSendTemplate(deps, orgId, template.id, {
      email: to,
      variables,
    }).catch((e: unknown) => e);
    const multiline = await renderPreview(deps, orgId, {
      templateId: template.id,
      variables: { note: variables.note },
    });
    // Assert
    for (const error of [preview, testSend]) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).details.map((d) => d.field)).toEqual([
        'variables.coupon',
        'variables.firstName',
      ]);
    }
    expect(await mailTo(to)).toEqual([]);
    // Its lines kept, as <br> (issue 29, defect 7).
    expect(multiline.html).toContain('<p>two<br>\nlines</p>');
  });

  it('answers 400 when the HTML has no {{unsubscribeUrl}}', async () => {
    const { deps, orgId } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'No way out',
      defaultSubject: 's',
      content: '<p>Hello</p>',
    });
    await expect(
      renderPreview(deps, orgId, { templateId: template.id, variables: {} }),
    ).rejects.toThrow(RuleViolationError);
  });
});

describe('POST /templates/{templateId}/test-send', () => {
  it('sends one real email under the application address, with the list-unsubscribe headers', async () => {
    const { deps, orgId } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'T',
      defaultSubject: 'Hello {{firstName}}',
      content: CONTENT,
    });
    const to = uniqueEmail('qa');
    const result = await testSendTemplate(deps, orgId, template.id, {
      email: to,
      variables: { firstName: 'Quinn' },
    });
    const [mail] = await mailTo(to);
    expect(result).toEqual({ status: 'sent', to });
    expect(mail).toMatchObject({
      from: 'no-reply@mail.localhost.test',
      subject: '[Test] Hello Quinn',
    });
    expect(mail?.body.text).toContain('Hello Quinn');
    expect(mail?.headers).toEqual(
      expect.arrayContaining([
        { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
        expect.objectContaining({ name: 'List-Unsubscribe' }),
      ]),
    );
  });

  it('is refused while sending is off application-wide, or for an organization not allowed', async () => {
    const { deps, orgId } = await setup();
    const template = await createTemplate(deps, orgId, {
      name: 'T',
      defaultSubject: 's',
      content: CONTENT,
    });
    const to = uniqueEmail('blocked');
    await setSendingEnabled(deps, false);
    const blocked = await testSendTemplate(deps, orgId, template.id, {
      email: to,
      variables: {},
    });
    await setSendingEnabled(deps, true);
    await setSendingAllowed(deps, { orgId }, false);
    const notAllowed = await testSendTemplate(deps, orgId, template.id, {
      email: to,
      variables: {},
    });
    expect([blocked.status, notAllowed.status]).toEqual([
      'blocked',
      'not_allowed',
    ]);
    expect(await mailTo(to)).toEqual([]);
  });
});
