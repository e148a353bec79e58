/**
 * What the sequence tests through the API start from: an organization
 * with a list, a tag, a topic and a template, and the content of an email
 * that publishes (it renders and lets its reader unsubscribe).
 */
import { type ApiClient, createOrganizationWithKeys } from './api-client.ts';

export const CONTENT =
  '<p>Hello {{firstName}}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

/** An organization with a list, a tag, a topic and a template. */
export const organization = async (client: ApiClient, name = 'Journey Co') => {
  const org = await createOrganizationWithKeys(client, name);
  const key = org.ownerKey;
  const list = await client.post('/lists', { key, body: { name: 'Readers' } });
  const tag = await client.post('/tags', { key, body: { name: 'Trial' } });
  const topic = await client.post('/topics', { key, body: { name: 'Tips' } });
  const template = await client.post('/templates', {
    key,
    body: {
      name: 'Welcome',
      defaultSubject: 'Welcome aboard',
      content: CONTENT,
    },
  });
  return {
    ...org,
    key,
    listId: list.json.data.id as string,
    tagId: tag.json.data.id as string,
    topicId: topic.json.data.id as string,
    templateId: template.json.data.id as string,
  };
};

export type Org = Awaited<ReturnType<typeof organization>>;
