import { describe, expect, it } from 'vitest';
import { keyParsers, keys } from '../../../shared/db/keys.ts';

describe('key parsers', () => {
  it('reads back the organization, list and email of a contact key', () => {
    // Arrange
    const key = keys.contact('org-1', 'list-2', 'ann+news@example.com');
    // Act
    const parsed = keyParsers.contact(key);
    // Assert
    expect(parsed).toEqual({
      orgId: 'org-1',
      listId: 'list-2',
      email: 'ann+news@example.com',
    });
  });

  it('answers undefined for the keys of other access patterns', () => {
    // Act / Assert
    expect(
      keyParsers.contact(keys.contactById('org-1', 'c-1')),
    ).toBeUndefined();
    expect(keyParsers.contact(keys.list('org-1', 'list-2'))).toBeUndefined();
    expect(
      keyParsers.contact(keys.topicOptOut('org-1', 't-1', 'a@b.test')),
    ).toBeUndefined();
    expect(keyParsers.contact({ PK: 1, SK: undefined })).toBeUndefined();
  });
});
