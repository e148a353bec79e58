/**
 * The export's reader on the embedded engine, where the API cannot set
 * the stage: a recipient kept in the campaign's partition by a send the
 * older code started, campaigns that did not reach the address, and a
 * topic caught halfway through its deletion.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { addContact } from '../../../../shared/audience/contacts.ts';
import { createList } from '../../../../shared/audience/lists.ts';
import {
  type Campaign,
  NEW_DRAFT,
} from '../../../../shared/campaigns/model.ts';
import { ENTITY_TYPE } from '../../../../shared/db/items.ts';
import { keys } from '../../../../shared/db/keys.ts';
import {
  createTopic,
  optOutOfTopic,
} from '../../../../shared/topics/topics.ts';
import { orgWithList, uniqueEmail } from '../../../support/audience.ts';
import { createTestDeps, testEngineClient } from '../../../support/dynamo.ts';

const NOW = '2026-11-23T10:00:00.000Z';

const setup = async () => {
  const { deps, tableName } = await createTestDeps();
  const dynamo = testEngineClient();
  const { orgId, listId } = await orgWithList(deps);
  const email = uniqueEmail('export');
  const { contact } = await addContact(deps, orgId, listId, {
    email,
    doubleOptIn: false,
  });
  const put = (item: Record<string, unknown>) =>
    dynamo.send(new PutCommand({ TableName: tableName, Item: item }));
  /** A campaign to `list`, started (a send accepted) unless a draft. */
  const campaign = async (name: string, list: string, started = true) => {
    const draft: Campaign = {
      id: randomUUID(),
      name,
      subject: `About ${name}`,
      templateId: null,
      listId: list,
      segmentId: null,
      tagId: null,
      sendingIdentityId: null,
      topicId: null,
      origin: null,
      ...NEW_DRAFT,
      createdAt: NOW,
      updatedAt: NOW,
    };
    await deps.campaigns.create(orgId, draft, { html: '<p>Hi</p>' });
    if (started) {
      await deps.campaigns.update(orgId, draft, {
        ...draft,
        status: 'sent',
        startedAt: NOW,
        completedAt: NOW,
      });
    }
    return draft.id;
  };
  return {
    deps,
    tableName,
    dynamo,
    orgId,
    listId,
    email,
    contact,
    put,
    campaign,
  };
};

describe('the export reader', () => {
  it('finds a recipient under the sharded key or, for a send the older code started, in the campaign’s partition; never one of a campaign that did not reach the contact', async () => {
    // Arrange
    const { deps, orgId, listId, contact, put, campaign } = await setup();
    const otherList = await createList(deps, orgId, { name: 'Other' });
    const sharded = await campaign('Sharded', listId);
    const legacy = await campaign('Legacy', listId);
    await campaign('Skipped the address', listId);
    await campaign('Another list', otherList.id);
    await campaign('Draft', listId, false);
    await put({
      ...keys.campaignRecipient(orgId, sharded, contact.id),
      [ENTITY_TYPE]: 'CampaignRecipient',
      contactId: contact.id,
      claimedAt: NOW,
      messageId: 'ses-1',
      deliveredAt: NOW,
      clickedAt: NOW,
      links: new Set(['link-a']),
      seen: new Set(['h1', 'h2']),
    });
    await put({
      ...keys.campaignLink(orgId, sharded, 'link-a'),
      [ENTITY_TYPE]: 'CampaignLink',
      url: 'https://example.test/a',
      clicksTotal: 1,
      clicksUnique: 1,
    });
    await put({
      ...keys.legacyCampaignRecipient(orgId, legacy, contact.id),
      [ENTITY_TYPE]: 'CampaignRecipient',
      contactId: contact.id,
      claimedAt: NOW,
      refused: true,
    });
    // Act
    const mail = await deps.exportReader.mailOf(orgId, [contact]);
    // Assert
    expect(
      mail.sort((a, b) => a.campaignName.localeCompare(b.campaignName)),
    ).toEqual([
      {
        campaignId: legacy,
        campaignName: 'Legacy',
        subject: 'About Legacy',
        seriesId: null,
        listId,
        contactId: contact.id,
        claimedAt: NOW,
        refused: true,
        clickedLinks: [],
      },
      {
        campaignId: sharded,
        campaignName: 'Sharded',
        subject: 'About Sharded',
        seriesId: null,
        listId,
        contactId: contact.id,
        claimedAt: NOW,
        messageId: 'ses-1',
        deliveredAt: NOW,
        clickedAt: NOW,
        clickedLinks: ['https://example.test/a'],
      },
    ]);
  });

  it('leaves out an opt-out whose topic is being deleted (its item gone first), and keeps the others', async () => {
    // Arrange
    const { deps, tableName, dynamo, orgId, email, contact } = await setup();
    const kept = await createTopic(deps, orgId, { name: 'Kept' });
    const going = await createTopic(deps, orgId, { name: 'Going' });
    await optOutOfTopic(deps, orgId, kept.id, contact.id);
    await optOutOfTopic(deps, orgId, going.id, contact.id);
    await dynamo.send(
      new DeleteCommand({
        TableName: tableName,
        Key: keys.topic(orgId, going.id),
      }),
    );
    // Act
    const topics = await deps.exportReader.topicOptOutsOf(orgId, email);
    // Assert
    expect(topics).toEqual([
      {
        topicId: kept.id,
        name: 'Kept',
        contactId: contact.id,
        optedOutAt: expect.any(String),
      },
    ]);
  });

  it('finds nothing for an address the organization does not hold, nor for a contact id of another organization', async () => {
    // Arrange
    const { deps, orgId, contact } = await setup();
    const other = await orgWithList(deps);
    // Act
    const contacts = await deps.exportReader.contactsOf(
      other.orgId,
      contact.email,
    );
    const topics = await deps.exportReader.topicOptOutsOf(
      other.orgId,
      contact.email,
    );
    const address = await deps.exportReader.addressOf(other.orgId, contact.id);
    const own = await deps.exportReader.addressOf(orgId, contact.id);
    // Assert
    expect(contacts).toEqual([]);
    expect(topics).toEqual([]);
    expect(address).toBeUndefined();
    expect(own).toBe(contact.email);
  });
});
