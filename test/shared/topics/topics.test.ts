import { describe, expect, it } from 'vitest';
import { addContact } from '../../../shared/audience/contacts.ts';
import { ConflictError, NotFoundError } from '../../../shared/errors.ts';
import {
  createTopic,
  deleteTopic,
  getTopic,
  listTopicOptOuts,
  listTopics,
  optOutOfTopic,
  recipientsWhoDeclined,
  undoTopicOptOut,
  updateTopic,
} from '../../../shared/topics/topics.ts';
import { orgWithList } from '../../support/audience.ts';
import { createTestDeps } from '../../support/dynamo.ts';

const setup = async () => {
  const { deps } = await createTestDeps();
  const { orgId, listId } = await orgWithList(deps);
  return { deps, orgId, listId };
};

describe('topics (Topics)', () => {
  it('creates, reads, lists, renames and describes topics', async () => {
    const { deps, orgId } = await setup();
    const news = await createTopic(deps, orgId, {
      name: 'News',
      description: 'Weekly news',
    });
    await createTopic(deps, orgId, { name: 'Offers' });
    const renamed = await updateTopic(deps, orgId, news.id, {
      name: 'Newsroom',
      description: null,
    });
    expect(renamed).toMatchObject({
      name: 'Newsroom',
      description: null,
      optOutCount: 0,
    });
    expect(await getTopic(deps, orgId, news.id)).toMatchObject({
      name: 'Newsroom',
    });
    const page = await listTopics(deps, orgId, { page: 1, limit: 10 });
    expect(page.items.map((t) => t.name)).toEqual(['Offers', 'Newsroom']);
    // The old name is free again.
    await createTopic(deps, orgId, { name: 'news' });
  });

  it('answers 409 for a taken name, case-insensitively, on create and rename', async () => {
    const { deps, orgId } = await setup();
    await createTopic(deps, orgId, { name: 'Events' });
    const other = await createTopic(deps, orgId, { name: 'Jobs' });
    await expect(createTopic(deps, orgId, { name: 'EVENTS' })).rejects.toThrow(
      ConflictError,
    );
    await expect(
      updateTopic(deps, orgId, other.id, { name: 'events ' }),
    ).rejects.toThrow(ConflictError);
    expect((await getTopic(deps, orgId, other.id)).name).toBe('Jobs');
  });

  it('keeps names per organization, and another organization’s topic is 404', async () => {
    const { deps, orgId } = await setup();
    const other = await setup();
    const theirs = await createTopic(other.deps, other.orgId, {
      name: 'Shared name',
    });
    await createTopic(deps, orgId, { name: 'Shared name' });
    await expect(getTopic(deps, orgId, theirs.id)).rejects.toThrow(
      NotFoundError,
    );
    await expect(deleteTopic(deps, orgId, theirs.id)).rejects.toThrow(
      NotFoundError,
    );
  });
});

describe('topic opt-outs', () => {
  it('records and undoes an opt-out by address, idempotently, with an exact count', async () => {
    // Arrange
    const { deps, orgId, listId } = await setup();
    const topic = await createTopic(deps, orgId, { name: 'Offers' });
    const { contact } = await addContact(deps, orgId, listId, {
      email: 'pat@example.test',
    });
    // Act
    const first = await optOutOfTopic(deps, orgId, topic.id, contact.id);
    const again = await optOutOfTopic(deps, orgId, topic.id, contact.id);
    const listed = await listTopicOptOuts(deps, orgId, topic.id, {
      page: 1,
      limit: 10,
    });
    const counted = await getTopic(deps, orgId, topic.id);
    const undone = await undoTopicOptOut(deps, orgId, topic.id, contact.id);
    const undoneAgain = await undoTopicOptOut(
      deps,
      orgId,
      topic.id,
      contact.id,
    );
    // Assert
    expect([first.created, again.created]).toEqual([true, false]);
    expect(listed.items).toEqual([
      {
        topicId: topic.id,
        email: 'pat@example.test',
        contactId: contact.id,
        optedOutAt: expect.any(String),
      },
    ]);
    expect(counted.optOutCount).toBe(1);
    expect([undone.removed, undoneAgain.removed]).toEqual([true, false]);
    expect((await getTopic(deps, orgId, topic.id)).optOutCount).toBe(0);
  });

  it('tells a sender which recipients to skip, across the organization’s lists', async () => {
    const { deps, orgId, listId } = await setup();
    const topic = await createTopic(deps, orgId, { name: 'Offers' });
    const { contact } = await addContact(deps, orgId, listId, {
      email: 'skip@example.test',
    });
    await optOutOfTopic(deps, orgId, topic.id, contact.id);
    const skipped = await recipientsWhoDeclined(deps, orgId, topic.id, [
      'skip@example.test',
      'keep@example.test',
    ]);
    expect([...skipped]).toEqual(['skip@example.test']);
  });

  it('deletes a topic with its opt-outs', async () => {
    const { deps, orgId, listId } = await setup();
    const topic = await createTopic(deps, orgId, { name: 'Gone' });
    const { contact } = await addContact(deps, orgId, listId, {
      email: 'g@example.test',
    });
    await optOutOfTopic(deps, orgId, topic.id, contact.id);
    await deleteTopic(deps, orgId, topic.id);
    await expect(getTopic(deps, orgId, topic.id)).rejects.toThrow(
      NotFoundError,
    );
    expect(
      (await recipientsWhoDeclined(deps, orgId, topic.id, ['g@example.test']))
        .size,
    ).toBe(0);
    expect((await listTopics(deps, orgId, { page: 1, limit: 10 })).total).toBe(
      0,
    );
  });

  it('answers 404 for an unknown topic or another organization’s contact, writing nothing', async () => {
    const { deps, orgId } = await setup();
    const other = await setup();
    const topic = await createTopic(deps, orgId, { name: 'T' });
    const { contact } = await addContact(
      other.deps,
      other.orgId,
      other.listId,
      { email: 'x@example.test' },
    );
    await expect(
      optOutOfTopic(deps, orgId, topic.id, contact.id),
    ).rejects.toThrow(NotFoundError);
    await expect(
      optOutOfTopic(
        deps,
        orgId,
        '01a20000-0000-7000-8000-000000000000',
        contact.id,
      ),
    ).rejects.toThrow(NotFoundError);
    expect((await getTopic(deps, orgId, topic.id)).optOutCount).toBe(0);
  });
});
