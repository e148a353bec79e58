/**
 * One valid request per declared route, built from the resources of a
 * seeded organization. The route matrix and the fuzzing start from these:
 * a route added without an example fails the matrix loudly, so the next
 * developer adds one here (and gets the matrix's checks for free).
 */
import type { ApiClient, TestOrganization } from './api-client.ts';

/** The resources of one organization, one of each kind. */
export interface Seeded extends TestOrganization {
  listId: string;
  contactId: string;
  tagId: string;
  templateId: string;
  topicId: string;
  identityId: string;
  domainId: string;
}

/** A request's inputs, without its key. */
export interface Example {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}

/** The example of each route, by `METHOD /path` as declared. */
export const ROUTE_EXAMPLES: Record<string, (s: Seeded) => Example> = {
  'GET /me': () => ({}),
  'POST /lists': () => ({ body: { name: 'Matrix list' } }),
  'GET /lists': () => ({ query: { page: '1', limit: '20' } }),
  'GET /lists/{listId}': (s) => ({ params: { listId: s.listId } }),
  'GET /contacts': (s) => ({
    query: { listId: s.listId, tagId: s.tagId, status: 'subscribed' },
  }),
  'GET /contacts/{contactId}': (s) => ({ params: { contactId: s.contactId } }),
  'PATCH /contacts/{contactId}': (s) => ({
    params: { contactId: s.contactId },
    body: { firstName: 'Ada' },
  }),
  'POST /lists/{listId}/contacts': (s) => ({
    params: { listId: s.listId },
    body: { email: 'new@example.test', tags: ['vip'] },
  }),
  'POST /lists/{listId}/contacts/bulk': (s) => ({
    params: { listId: s.listId },
    body: { contacts: [{ email: 'bulk@example.test', tags: ['vip'] }] },
  }),
  'POST /contacts/{contactId}/unsubscribe': (s) => ({
    params: { contactId: s.contactId },
  }),
  'POST /contacts/{contactId}/resubscribe': (s) => ({
    params: { contactId: s.contactId },
  }),
  'POST /contacts/{contactId}/tags': (s) => ({
    params: { contactId: s.contactId },
    body: { name: 'gold' },
  }),
  'DELETE /contacts/{contactId}/tags/{tagId}': (s) => ({
    params: { contactId: s.contactId, tagId: s.tagId },
  }),
  'GET /tags': () => ({}),
  'POST /tags': () => ({ body: { name: 'Matrix tag' } }),
  'POST /templates': () => ({
    body: {
      name: 'Matrix template',
      defaultSubject: 'Hello {{firstName}}',
      content: '<p>Hi</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
    },
  }),
  'GET /templates': () => ({}),
  'GET /templates/{templateId}': (s) => ({
    params: { templateId: s.templateId },
  }),
  'PATCH /templates/{templateId}': (s) => ({
    params: { templateId: s.templateId },
    body: { name: 'Renamed' },
  }),
  'DELETE /templates/{templateId}': (s) => ({
    params: { templateId: s.templateId },
  }),
  'POST /templates/{templateId}/test-send': (s) => ({
    params: { templateId: s.templateId },
    body: { email: 'test@example.test' },
  }),
  'POST /render': (s) => ({
    body: { templateId: s.templateId, variables: { firstName: 'Ada' } },
  }),
  'POST /topics': () => ({ body: { name: 'Matrix topic' } }),
  'GET /topics': () => ({}),
  'GET /topics/{topicId}': (s) => ({ params: { topicId: s.topicId } }),
  'PATCH /topics/{topicId}': (s) => ({
    params: { topicId: s.topicId },
    body: { description: 'News' },
  }),
  'DELETE /topics/{topicId}': (s) => ({ params: { topicId: s.topicId } }),
  'GET /topics/{topicId}/opt-outs': (s) => ({
    params: { topicId: s.topicId },
  }),
  'POST /topics/{topicId}/opt-outs': (s) => ({
    params: { topicId: s.topicId },
    body: { contactId: s.contactId },
  }),
  'DELETE /topics/{topicId}/opt-outs/{contactId}': (s) => ({
    params: { topicId: s.topicId, contactId: s.contactId },
  }),
  'GET /settings': () => ({}),
  'PATCH /settings/sending': () => ({ body: { senderName: 'Acme' } }),
  'GET /settings/identities': () => ({}),
  'POST /settings/identities': () => ({
    body: { senderEmail: 'news@matrix.example', senderName: 'News' },
  }),
  'PATCH /settings/identities/{identityId}': (s) => ({
    params: { identityId: s.identityId },
    body: { senderName: 'Renamed' },
  }),
  'DELETE /settings/identities/{identityId}': (s) => ({
    params: { identityId: s.identityId },
  }),
  'PATCH /settings/optin': () => ({ body: { required: false } }),
  'POST /settings/optin/test-send': () => ({
    body: { email: 'test@example.test' },
  }),
  'POST /domains': () => ({ body: { domain: 'matrix-new.example' } }),
  'GET /domains': () => ({}),
  'GET /domains/{domainId}': (s) => ({ params: { domainId: s.domainId } }),
  'DELETE /domains/{domainId}': (s) => ({ params: { domainId: s.domainId } }),
  'POST /domains/{domainId}/verify': (s) => ({
    params: { domainId: s.domainId },
  }),
  'GET /public/confirm': () => ({ query: { token: 'a.b.c' } }),
  'GET /public/unsubscribe': () => ({ query: { token: 'a.b.c' } }),
  'POST /public/unsubscribe': () => ({ query: { token: 'a.b.c' } }),
  'GET /public/topic-opt-out': () => ({ query: { token: 'a.b.c' } }),
  'POST /public/topic-opt-out': () => ({ query: { token: 'a.b.c' } }),
};

/**
 * Fills `{name}` path parameters, percent-encoded as a client's URL
 * encoder would (which sends a lone surrogate as U+FFFD).
 */
export const pathOf = (path: string, params: Record<string, string> = {}) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(
      String(params[name] ?? name).replace(
        /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
        '\uFFFD',
      ),
    ),
  );

const idOf = (answer: { status: number; json: { data?: { id?: string } } }) => {
  const id = answer.json?.data?.id;
  if (!id) {
    throw new Error(
      `seeding failed: ${answer.status} ${JSON.stringify(answer.json)}`,
    );
  }
  return id;
};

/**
 * Creates one resource of each kind in the organization, through the API
 * with the owner key (as a client would).
 */
export const seedOrganization = async (
  client: ApiClient,
  org: TestOrganization,
  label: string,
): Promise<Seeded> => {
  const key = org.ownerKey;
  const listId = idOf(
    await client.post('/lists', { key, body: { name: `${label} list` } }),
  );
  const added = await client.post(`/lists/${listId}/contacts`, {
    key,
    body: { email: `ada@${label}.example`, tags: ['seed'], doubleOptIn: false },
  });
  const contactId = idOf(added);
  const tagId = idOf(
    await client.post('/tags', { key, body: { name: `${label} tag` } }),
  );
  await client.post(`/contacts/${contactId}/tags`, {
    key,
    body: { name: `${label} tag` },
  });
  const templateId = idOf(
    await client.post('/templates', {
      key,
      body: {
        name: `${label} template`,
        defaultSubject: 'Hello',
        content: '<p>Hi</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
      },
    }),
  );
  const topicId = idOf(
    await client.post('/topics', { key, body: { name: `${label} topic` } }),
  );
  await client.post(`/topics/${topicId}/opt-outs`, {
    key,
    body: { contactId },
  });
  const identityId = idOf(
    await client.post('/settings/identities', {
      key,
      body: { senderEmail: `news@${label}.example`, senderName: label },
    }),
  );
  const domainId = idOf(
    await client.post('/domains', {
      key,
      body: { domain: `${label}-${org.orgId.slice(-8)}.example` },
    }),
  );
  return {
    ...org,
    listId,
    contactId,
    tagId,
    templateId,
    topicId,
    identityId,
    domainId,
  };
};
