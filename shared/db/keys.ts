/**
 * Key builders: the only place where key strings are put together. One
 * function per access pattern, named in domain terms. Every tenant-owned key
 * takes the organization id first, so a read cannot cross tenants.
 */

/** A primary key. */
export interface Key {
  PK: string;
  SK: string;
}

/** A partition and the sort-key prefix of the items to query in it. */
export interface QueryKey {
  PK: string;
  skPrefix: string;
}

/** A partition and the inclusive range of the sort keys to query in it. */
export interface KeyRange {
  PK: string;
  from: string;
  to: string;
}

const org = (orgId: string) => `ORG#${orgId}`;

/** Partitions a campaign's recipients are spread over. */
export const RECIPIENT_SHARDS = 16;

/**
 * The recipient partition of a contact: its id's FNV-1a hash, modulo
 * {@link RECIPIENT_SHARDS}, as two digits (`00`…`15`).
 */
export const recipientShardOf = (contactId: string): string => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < contactId.length; i++) {
    hash ^= contactId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return String((hash >>> 0) % RECIPIENT_SHARDS).padStart(2, '0');
};

/** Every key builder of the table. */
export const keys = {
  /** The organization itself (name, slug, allowlist flag, list counter). */
  organization: (orgId: string): Key => ({ PK: org(orgId), SK: 'ORG' }),
  /** Reserves a slug for one organization (application-wide uniqueness). */
  organizationSlug: (slug: string): Key => ({
    PK: `SLUG#${slug}`,
    SK: 'SLUG',
  }),
  /** A user by normalized email (users are application-wide). */
  userByEmail: (email: string): Key => ({ PK: `USER#${email}`, SK: 'USER' }),
  /** A user's membership in an organization, with the ids of its keys. */
  member: (orgId: string, userId: string): Key => ({
    PK: org(orgId),
    SK: `MEMBER#${userId}`,
  }),
  /** The members of an organization (the index of their keys). */
  membersOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'MEMBER#',
  }),
  /** An API key by id: the key value carries the id, so one read resolves it. */
  apiKey: (keyId: string): Key => ({ PK: `APIKEY#${keyId}`, SK: 'APIKEY' }),
  /** The rolling request log of one key (the last admitted instants). */
  rateLog: (keyId: string): Key => ({ PK: `RATE#${keyId}`, SK: 'RATE' }),
  /**
   * When a key was last used (to the hour): written on the request path
   * like the request log, so it lives in the same partition of the key's
   * request bookkeeping, apart from the key record.
   */
  apiKeyLastUse: (keyId: string): Key => ({
    PK: `RATE#${keyId}`,
    SK: 'LASTUSE',
  }),
  /** A key's entry in its organization's collection of keys (a pointer). */
  apiKeyOfOrganization: (orgId: string, keyId: string): Key => ({
    PK: org(orgId),
    SK: `APIKEY#${keyId}`,
  }),
  /** The organization's keys, by time-ordered id (counted: `APIKEY$count`). */
  apiKeysOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'APIKEY#',
  }),
  /**
   * The record of one Idempotency-Key of one API key: a partition of its
   * own (its id is a hash of the key's scope), so records never crowd one.
   */
  idempotencyRecord: (orgId: string, recordId: string): Key => ({
    PK: `${org(orgId)}#IDEMPOTENCY#${recordId}`,
    SK: 'IDEMPOTENCY',
  }),
  /** Application-wide settings (sending switch). */
  appSettings: (): Key => ({ PK: 'APP', SK: 'SETTINGS' }),
  /** One list of an organization. */
  list: (orgId: string, listId: string): Key => ({
    PK: org(orgId),
    SK: `LIST#${listId}`,
  }),
  /** All lists of an organization, in id (creation) order. */
  listsOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'LIST#',
  }),
  /** Reserves a list name in an organization, case-insensitively. */
  listName: (orgId: string, name: string): Key => ({
    PK: org(orgId),
    SK: `LISTNAME#${name.trim().toLowerCase()}`,
  }),
  /** A contact of a list, by normalized email: the upsert key. */
  contact: (orgId: string, listId: string, email: string): Key => ({
    PK: `${org(orgId)}#LIST#${listId}`,
    SK: `CONTACT#${email}`,
  }),
  /** All contacts of a list, by email. */
  contactsOfList: (orgId: string, listId: string): QueryKey => ({
    PK: `${org(orgId)}#LIST#${listId}`,
    skPrefix: 'CONTACT#',
  }),
  /**
   * A contact of a list carrying a tag: the tag filter's index, one item per
   * list × tag × contact, written from the table's change stream.
   */
  taggedContact: (
    orgId: string,
    listId: string,
    tagId: string,
    email: string,
  ): Key => ({
    PK: `${org(orgId)}#LIST#${listId}#TAG#${tagId}`,
    SK: `CONTACT#${email}`,
  }),
  /**
   * The topics an address declined in an organization (ids) and a
   * `version`: what a contact write reads to move the topics' per-list
   * counters, and checks in its transaction; an opt-out changes it.
   */
  declinedTopics: (orgId: string, email: string): Key => ({
    PK: `${org(orgId)}#DECLINED`,
    SK: `EMAIL#${email}`,
  }),
  /**
   * A topic's per-list counters (`declinedInList#<listId>`: subscribed
   * contacts of the list whose address declined it), beside its opt-outs.
   */
  topicAudience: (orgId: string, topicId: string): Key => ({
    PK: `${org(orgId)}#TOPIC#${topicId}`,
    SK: 'AUDIENCE',
  }),
  /** The contacts of a list carrying a tag, by email. */
  taggedContactsOfList: (
    orgId: string,
    listId: string,
    tagId: string,
  ): QueryKey => ({
    PK: `${org(orgId)}#LIST#${listId}#TAG#${tagId}`,
    skPrefix: 'CONTACT#',
  }),
  /** Where a contact id points: its list and email (one item per contact). */
  contactById: (orgId: string, contactId: string): Key => ({
    PK: `${org(orgId)}#CONTACT#${contactId}`,
    SK: 'CONTACT',
  }),
  /**
   * One event of a contact's activity (with a TTL): the event's id (its
   * instant, then what it comes from) is the sort key, so a descending
   * Query reads the newest first.
   */
  contactActivity: (
    orgId: string,
    contactId: string,
    eventId: string,
  ): Key => ({
    PK: `${org(orgId)}#CONTACT#${contactId}#ACTIVITY`,
    SK: eventId,
  }),
  /** A contact's whole activity: one partition per contact. */
  activityOfContact: (orgId: string, contactId: string): QueryKey => ({
    PK: `${org(orgId)}#CONTACT#${contactId}#ACTIVITY`,
    skPrefix: '',
  }),
  /** One tag of an organization, with its carrier counter. */
  tag: (orgId: string, tagId: string): Key => ({
    PK: org(orgId),
    SK: `TAG#${tagId}`,
  }),
  /** All tags of an organization, in id (creation) order. */
  tagsOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'TAG#',
  }),
  /** Reserves a tag name in an organization, case-insensitively. */
  tagName: (orgId: string, nameKey: string): Key => ({
    PK: org(orgId),
    SK: `TAGNAME#${nameKey}`,
  }),
  /** One template of an organization (with its HTML). */
  template: (orgId: string, templateId: string): Key => ({
    PK: org(orgId),
    SK: `TEMPLATE#${templateId}`,
  }),
  /** All templates of an organization, in id (creation) order. */
  templatesOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'TEMPLATE#',
  }),
  /** One topic of an organization, with its opt-out counter. */
  topic: (orgId: string, topicId: string): Key => ({
    PK: org(orgId),
    SK: `TOPIC#${topicId}`,
  }),
  /** All topics of an organization, in id (creation) order. */
  topicsOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'TOPIC#',
  }),
  /** One custom field of an organization. */
  field: (orgId: string, fieldId: string): Key => ({
    PK: org(orgId),
    SK: `FIELD#${fieldId}`,
  }),
  /** All custom fields of an organization, in id (creation) order. */
  fieldsOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'FIELD#',
  }),
  /** Reserves a field's key in an organization. */
  fieldKey: (orgId: string, key: string): Key => ({
    PK: org(orgId),
    SK: `FIELDKEY#${key}`,
  }),
  /** Reserves a topic name in an organization, case-insensitively. */
  topicName: (orgId: string, nameKey: string): Key => ({
    PK: org(orgId),
    SK: `TOPICNAME#${nameKey}`,
  }),
  /** An email address that declined a topic. */
  topicOptOut: (orgId: string, topicId: string, email: string): Key => ({
    PK: `${org(orgId)}#TOPIC#${topicId}`,
    SK: `OPTOUT#${email}`,
  }),
  /** Every address that declined a topic, by email. */
  topicOptOuts: (orgId: string, topicId: string): QueryKey => ({
    PK: `${org(orgId)}#TOPIC#${topicId}`,
    skPrefix: 'OPTOUT#',
  }),
  /** One segment of an organization, with the series that use it. */
  segment: (orgId: string, segmentId: string): Key => ({
    PK: org(orgId),
    SK: `SEGMENT#${segmentId}`,
  }),
  /** All segments of an organization, in id (creation) order. */
  segmentsOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'SEGMENT#',
  }),
  /** One sign-up page of an organization (its row and content). */
  signupPage: (orgId: string, pageId: string): Key => ({
    PK: org(orgId),
    SK: `SIGNUPPAGE#${pageId}`,
  }),
  /** The sanitized HTML of a pasted sign-up page, beside the page. */
  signupPageHtml: (orgId: string, pageId: string): Key => ({
    PK: org(orgId),
    SK: `SIGNUPHTML#${pageId}`,
  }),
  /** All sign-up pages of an organization, in id (creation) order. */
  signupPagesOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'SIGNUPPAGE#',
  }),
  /**
   * The public address of a sign-up page, `/p/{orgSlug}/{pageSlug}`:
   * reserves the page slug in its organization and, read by the public
   * function, names the organization and the page in one read.
   */
  signupPageSlug: (orgSlug: string, pageSlug: string): Key => ({
    PK: `SLUG#${orgSlug}`,
    SK: `PAGE#${pageSlug}`,
  }),
  /** One window of a counter bounding the public sign-up form. */
  signupLimit: (counter: string, windowStart: number): Key => ({
    PK: `SIGNUPLIMIT#${counter}`,
    SK: `W#${windowStart}`,
  }),
  /** Every window of a sign-up counter. */
  signupLimitWindows: (counter: string): QueryKey => ({
    PK: `SIGNUPLIMIT#${counter}`,
    skPrefix: 'W#',
  }),
  /** When a page last sent a confirmation email to an address. */
  signupConfirmationSent: (
    orgId: string,
    pageId: string,
    email: string,
  ): Key => ({
    PK: `${org(orgId)}#SIGNUPPAGE#${pageId}#MAIL`,
    SK: `EMAIL#${email}`,
  }),
  /** The address book's head: its version and its default identity. */
  identityBook: (orgId: string): Key => ({
    PK: org(orgId),
    SK: 'IDENTITYBOOK',
  }),
  /** One sender identity (address book entry). */
  identity: (orgId: string, identityId: string): Key => ({
    PK: org(orgId),
    SK: `IDENTITY#${identityId}`,
  }),
  /**
   * The whole address book, identities and head, in one Query: the head's
   * key sorts just past its identities ('#' before 'B').
   */
  addressBook: (orgId: string): KeyRange => ({
    PK: org(orgId),
    from: 'IDENTITY#',
    to: 'IDENTITYBOOK',
  }),
  /**
   * The organization's sending profile in one Query: its domains, its
   * identities and the book's head. Nothing else of the organization's
   * partition sorts between 'DOMAIN#' and 'IDENTITYBOOK' (its delivery
   * counters, 'DELIVERYSTATS', sort before); an item added there later is
   * read by this Query and skipped, so keep that range for the profile.
   */
  sendingProfile: (orgId: string): KeyRange => ({
    PK: org(orgId),
    from: 'DOMAIN#',
    to: 'IDENTITYBOOK',
  }),
  /** One sending domain as an organization declared it. */
  domain: (orgId: string, domainId: string): Key => ({
    PK: org(orgId),
    SK: `DOMAIN#${domainId}`,
  }),
  /** Every sending domain of an organization. */
  domainsOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'DOMAIN#',
  }),
  /**
   * A domain name across organizations: who declared it and who proved it
   * (a proved domain belongs to one organization at a time).
   */
  domainClaim: (domain: string): Key => ({
    PK: `DOMAINNAME#${domain}`,
    SK: 'CLAIM',
  }),
  /** One campaign: its settings, status and schedule (its content apart). */
  campaign: (orgId: string, campaignId: string): Key => ({
    PK: org(orgId),
    SK: `CAMPAIGN#${campaignId}`,
  }),
  /** Every campaign of an organization, in id (creation) order. */
  campaignsOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'CAMPAIGN#',
  }),
  /**
   * A campaign's own copy of its HTML: apart, so that the writes of a send
   * (status, progress) never pay for the content's size.
   */
  campaignContent: (orgId: string, campaignId: string): Key => ({
    PK: org(orgId),
    SK: `CAMPAIGNCONTENT#${campaignId}`,
  }),
  /**
   * The one campaign a series step made when it fired: written with the
   * campaign, on the condition that none was (a second fire makes none).
   */
  seriesStepCampaign: (
    orgId: string,
    seriesId: string,
    versionId: string,
    step: number,
  ): Key => ({
    PK: org(orgId),
    SK: `SERIESSTEP#${seriesId}#${versionId}#${step}`,
  }),
  /**
   * How many campaigns of an organization are in each status: the counter
   * of the campaigns collection, just past its `CAMPAIGN#` items (see
   * `collectionCounterKey`), so a page reads it in the same Query.
   */
  campaignCounts: (orgId: string): Key => ({
    PK: org(orgId),
    SK: 'CAMPAIGN$counts',
  }),
  /**
   * The running send of a campaign: the dispatcher's cursor, the batches in
   * flight and the progress counters (small: written once per batch).
   */
  campaignSend: (orgId: string, campaignId: string): Key => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    SK: 'SEND',
  }),
  /** One batch of a send: its lease while a sender works on it, then its outcome. */
  campaignBatch: (orgId: string, campaignId: string, batch: number): Key => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    SK: `BATCH#${String(batch).padStart(6, '0')}`,
  }),
  /**
   * One recipient of a campaign: the sender's claim before the provider is
   * called, then what SES says of the message (first delivery, open, click).
   * Its partition is one of {@link RECIPIENT_SHARDS} of the campaign, by its
   * contact id's hash, so a big send's writes spread over them (a campaign
   * at 1,000 mails a second writes about 3,000 units a second to its
   * recipients; one partition takes 1,000).
   */
  campaignRecipient: (
    orgId: string,
    campaignId: string,
    contactId: string,
  ): Key => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}#RECIPIENTS#${recipientShardOf(contactId)}`,
    SK: `RECIPIENT#${contactId}`,
  }),
  /**
   * A recipient of a send started before recipients were sharded (no
   * `recipientShards` on its `SEND` item): in the campaign's partition.
   */
  legacyCampaignRecipient: (
    orgId: string,
    campaignId: string,
    contactId: string,
  ): Key => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    SK: `RECIPIENT#${contactId}`,
  }),
  /** One shard of a campaign's delivery counters (summed on read). */
  campaignStats: (orgId: string, campaignId: string, shard: number): Key => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    SK: `STATS#${shard}`,
  }),
  /**
   * The fate of one batch of a campaign's events (counted, or void): put
   * if absent, so a batch is counted once or never.
   */
  campaignStatsBatch: (
    orgId: string,
    campaignId: string,
    batch: string,
  ): Key => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    SK: `COUNTED#${batch}`,
  }),
  /** Every shard of a campaign's delivery counters. */
  campaignStatsShards: (orgId: string, campaignId: string): QueryKey => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    skPrefix: 'STATS#',
  }),
  /** The clicks of one link of a campaign (the link's URL and counters). */
  campaignLink: (orgId: string, campaignId: string, linkId: string): Key => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    SK: `LINK#${linkId}`,
  }),
  /** Every clicked link of a campaign. */
  campaignLinks: (orgId: string, campaignId: string): QueryKey => ({
    PK: `${org(orgId)}#CAMPAIGN#${campaignId}`,
    skPrefix: 'LINK#',
  }),
  /**
   * Recipients an organization's campaigns took on in one hour (UTC, as
   * `2026-11-23T14`): its rolling 24-hour quota sums the last 24 of them.
   */
  sendWindow: (orgId: string, hour: string): Key => ({
    PK: `${org(orgId)}#SENDWINDOW`,
    SK: `HOUR#${hour}`,
  }),
  /**
   * An organization's reputation counters of one hour (UTC, as
   * `2026-11-23T14`): sends, hard bounces, complaints; its rolling window
   * is one Query of the partition's last hours.
   */
  reputationHour: (orgId: string, hour: string): Key => ({
    PK: `${org(orgId)}#REPUTATION`,
    SK: `HOUR#${hour}`,
  }),
  /** The reputation hours from `fromHour` to `toHour`, both included. */
  reputationHours: (orgId: string, fromHour: string, toHour: string) => ({
    PK: `${org(orgId)}#REPUTATION`,
    from: `HOUR#${fromHour}`,
    to: `HOUR#${toHour}`,
  }),
  /**
   * A lane of the application's send pacer: the next free instant of its
   * part of the SES account's rate, shared by every sender of every
   * organization. A partition per lane: the pacer's writes spread with
   * the rate.
   */
  sendPacerLane: (lane: number): Key => ({
    PK: `APP#SENDPACER#${lane}`,
    SK: 'SENDPACER',
  }),
  /**
   * The send pacer's count of sends started: each send takes the next
   * block of lanes in turn, so that sends running together sit side by
   * side on the lanes rather than where a hash puts them.
   */
  sendPacerBlocks: (): Key => ({ PK: 'APP#SENDPACER', SK: 'BLOCKS' }),
  /**
   * The head of a sequence or series (name, status, topic, trigger, the
   * published and draft version ids): both kinds share the prefix, so one
   * read finds either by id.
   */
  sequence: (orgId: string, sequenceId: string): Key => ({
    PK: org(orgId),
    SK: `SEQUENCE#${sequenceId}`,
  }),
  /** Every sequence and series of an organization, in id (creation) order. */
  sequencesOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'SEQUENCE#',
  }),
  /** One version of a sequence (its status, a series' calendar). */
  sequenceVersion: (
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): Key => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    SK: `VERSION#${versionId}`,
  }),
  /** Every version of a sequence. */
  sequenceVersions: (orgId: string, sequenceId: string): QueryKey => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    skPrefix: 'VERSION#',
  }),
  /** One node (step) of a version, with its content. */
  sequenceNode: (
    orgId: string,
    sequenceId: string,
    versionId: string,
    nodeId: string,
  ): Key => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    SK: `NODE#${versionId}#${nodeId}`,
  }),
  /** Every node of one version (ordered by their `order`, not their key). */
  sequenceNodes: (
    orgId: string,
    sequenceId: string,
    versionId: string,
  ): QueryKey => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    skPrefix: `NODE#${versionId}#`,
  }),
  /** Everything a sequence owns besides its head: removed with it. */
  sequenceContents: (orgId: string, sequenceId: string): QueryKey => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    skPrefix: '',
  }),
  /**
   * One contact's journey through a sequence. Enrolments have a partition
   * per sequence, apart from its versions: they outlive its head for as
   * long as the cleanup after a delete takes to cancel their schedules.
   */
  enrolment: (orgId: string, sequenceId: string, contactId: string): Key => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}#ENROLMENTS`,
    SK: `CONTACT#${contactId}`,
  }),
  /** Every enrolment of a sequence, by contact id. */
  enrolmentsOfSequence: (orgId: string, sequenceId: string): QueryKey => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}#ENROLMENTS`,
    skPrefix: 'CONTACT#',
  }),
  /** The organization's double opt-in settings. */
  optinSettings: (orgId: string): Key => ({
    PK: org(orgId),
    SK: 'SETTINGS#OPTIN',
  }),
  /**
   * An address suppressed in an organization, by its address key (the
   * keyed hash of `shared/delivery/address-key.ts`): the item need not hold
   * the address for the address to be found.
   */
  suppression: (orgId: string, addressKey: string): Key => ({
    PK: `${org(orgId)}#SUPPRESSION`,
    SK: `ADDR#${addressKey}`,
  }),
  /**
   * A suppression as versions before the address keys stored it, by the
   * address itself: read while the organization's suppressions are not
   * rekeyed yet, moved by the rekey (`admin suppressions rekey`).
   */
  legacySuppression: (orgId: string, email: string): Key => ({
    PK: `${org(orgId)}#SUPPRESSION`,
    SK: `EMAIL#${email}`,
  }),
  /** Every suppression still stored by its address (the rekey's walk). */
  legacySuppressions: (orgId: string): QueryKey => ({
    PK: `${org(orgId)}#SUPPRESSION`,
    skPrefix: 'EMAIL#',
  }),
  /**
   * Says the organization's suppressions are all keyed by address key:
   * written by the rekey when it has moved the last one, and with every
   * organization created since. Until it is there, lookups read both keys.
   */
  suppressionsRekeyed: (orgId: string): Key => ({
    PK: `${org(orgId)}#SUPPRESSION`,
    SK: 'REKEYED',
  }),
  /**
   * The log entry of a suppression, by its time then address key: written
   * and deleted with the suppression, so the list reads newest first.
   */
  suppressionLogEntry: (
    orgId: string,
    at: string,
    addressKey: string,
  ): Key => ({
    PK: `${org(orgId)}#SUPPRESSIONLOG`,
    SK: `LOG#${at}#${addressKey}`,
  }),
  /** The suppression log: time-ordered (a counted collection, `LOG$count`). */
  suppressionLog: (orgId: string): QueryKey => ({
    PK: `${org(orgId)}#SUPPRESSIONLOG`,
    skPrefix: 'LOG#',
  }),
  /** The record of one lifted suppression, by the time of the lift. */
  suppressionLift: (orgId: string, at: string, addressKey: string): Key => ({
    PK: `${org(orgId)}#SUPPRESSIONLOG`,
    SK: `LIFT#${at}#${addressKey}`,
  }),
  /** The lifts: time-ordered (a counted collection, `LIFT$count`). */
  suppressionLifts: (orgId: string): QueryKey => ({
    PK: `${org(orgId)}#SUPPRESSIONLOG`,
    skPrefix: 'LIFT#',
  }),
  /** The audit record of one erasure of a person (no trace of the person). */
  erasure: (orgId: string, erasureId: string): Key => ({
    PK: org(orgId),
    SK: `ERASURE#${erasureId}`,
  }),
  /** The organization's erasures, by time-ordered id. */
  erasuresOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'ERASURE#',
  }),
  /** A webhook endpoint of an organization. */
  webhook: (orgId: string, webhookId: string): Key => ({
    PK: org(orgId),
    SK: `WEBHOOK#${webhookId}`,
  }),
  /** The organization's webhook endpoints (a counted collection, `WEBHOOK$count`). */
  webhooksOfOrganization: (orgId: string): QueryKey => ({
    PK: org(orgId),
    skPrefix: 'WEBHOOK#',
  }),
  /**
   * The event types the organization's enabled endpoints take: a counter
   * per type, moved in every endpoint write's transaction.
   */
  webhookSubscriptions: (orgId: string): Key => ({
    PK: org(orgId),
    SK: 'WEBHOOKTYPES',
  }),
  /** An event's body, once for all its deliveries (with a TTL). */
  webhookEvent: (orgId: string, eventId: string): Key => ({
    PK: `${org(orgId)}#WEBHOOKEVENT#${eventId}`,
    SK: 'EVENT',
  }),
  /** One delivery of an event to an endpoint (with a TTL). */
  webhookDelivery: (
    orgId: string,
    webhookId: string,
    deliveryId: string,
  ): Key => ({
    PK: `${org(orgId)}#WEBHOOK#${webhookId}`,
    SK: `DELIVERY#${deliveryId}`,
  }),
  /** An endpoint's deliveries, by time-ordered id. */
  webhookDeliveries: (orgId: string, webhookId: string): QueryKey => ({
    PK: `${org(orgId)}#WEBHOOK#${webhookId}`,
    skPrefix: 'DELIVERY#',
  }),
  /** An endpoint's health: its failures and the probe of its circuit. */
  webhookHealth: (orgId: string, webhookId: string): Key => ({
    PK: `${org(orgId)}#WEBHOOK#${webhookId}`,
    SK: 'HEALTH',
  }),
  /** A delivery waiting for its endpoint to recover. */
  webhookParked: (
    orgId: string,
    webhookId: string,
    deliveryId: string,
  ): Key => ({
    PK: `${org(orgId)}#WEBHOOK#${webhookId}`,
    SK: `PARKED#${deliveryId}`,
  }),
  /** The deliveries waiting for an endpoint, oldest first. */
  webhookParkedOf: (orgId: string, webhookId: string): QueryKey => ({
    PK: `${org(orgId)}#WEBHOOK#${webhookId}`,
    skPrefix: 'PARKED#',
  }),
  /** One SES event of one message, recorded once (with a TTL). */
  deliveryEvent: (orgId: string, messageId: string, event: string): Key => ({
    PK: `${org(orgId)}#MESSAGE#${messageId}`,
    SK: `EVENT#${event}`,
  }),
  /** The organization's delivery counters, one per SES event type. */
  deliveryStats: (orgId: string): Key => ({
    PK: org(orgId),
    SK: 'DELIVERYSTATS',
  }),
  /** Every item of one message (its events, its step's recipient). */
  messageItems: (orgId: string, messageId: string): QueryKey => ({
    PK: `${org(orgId)}#MESSAGE#${messageId}`,
    skPrefix: '',
  }),
  /**
   * The recipient of a sequence step's message, as its statistics keep it
   * (what first happened, the dedupe of its events, its clicks): in the
   * message's partition, which the person's erasure deletes.
   */
  stepMessage: (orgId: string, messageId: string): Key => ({
    PK: `${org(orgId)}#MESSAGE#${messageId}`,
    SK: 'STEP',
  }),
  /**
   * One shard of the counters of one step of a sequence: in the
   * sequence's partition, so deleting the sequence deletes them.
   */
  stepStats: (
    orgId: string,
    sequenceId: string,
    step: number,
    shard: number,
  ): Key => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    SK: `STEPSTATS#${step}#${shard}`,
  }),
  /** Every shard of every step of a sequence. */
  stepStatsOfSequence: (orgId: string, sequenceId: string): QueryKey => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    skPrefix: 'STEPSTATS#',
  }),
  /** The clicks of one link of one step of a sequence. */
  stepLink: (
    orgId: string,
    sequenceId: string,
    step: number,
    linkId: string,
  ): Key => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    SK: `STEPLINK#${step}#${linkId}`,
  }),
  /** Every clicked link of every step of a sequence. */
  stepLinksOfSequence: (orgId: string, sequenceId: string): QueryKey => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    skPrefix: 'STEPLINK#',
  }),
  /** The fate of one batch of a sequence step's events (as a campaign's). */
  stepStatsBatch: (orgId: string, sequenceId: string, batch: string): Key => ({
    PK: `${org(orgId)}#SEQUENCE#${sequenceId}`,
    SK: `COUNTED#${batch}`,
  }),
  /**
   * One shard of an organization's counters of one month (UTC,
   * `2026-11`): what its campaigns' and sequence steps' events add.
   */
  organizationStats: (orgId: string, month: string, shard: number): Key => ({
    PK: `${org(orgId)}#STATS`,
    SK: `MONTH#${month}#${shard}`,
  }),
  /** An organization's monthly counters, from one month to another. */
  organizationStatsMonths: (
    orgId: string,
    from: string | undefined,
    to: string | undefined,
  ): KeyRange => ({
    PK: `${org(orgId)}#STATS`,
    from: `MONTH#${from ?? ''}`,
    to: `MONTH#${to ?? '9999-99'}#\uffff`,
  }),
} as const;

/** Where a contact's item key points: organization, list and email. */
export interface ContactKey {
  orgId: string;
  listId: string;
  email: string;
}

const CONTACT_PK = /^ORG#([^#]+)#LIST#([^#]+)$/;
const CONTACT_SK = /^CONTACT#(.+)$/;

/**
 * Key parsers: the inverse of some builders above, for readers handed items
 * they did not ask for by key (the table's change stream). Each answers
 * undefined for a key of another access pattern.
 */
export const keyParsers = {
  /**
   * The organization of an item kept under it: its partition is the
   * organization's (`ORG#<id>`) or one below it (`ORG#<id>#…`).
   */
  organization: (key: { PK?: unknown }): string | undefined => {
    if (typeof key.PK !== 'string') return;
    return /^ORG#([^#]+)(?:#|$)/.exec(key.PK)?.[1];
  },
  /** The inverse of {@link keys.contact}. */
  contact: (key: { PK?: unknown; SK?: unknown }): ContactKey | undefined => {
    if (typeof key.PK !== 'string' || typeof key.SK !== 'string') return;
    const partition = CONTACT_PK.exec(key.PK);
    const sort = CONTACT_SK.exec(key.SK);
    if (!partition?.[1] || !partition[2] || !sort?.[1]) return;
    return { orgId: partition[1], listId: partition[2], email: sort[1] };
  },
  /** The inverse of {@link keys.sequence}: its organization and id. */
  sequence: (key: {
    PK?: unknown;
    SK?: unknown;
  }): { orgId: string; sequenceId: string } | undefined => {
    if (typeof key.PK !== 'string' || typeof key.SK !== 'string') return;
    const partition = /^ORG#([^#]+)$/.exec(key.PK);
    const sort = /^SEQUENCE#([^#]+)$/.exec(key.SK);
    if (!partition?.[1] || !sort?.[1]) return;
    return { orgId: partition[1], sequenceId: sort[1] };
  },
} as const;
