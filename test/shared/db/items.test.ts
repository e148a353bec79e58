import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  ENTITY_TYPE,
  entityType,
  ItemSchemaError,
  itemSchema,
  parseItem,
} from '../../../shared/db/items.ts';
import { keys } from '../../../shared/db/keys.ts';

const TopicItem = itemSchema('Topic', {
  id: v.string(),
  name: v.string(),
  description: v.optional(v.string()),
  optOutCount: v.optional(v.number(), 0),
});

const stored = {
  ...keys.topic('org-1', 'topic-1'),
  ...entityType('Topic'),
  id: 'topic-1',
  name: 'News',
};

/** The error `parseItem` throws for `item`. */
const failureOf = (item: Record<string, unknown>) => {
  try {
    parseItem(TopicItem, item);
  } catch (error) {
    if (error instanceof ItemSchemaError) return error;
    throw error;
  }
  throw new Error('expected an ItemSchemaError');
};

describe('item schemas', () => {
  it('writes the entity type in the one entity-type attribute, _type', () => {
    expect(ENTITY_TYPE).toBe('_type');
    expect(entityType('Contact')).toEqual({ _type: 'Contact' });
  });

  it('parses a stored item into its attributes, without keys or entity type', () => {
    // Act
    const topic = parseItem(TopicItem, { ...stored, description: 'Weekly' });
    // Assert
    expect(topic).toStrictEqual({
      id: 'topic-1',
      name: 'News',
      description: 'Weekly',
      optOutCount: 0,
    });
  });

  it('names the item type, the key and the failing field of a bad item', () => {
    // Act
    const error = failureOf({ ...stored, name: 42 });
    // Assert
    expect(error.type).toBe('Topic');
    expect(error.key).toBe('ORG#org-1 / TOPIC#topic-1');
    expect(error.fields).toEqual(['name']);
    expect(error.message).toMatch(
      /^Stored Topic item ORG#org-1 \/ TOPIC#topic-1 does not match its schema: name: /,
    );
  });

  it('names a missing attribute and every other failing field', () => {
    // Arrange
    const { id: _id, ...withoutId } = stored;
    // Act
    const error = failureOf({ ...withoutId, optOutCount: 'many' });
    // Assert
    expect(error.fields).toEqual(['id', 'optOutCount']);
  });

  it('refuses an item whose entity type is another one', () => {
    // Act
    const error = failureOf({ ...stored, _type: 'TopicName' });
    // Assert
    expect(error.fields).toEqual(['_type']);
    expect(error.message).toContain(
      '_type: Expected "Topic" but received "TopicName"',
    );
  });

  it('accepts a projected item, without keys or entity type', () => {
    expect(parseItem(TopicItem, { id: 't', name: 'n' })).toEqual({
      id: 't',
      name: 'n',
      optOutCount: 0,
    });
  });

  it('names a projected item by the key it was read with', () => {
    // Act
    const error = (() => {
      try {
        return parseItem(TopicItem, { id: 't' }, keys.topic('org-1', 't'));
      } catch (caught) {
        return caught;
      }
    })();
    // Assert
    expect(error).toBeInstanceOf(ItemSchemaError);
    expect((error as ItemSchemaError).key).toBe('ORG#org-1 / TOPIC#t');
  });

  it('says so when a projected item carries no key', () => {
    expect(failureOf({ id: 'topic-1' }).key).toBe('(key not read)');
  });
});
