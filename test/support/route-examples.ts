/**
 * One valid request per declared route, built from the resources of a
 * seeded organization. The route matrix and the fuzzing start from these:
 * a route added without an example fails the matrix loudly, so the next
 * developer adds one here (and gets the matrix's checks for free).
 */
import { assetOf, REDOC_BUNDLE } from '../../functions/docs/assets.ts';
import { LINK_PURPOSES } from '../../shared/links/public-links.ts';
import type { ApiClient, TestOrganization } from './api-client.ts';

/** The resources of one organization, one of each kind. */
export interface Seeded extends TestOrganization {
  listId: string;
  contactId: string;
  /** The address of that contact (`ada@<label>.example`). */
  contactEmail: string;
  tagId: string;
  templateId: string;
  topicId: string;
  /** An option field (`plan`: free, pro). */
  fieldId: string;
  /** An address suppressed by hand (`manual`: an admin lifts it). */
  suppressedEmail: string;
  /** The record of an erasure (of a third contact's address). */
  erasureId: string;
  /** A contact kept for `POST /erasures` (by its address)… */
  erasableEmail: string;
  /** …and one for `POST /contacts/{contactId}/erase`. */
  erasableContactId: string;
  /** A segment over the list: its contacts carrying the tag. */
  segmentId: string;
  /** A draft campaign to the list, narrowed to the tag, with the topic. */
  campaignId: string;
  identityId: string;
  /** A second address of the book, not the default: it can be deleted. */
  spareIdentityId: string;
  domainId: string;
  /**
   * A sequence triggered by the list: version 1 published, version 2 (a
   * copy) open as a draft; its email node keeps its id across versions.
   */
  sequenceId: string;
  sequenceDraftId: string;
  sequenceNodeId: string;
  /** A sequence with version 1 published and no draft: one can be opened. */
  spareSequenceId: string;
  /** A series to the list, its version 1 draft holding an email and a wait. */
  seriesId: string;
  seriesDraftId: string;
  seriesNodeId: string;
  /** A contact awaiting its confirmation (double opt-in). */
  pendingContactId: string;
  /** A sign-up page of the list, a draft drawn with a theme. */
  pageId: string;
  /** A webhook endpoint, enabled, and the delivery of a test event to it. */
  webhookId: string;
  webhookDeliveryId: string;
  /** A spare API key of the owner, made through the API (it can be revoked). */
  apiKeyId: string;
  /**
   * Valid signed tokens of the public links: confirm for the pending
   * contact, the others for the subscribed one.
   */
  tokens: { confirm: string; unsubscribe: string; topicOptOut: string };
}

/** A request's inputs, without its key. */
export interface Example {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}

/** The content of the seeded steps: it renders, and lets its reader leave. */
const COURSE_CONTENT =
  '<p>Hi {{firstName}}</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>';

/** The example of each route, by `METHOD /path` as declared. */
export const ROUTE_EXAMPLES: Record<string, (s: Seeded) => Example> = {
  'GET /me': () => ({}),
  'GET /reputation': () => ({}),
  'POST /lists': () => ({ body: { name: 'Matrix list' } }),
  'GET /lists': () => ({ query: { page: '1', limit: '20' } }),
  'GET /lists/{listId}': (s) => ({ params: { listId: s.listId } }),
  'GET /contacts': (s) => ({
    query: { listId: s.listId, tagId: s.tagId, status: 'subscribed' },
  }),
  'GET /contacts/{contactId}': (s) => ({ params: { contactId: s.contactId } }),
  'GET /contacts/{contactId}/activity': (s) => ({
    params: { contactId: s.contactId },
    query: { limit: '25' },
  }),
  'PATCH /contacts/{contactId}': (s) => ({
    params: { contactId: s.contactId },
    body: { firstName: 'Ada', lastName: 'Lovelace' },
  }),
  'POST /lists/{listId}/contacts': (s) => ({
    params: { listId: s.listId },
    body: {
      email: 'new@example.test',
      firstName: 'New',
      lastName: 'Contact',
      tags: ['vip', 'gold'],
      doubleOptIn: false,
      optinIp: '198.51.100.7',
    },
  }),
  'POST /lists/{listId}/contacts/bulk': (s) => ({
    params: { listId: s.listId },
    body: {
      contacts: [
        { email: 'bulk@example.test', firstName: 'Bulk', tags: ['vip'] },
        { email: 'bulk2@example.test', tags: ['gold'] },
      ],
    },
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
    body: {
      name: 'Renamed',
      defaultSubject: 'Hi {{ firstName | default: "there" }}',
      content: '<p>Hi</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>',
    },
  }),
  'DELETE /templates/{templateId}': (s) => ({
    params: { templateId: s.templateId },
  }),
  'POST /templates/{templateId}/test-send': (s) => ({
    params: { templateId: s.templateId },
    body: { email: 'test@example.test', variables: { firstName: 'Ada' } },
  }),
  'POST /render': (s) => ({
    body: { templateId: s.templateId, variables: { firstName: 'Ada' } },
  }),
  'POST /segments': (s) => ({
    body: {
      name: 'Matrix segment',
      listId: s.listId,
      match: 'any',
      conditions: [
        { field: 'tag', operator: 'has', value: s.tagId },
        { field: 'joinedAt', operator: 'after', value: '2026-01-01T00:00Z' },
      ],
    },
  }),
  'GET /segments': () => ({ query: { page: '1', limit: '20' } }),
  'GET /signup-pages': (s) => ({
    query: { page: '1', limit: '20', status: 'draft', listId: s.listId },
  }),
  'GET /signup-pages/themes': () => ({}),
  'POST /signup-pages': (s) => ({
    body: {
      name: 'Matrix page',
      listId: s.listId,
      theme: 'bold',
      headline: 'Join the matrix',
      fields: { lastName: true },
      // The seeded organization's option field.
      customFields: [{ key: 'plan', required: true, label: 'Your plan' }],
    },
  }),
  'GET /signup-pages/{pageId}': (s) => ({ params: { pageId: s.pageId } }),
  'PATCH /signup-pages/{pageId}': (s) => ({
    params: { pageId: s.pageId },
    body: { name: 'Renamed page', submitLabel: 'Join' },
  }),
  'DELETE /signup-pages/{pageId}': (s) => ({ params: { pageId: s.pageId } }),
  'POST /signup-pages/{pageId}/publish': (s) => ({
    params: { pageId: s.pageId },
  }),
  'POST /signup-pages/{pageId}/unpublish': (s) => ({
    params: { pageId: s.pageId },
  }),
  'GET /segments/{segmentId}': (s) => ({
    params: { segmentId: s.segmentId },
  }),
  'PATCH /segments/{segmentId}': (s) => ({
    params: { segmentId: s.segmentId },
    body: {
      name: 'Renamed segment',
      match: 'all',
      conditions: [
        { field: 'emailDomain', operator: 'isNot', value: 'x.test' },
        { field: 'fields.plan', operator: 'is', value: 'pro' },
      ],
    },
  }),
  'DELETE /segments/{segmentId}': (s) => ({
    params: { segmentId: s.segmentId },
  }),
  'POST /campaigns': (s) => ({
    body: {
      name: 'Matrix campaign',
      subject: 'Hello {{firstName}}',
      templateId: s.templateId,
      listId: s.listId,
      tagId: s.tagId,
      topicId: s.topicId,
      sendingIdentityId: s.identityId,
    },
  }),
  'GET /campaigns': () => ({
    query: { page: '1', limit: '20', status: 'draft' },
  }),
  'GET /campaigns/{campaignId}': (s) => ({
    params: { campaignId: s.campaignId },
  }),
  'PATCH /campaigns/{campaignId}': (s) => ({
    params: { campaignId: s.campaignId },
    body: { name: 'Renamed campaign', tagId: null, listId: s.listId },
  }),
  'DELETE /campaigns/{campaignId}': (s) => ({
    params: { campaignId: s.campaignId },
  }),
  'POST /campaigns/{campaignId}/send': (s) => ({
    params: { campaignId: s.campaignId },
    body: {},
  }),
  'POST /campaigns/{campaignId}/unschedule': (s) => ({
    params: { campaignId: s.campaignId },
  }),
  'POST /campaigns/{campaignId}/pause': (s) => ({
    params: { campaignId: s.campaignId },
  }),
  'POST /campaigns/{campaignId}/resume': (s) => ({
    params: { campaignId: s.campaignId },
  }),
  'POST /campaigns/{campaignId}/cancel': (s) => ({
    params: { campaignId: s.campaignId },
  }),
  'GET /campaigns/{campaignId}/stats': (s) => ({
    params: { campaignId: s.campaignId },
  }),
  'GET /stats': () => ({ query: { from: '2026-01', to: '2026-12' } }),
  'GET /sequences/{sequenceId}/stats': (s) => ({
    params: { sequenceId: s.sequenceId },
  }),
  'POST /campaigns/{campaignId}/test-send': (s) => ({
    params: { campaignId: s.campaignId },
    body: { emails: ['tester@example.test'] },
  }),
  'POST /topics': () => ({
    body: { name: 'Matrix topic', description: 'News of the matrix' },
  }),
  'GET /topics': () => ({}),
  'GET /topics/{topicId}': (s) => ({ params: { topicId: s.topicId } }),
  'PATCH /topics/{topicId}': (s) => ({
    params: { topicId: s.topicId },
    body: { name: 'Renamed topic', description: 'News' },
  }),
  'DELETE /topics/{topicId}': (s) => ({ params: { topicId: s.topicId } }),
  'POST /fields': () => ({
    body: {
      key: 'company',
      label: 'Company',
      type: 'text',
      defaultValue: 'your company',
    },
  }),
  'GET /fields': () => ({}),
  'GET /fields/{fieldId}': (s) => ({ params: { fieldId: s.fieldId } }),
  'PATCH /fields/{fieldId}': (s) => ({
    params: { fieldId: s.fieldId },
    body: { label: 'Plan', options: ['free', 'pro', 'team'] },
  }),
  'DELETE /fields/{fieldId}': (s) => ({ params: { fieldId: s.fieldId } }),
  'POST /webhooks': () => ({
    body: {
      url: 'https://hooks.example.com/matrix',
      events: ['contact.created', 'mail.bounced'],
      description: 'Matrix endpoint',
    },
  }),
  'GET /webhooks': () => ({ query: { page: '1', limit: '20' } }),
  'GET /webhooks/{webhookId}': (s) => ({ params: { webhookId: s.webhookId } }),
  'PATCH /webhooks/{webhookId}': (s) => ({
    params: { webhookId: s.webhookId },
    body: { description: 'Renamed', events: ['contact.created'] },
  }),
  'DELETE /webhooks/{webhookId}': (s) => ({
    params: { webhookId: s.webhookId },
  }),
  'POST /webhooks/{webhookId}/secret/roll': (s) => ({
    params: { webhookId: s.webhookId },
  }),
  'GET /webhooks/{webhookId}/deliveries': (s) => ({
    params: { webhookId: s.webhookId },
    query: { limit: '10' },
  }),
  'GET /webhooks/{webhookId}/deliveries/{deliveryId}': (s) => ({
    params: { webhookId: s.webhookId, deliveryId: s.webhookDeliveryId },
  }),
  'POST /webhooks/{webhookId}/deliveries/{deliveryId}/redeliver': (s) => ({
    params: { webhookId: s.webhookId, deliveryId: s.webhookDeliveryId },
  }),
  'POST /webhooks/{webhookId}/test': (s) => ({
    params: { webhookId: s.webhookId },
    body: { type: 'contact.created' },
  }),
  'POST /exports': (s) => ({ body: { email: s.contactEmail } }),
  'GET /contacts/{contactId}/export': (s) => ({
    params: { contactId: s.contactId },
  }),
  'GET /suppressions': () => ({ query: { limit: '10' } }),
  'GET /suppressions/lifts': () => ({}),
  'GET /suppressions/{email}': (s) => ({
    params: { email: s.suppressedEmail },
  }),
  'POST /suppressions': (s) => ({
    body: {
      addresses: [
        { email: s.suppressedEmail.replace('gone@', 'moved@') },
        {
          email: s.suppressedEmail.replace('gone@', 'elsewhere@'),
          reason: 'imported',
        },
      ],
    },
  }),
  'DELETE /suppressions/{email}': (s) => ({
    params: { email: s.suppressedEmail },
  }),
  'POST /erasures': (s) => ({ body: { email: s.erasableEmail } }),
  'POST /contacts/{contactId}/erase': (s) => ({
    params: { contactId: s.erasableContactId },
  }),
  'GET /erasures': () => ({}),
  'GET /erasures/{erasureId}': (s) => ({
    params: { erasureId: s.erasureId },
  }),
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
  'POST /sequences': (s) => ({
    body: {
      name: 'Matrix welcome',
      triggerType: 'tag_added',
      triggerTargetId: s.tagId,
    },
  }),
  'GET /sequences': () => ({ query: { page: '1', limit: '20' } }),
  'GET /sequences/{sequenceId}': (s) => ({
    params: { sequenceId: s.sequenceId },
  }),
  'PATCH /sequences/{sequenceId}': (s) => ({
    params: { sequenceId: s.sequenceId },
    body: { name: 'Renamed welcome', status: 'active', topicId: s.topicId },
  }),
  'DELETE /sequences/{sequenceId}': (s) => ({
    params: { sequenceId: s.sequenceId },
  }),
  'POST /series': (s) => ({
    body: {
      name: 'Matrix course',
      listId: s.listId,
      startsAt: '2099-01-05T09:00:00+01:00',
      audienceTagId: s.tagId,
    },
  }),
  'GET /series': () => ({}),
  'GET /series/{seriesId}': (s) => ({ params: { seriesId: s.seriesId } }),
  'PATCH /series/{seriesId}': (s) => ({
    params: { seriesId: s.seriesId },
    body: {
      name: 'Renamed course',
      topicId: s.topicId,
      startsAt: '2099-02-01T08:00:00Z',
    },
  }),
  'DELETE /series/{seriesId}': (s) => ({ params: { seriesId: s.seriesId } }),
  'POST /sequences/{sequenceId}/versions': (s) => ({
    params: { sequenceId: s.spareSequenceId },
  }),
  'GET /sequences/{sequenceId}/versions': (s) => ({
    params: { sequenceId: s.sequenceId },
  }),
  'GET /sequences/{sequenceId}/versions/{versionId}': (s) => ({
    params: { sequenceId: s.sequenceId, versionId: s.sequenceDraftId },
  }),
  'DELETE /sequences/{sequenceId}/versions/{versionId}': (s) => ({
    params: { sequenceId: s.sequenceId, versionId: s.sequenceDraftId },
  }),
  'POST /sequences/{sequenceId}/versions/{versionId}/nodes': (s) => ({
    params: { sequenceId: s.seriesId, versionId: s.seriesDraftId },
    body: { type: 'wait', waitHours: 48 },
  }),
  'PATCH /sequences/{sequenceId}/versions/{versionId}/nodes/{nodeId}': (s) => ({
    params: {
      sequenceId: s.seriesId,
      versionId: s.seriesDraftId,
      nodeId: s.seriesNodeId,
    },
    body: { subject: 'Lesson one', content: COURSE_CONTENT },
  }),
  'DELETE /sequences/{sequenceId}/versions/{versionId}/nodes/{nodeId}': (
    s,
  ) => ({
    params: {
      sequenceId: s.sequenceId,
      versionId: s.sequenceDraftId,
      nodeId: s.sequenceNodeId,
    },
  }),
  'POST /sequences/{sequenceId}/versions/{versionId}/publish': (s) => ({
    params: { sequenceId: s.seriesId, versionId: s.seriesDraftId },
  }),
  'GET /settings': () => ({}),
  'PATCH /settings/sending': () => ({
    body: {
      senderEmail: 'hello@matrix.example',
      senderName: 'Acme',
      postalAddress: '1 Main Street\nSpringfield',
      timezone: 'Europe/Paris',
    },
  }),
  'GET /settings/identities': () => ({}),
  'POST /settings/identities': () => ({
    body: {
      senderEmail: 'news@matrix.example',
      senderName: 'News',
      isDefault: false,
    },
  }),
  'PATCH /settings/identities/{identityId}': (s) => ({
    params: { identityId: s.spareIdentityId },
    body: { senderName: 'Renamed' },
  }),
  'DELETE /settings/identities/{identityId}': (s) => ({
    params: { identityId: s.spareIdentityId },
  }),
  'PATCH /settings/optin': () => ({
    body: {
      required: false,
      subject: 'Please confirm',
      content: '<p><a href="{{confirmationUrl}}">Confirm</a></p>',
    },
  }),
  'POST /settings/optin/test-send': () => ({
    body: {
      email: 'test@example.test',
      subject: 'Please confirm',
      content: '<p><a href="{{confirmationUrl}}">Confirm</a></p>',
    },
  }),
  'POST /domains': () => ({ body: { domain: 'matrix-new.example' } }),
  'GET /domains': () => ({}),
  'GET /domains/{domainId}': (s) => ({ params: { domainId: s.domainId } }),
  'DELETE /domains/{domainId}': (s) => ({ params: { domainId: s.domainId } }),
  'POST /domains/{domainId}/verify': (s) => ({
    params: { domainId: s.domainId },
  }),
  'GET /public/confirm': (s) => ({ query: { token: s.tokens.confirm } }),
  'GET /public/unsubscribe': (s) => ({
    query: { token: s.tokens.unsubscribe },
  }),
  'POST /public/unsubscribe': (s) => ({
    query: { token: s.tokens.unsubscribe },
  }),
  'GET /public/topic-opt-out': (s) => ({
    query: { token: s.tokens.topicOptOut },
  }),
  'POST /public/topic-opt-out': (s) => ({
    query: { token: s.tokens.topicOptOut },
  }),
  'GET /api-keys': () => ({ query: { page: '1', limit: '20' } }),
  'POST /api-keys': () => ({
    body: { name: 'Matrix key', scopes: ['read', 'audience'] },
  }),
  'GET /api-keys/{keyId}': (s) => ({ params: { keyId: s.apiKeyId } }),
  'DELETE /api-keys/{keyId}': (s) => ({ params: { keyId: s.apiKeyId } }),
  'GET /openapi.json': () => ({}),
  'GET /docs': () => ({}),
  'GET /docs/{asset}': () => ({
    params: { asset: assetOf(REDOC_BUNDLE).name },
  }),
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
  const contactEmail = `ada@${label}.example`;
  const added = await client.post(`/lists/${listId}/contacts`, {
    key,
    body: { email: contactEmail, tags: ['seed'], doubleOptIn: false },
  });
  const contactId = idOf(added);
  // Contacts for the erasures' examples: erased, they take no other
  // example's resource with them.
  const contactOf = async (name: string) =>
    idOf(
      await client.post(`/lists/${listId}/contacts`, {
        key,
        body: { email: `${name}@${label}.example`, doubleOptIn: false },
      }),
    );
  const erasableEmail = `bo@${label}.example`;
  await contactOf('bo');
  const erasableContactId = await contactOf('cy');
  await contactOf('erased');
  const erasureId = idOf(
    await client.post('/erasures', {
      key,
      body: { email: `erased@${label}.example` },
    }),
  );
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
  const fieldId = idOf(
    await client.post('/fields', {
      key,
      body: {
        key: 'plan',
        label: `${label} plan`,
        type: 'option',
        options: ['free', 'pro'],
      },
    }),
  );
  const suppressedEmail = `gone@${label}.example`;
  await client.post('/suppressions', {
    key,
    body: { addresses: [{ email: suppressedEmail }] },
  });
  await client.post(`/topics/${topicId}/opt-outs`, {
    key,
    body: { contactId },
  });
  const segmentId = idOf(
    await client.post('/segments', {
      key,
      body: {
        name: `${label} segment`,
        listId,
        match: 'all',
        conditions: [{ field: 'tag', operator: 'has', value: tagId }],
      },
    }),
  );
  const identityId = idOf(
    await client.post('/settings/identities', {
      key,
      body: { senderEmail: `news@${label}.example`, senderName: label },
    }),
  );
  const spareIdentityId = idOf(
    await client.post('/settings/identities', {
      key,
      body: { senderEmail: `spare@${label}.example`, isDefault: false },
    }),
  );
  const campaignId = idOf(
    await client.post('/campaigns', {
      key,
      body: {
        name: `${label} campaign`,
        templateId,
        listId,
        tagId,
        topicId,
      },
    }),
  );
  const journeys = await seedJourneys(client, key, {
    listId,
    templateId,
    label,
  });
  const pendingContactId = idOf(
    await client.post(`/lists/${listId}/contacts`, {
      key,
      body: { email: `pending@${label}.example`, doubleOptIn: true },
    }),
  );
  const pending = await client.deps.contacts.findById(
    org.orgId,
    pendingContactId,
  );
  const pageId = idOf(
    await client.post('/signup-pages', {
      key,
      body: { name: `${label} page`, listId, theme: 'classic' },
    }),
  );
  const domainId = idOf(
    await client.post('/domains', {
      key,
      body: { domain: `${label}-${org.orgId.slice(-8)}.example` },
    }),
  );
  const webhookId = idOf(
    await client.post('/webhooks', {
      key,
      body: {
        url: `https://hooks.${label}.example.com/in`,
        events: ['contact.created'],
      },
    }),
  );
  const webhookDeliveryId = idOf(
    await client.post(`/webhooks/${webhookId}/test`, { key }),
  );
  const apiKeyId = idOf(
    await client.post('/api-keys', {
      key,
      body: { name: `${label} spare key`, scopes: ['read'] },
    }),
  );
  // Signed as the emails sign them (shared/audience/confirmation.ts,
  // shared/mail/compose.ts).
  const claims = { o: org.orgId, c: contactId };
  const year = 365 * 24 * 3600;
  const tokens = {
    confirm: await client.deps.links.sign(
      LINK_PURPOSES.confirm,
      {
        o: org.orgId,
        c: pendingContactId,
        n: pending?.confirmationNonce ?? '',
      },
      year,
    ),
    unsubscribe: await client.deps.links.sign(
      LINK_PURPOSES.unsubscribe,
      claims,
      year,
    ),
    topicOptOut: await client.deps.links.sign(
      LINK_PURPOSES.topicOptOut,
      { ...claims, t: topicId },
      year,
    ),
  };
  return {
    ...org,
    tokens,
    listId,
    contactId,
    contactEmail,
    tagId,
    templateId,
    topicId,
    fieldId,
    suppressedEmail,
    erasureId,
    erasableEmail,
    erasableContactId,
    segmentId,
    campaignId,
    identityId,
    spareIdentityId,
    domainId,
    pendingContactId,
    pageId,
    webhookId,
    webhookDeliveryId,
    apiKeyId,
    ...journeys,
  };
};

/**
 * Sequences and a series in the states the examples need: see `Seeded`.
 * Through the API, as a client would build them.
 */
const seedJourneys = async (
  client: ApiClient,
  key: string,
  refs: { listId: string; templateId: string; label: string },
) => {
  const publishedSequence = async (name: string) => {
    const created = await client.post('/sequences', {
      key,
      body: { name, triggerType: 'list_joined', triggerTargetId: refs.listId },
    });
    const id = idOf(created);
    const { json } = await client.get(`/sequences/${id}`, { key });
    const v1 = json.data.draftVersionId as string;
    const nodeId = idOf(
      await client.post(`/sequences/${id}/versions/${v1}/nodes`, {
        key,
        body: { type: 'send_email', templateId: refs.templateId },
      }),
    );
    idOf(await client.post(`/sequences/${id}/versions/${v1}/publish`, { key }));
    return { id, nodeId };
  };
  const sequence = await publishedSequence(`${refs.label} welcome`);
  const sequenceDraftId = idOf(
    await client.post(`/sequences/${sequence.id}/versions`, { key }),
  );
  const spare = await publishedSequence(`${refs.label} spare`);
  const seriesId = idOf(
    await client.post('/series', {
      key,
      body: {
        name: `${refs.label} course`,
        listId: refs.listId,
        startsAt: '2099-01-05T09:00:00Z',
      },
    }),
  );
  const { json } = await client.get(`/series/${seriesId}`, { key });
  const seriesDraftId = json.data.draftVersionId as string;
  const seriesNodeId = idOf(
    await client.post(
      `/sequences/${seriesId}/versions/${seriesDraftId}/nodes`,
      { key, body: { type: 'send_email', templateId: refs.templateId } },
    ),
  );
  return {
    sequenceId: sequence.id,
    sequenceDraftId,
    sequenceNodeId: sequence.nodeId,
    spareSequenceId: spare.id,
    seriesId,
    seriesDraftId,
    seriesNodeId,
  };
};

/**
 * The addresses of a seeded organization, by the name of their field: an
 * address in a body names a person as an id names a resource (another
 * organization's answers as an unknown one).
 */
export const seededAddresses = (s: Seeded): Record<string, string> => ({
  contactEmail: s.contactEmail,
  erasableEmail: s.erasableEmail,
});

/** The ids of a seeded organization, by the name of their field. */
export const seededIds = (s: Seeded): Record<string, string> => ({
  listId: s.listId,
  contactId: s.contactId,
  pendingContactId: s.pendingContactId,
  tagId: s.tagId,
  templateId: s.templateId,
  campaignId: s.campaignId,
  topicId: s.topicId,
  fieldId: s.fieldId,
  suppressedEmail: s.suppressedEmail,
  erasureId: s.erasureId,
  erasableContactId: s.erasableContactId,
  segmentId: s.segmentId,
  identityId: s.identityId,
  spareIdentityId: s.spareIdentityId,
  domainId: s.domainId,
  sequenceId: s.sequenceId,
  sequenceDraftId: s.sequenceDraftId,
  sequenceNodeId: s.sequenceNodeId,
  spareSequenceId: s.spareSequenceId,
  seriesId: s.seriesId,
  seriesDraftId: s.seriesDraftId,
  seriesNodeId: s.seriesNodeId,
  pageId: s.pageId,
  webhookId: s.webhookId,
  webhookDeliveryId: s.webhookDeliveryId,
  apiKeyId: s.apiKeyId,
});
