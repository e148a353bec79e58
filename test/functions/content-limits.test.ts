import { beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups } from '../../functions/groups.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';

const fieldsOf = (answer: { json: { details?: { field: string }[] } }) =>
  (answer.json.details ?? []).map((detail) => detail.field);

describe('stored content through the pipeline: refused with 400 naming the field, and nothing written', () => {
  let client: ApiClient;
  let org: TestOrganization;

  beforeAll(async () => {
    client = await createApiClient({
      groups: endpointGroups.filter((group) =>
        ['settings', 'templates'].includes(group.name),
      ),
    });
    org = await createOrganizationWithKeys(client);
  });

  it('A7: sizes in bytes: opt-in content of 150,000 × "€" (450,000 bytes) answers 400 naming content, and stores nothing', async () => {
    // Arrange
    const before = await client.scan();
    // Act
    const answer = await client.patch('/settings/optin', {
      key: org.ownerKey,
      body: {
        required: true,
        content: `<a href="{{confirmationUrl}}">Yes</a>${'€'.repeat(150_000)}`,
      },
    });
    // Assert
    expect(answer.status).toBe(400);
    expect(fieldsOf(answer)).toEqual(['content']);
    expect(await client.scan()).toEqual(before);
  });

  it('A4: a template name or defaultSubject with CR, LF or NUL answers 400 naming it, and stores nothing', async () => {
    // Arrange
    const before = await client.scan();
    const content = '<a href="{{unsubscribeUrl}}">Unsubscribe</a>';
    // Act
    const answers = [
      await client.post('/templates', {
        key: org.ownerKey,
        body: { name: 'News\r\nBcc: x', defaultSubject: 'Hi', content },
      }),
      await client.post('/templates', {
        key: org.ownerKey,
        body: { name: 'News', defaultSubject: 'Hi\r\nBcc: x', content },
      }),
      await client.post('/templates', {
        key: org.ownerKey,
        body: { name: 'News', defaultSubject: 'Hi\u0000', content },
      }),
    ];
    // Assert
    expect(answers.map((a) => [a.status, fieldsOf(a)])).toEqual([
      [400, ['name']],
      [400, ['defaultSubject']],
      [400, ['defaultSubject']],
    ]);
    expect(await client.scan()).toEqual(before);
  });
});
