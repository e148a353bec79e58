/**
 * Domain errors and the one list of their codes. Each code names its HTTP
 * status and a one-line meaning: the pipelines map an error to its status
 * through this list, routes declare the codes they answer from it, and the
 * OpenAPI document describes them from it. An error class accepts only the
 * codes of its status, so a throw site cannot invent a code.
 */

/** One issue of a failed validation, naming the offending field. */
export interface FieldIssue {
  /** Dotted path of the field, e.g. `contacts.3.email`; `body` for the whole body. */
  field: string;
  message: string;
}

/** The HTTP statuses an error can answer. */
export type ErrorStatus =
  | 400
  | 401
  | 403
  | 404
  | 409
  | 410
  | 413
  | 415
  | 422
  | 429
  | 500
  | 503;

interface CodeEntry {
  status: ErrorStatus;
  meaning: string;
}

const entry = <S extends ErrorStatus>(status: S, meaning: string) => ({
  status,
  meaning,
});

/** Every error code the service answers, with its status and meaning. */
export const ERROR_CODES = {
  // The request itself
  'request.invalid': entry(
    400,
    'A field of the path, query or body is invalid; `details` names each one',
  ),
  'request.mediaType': entry(415, 'The body is not JSON in UTF-8'),
  'request.tooLarge': entry(
    413,
    'The body is over 10 MB, the most API Gateway passes on, or what it would store is over the 400 KB one record holds',
  ),
  'route.notFound': entry(404, 'No route has this method and path'),
  internal: entry(500, 'An unexpected error; it was logged'),
  // Keys, roles and rates
  'auth.missingKey': entry(401, 'No x-api-key header was sent'),
  'auth.invalidKey': entry(401, 'The key is unknown, revoked or expired'),
  'auth.roleTooLow': entry(403, "The key's role is below the operation's"),
  'auth.scopeMissing': entry(
    403,
    'The key is narrowed to scopes that do not cover the operation; the message names the scope it needs',
  ),
  'rateLimit.exceeded': entry(
    429,
    'More than 120 requests of this key in 60 seconds; retry after Retry-After seconds',
  ),
  'rateLimit.perSource': entry(
    429,
    'Too many requests to the public pages from one address (the edge firewall); retry in a minute',
  ),
  'rateLimit.quotaExceeded': entry(
    429,
    "The key's usage-plan quota is spent (answered by API Gateway)",
  ),
  'auth.denied': entry(
    403,
    'API Gateway refused the request before it reached us',
  ),
  'request.rejected': entry(
    400,
    'API Gateway refused the request before it reached us (another 4xx)',
  ),
  'write.contended': entry(
    409,
    'Another request wrote the same items at the same moment, again and again; retry',
  ),
  // Idempotency-Key (issue 32)
  'idempotency.keyInvalid': entry(
    400,
    'The Idempotency-Key header is not 1 to 255 visible ASCII characters, or was sent twice; `details` names it',
  ),
  'idempotency.keyReused': entry(
    422,
    'This API key used the Idempotency-Key in the last 24 hours for another request (method, path, query or body); a new request takes a new key',
  ),
  'idempotency.inProgress': entry(
    409,
    'A request with this Idempotency-Key is still running; retry after Retry-After seconds to get its answer',
  ),
  'apiKey.notFound': entry(404, 'No API key has this id'),
  'apiKey.limit': entry(409, 'The member already holds the most keys allowed'),
  'apiKey.scopeEscalation': entry(
    403,
    'A scoped key may only create keys narrowed to scopes it holds itself',
  ),
  'member.notFound': entry(404, 'The user is not a member of the organization'),
  'member.changed': entry(
    409,
    'The membership changed while the request ran; retry',
  ),
  'organization.notFound': entry(404, 'No organization has this id'),
  'organization.slugTaken': entry(409, 'Another organization has this slug'),
  // Audience
  'list.notFound': entry(404, 'No list of the organization has this id'),
  'list.nameTaken': entry(
    409,
    'Another list of the organization has this name',
  ),
  'contact.notFound': entry(404, 'No contact of the organization has this id'),
  'contact.changed': entry(
    409,
    'The contact changed while the request ran; retry',
  ),
  'contact.cannotResubscribe': entry(
    409,
    'Only an unsubscribed contact can be subscribed again',
  ),
  'contact.awaitingConfirmation': entry(
    409,
    'The contact has not confirmed its subscription; only its confirmation subscribes it',
  ),
  'contact.suppressed': entry(
    409,
    "The address is on the organization's suppression list: it cannot be subscribed until the suppression is lifted",
  ),
  'contact.pendingIsSetByOptin': entry(
    400,
    'The pending status is set by double opt-in only',
  ),
  'audience.targetGone': entry(
    404,
    'The list or a tag of the change was deleted while the request ran',
  ),
  'tag.notFound': entry(404, 'No tag of the organization has this id'),
  'tag.nameTaken': entry(409, 'Another tag of the organization has this name'),
  'import.tooLarge': entry(413, 'A bulk import takes at most 500 contacts'),
  // Templates, topics and rendering
  'template.notFound': entry(
    404,
    'No template of the organization has this id',
  ),
  'template.invalid': entry(
    400,
    'The content or subject is not a valid template; `details` names the field',
  ),
  'template.unsubscribeMissing': entry(
    400,
    'Marketing content must contain {{unsubscribeUrl}}',
  ),
  'topic.notFound': entry(404, 'No topic of the organization has this id'),
  'topic.nameTaken': entry(
    409,
    'Another topic of the organization has this name',
  ),
  'topic.changed': entry(409, 'The topic changed while the request ran; retry'),
  // Custom fields
  'field.notFound': entry(404, 'No field of the organization has this id'),
  'field.keyTaken': entry(
    409,
    'Another field of the organization has this key',
  ),
  'field.limitReached': entry(
    400,
    'The organization has the most fields it may have (50)',
  ),
  'field.optionsKept': entry(
    400,
    'Options may be added to an option field, never removed or renamed',
  ),
  'field.optionsRepeated': entry(400, 'An option is named more than once'),
  'field.defaultInvalid': entry(
    400,
    "The default does not fit the field's type or options",
  ),
  'field.changed': entry(409, 'The field changed while the request ran; retry'),
  'field.inUse': entry(
    409,
    "A segment's conditions name this field; the error names each segment",
  ),
  // Erasure of a person
  'erasure.sendRunning': entry(
    409,
    'A campaign send is at this address right now; retry in a minute (nothing was erased)',
  ),
  'erasure.notFound': entry(404, 'No erasure of the organization has this id'),
  'fields.invalid': entry(
    400,
    "Custom field values name no field of the organization, don't fit their field, or take more than 10,000 bytes; `details` names each `fields.<key>`",
  ),
  // Privacy (issue 31): what is held about a person
  'person.notFound': entry(
    404,
    'The organization holds nothing about this address (answered alike for an address another organization holds)',
  ),
  'export.tooLarge': entry(
    413,
    'The export is over 5 MB, the most one answer carries (a Lambda answer is at most 6 MB)',
  ),
  // Webhooks (issue 32): endpoints and their delivery log
  'webhook.notFound': entry(
    404,
    'No webhook endpoint of the organization has this id',
  ),
  'webhook.limitReached': entry(
    400,
    'The organization has the most webhook endpoints it may have (20)',
  ),
  'webhook.changed': entry(
    409,
    'The webhook endpoint changed while the request ran, again and again; retry',
  ),
  'webhook.disabled': entry(
    409,
    'The webhook endpoint is disabled: enable it (PATCH enabled: true) before sending to it',
  ),
  'webhookDelivery.notFound': entry(
    404,
    'The endpoint has no delivery with this id (deliveries are kept 30 days)',
  ),
  // The suppression list
  'suppression.notFound': entry(
    404,
    'The address is not on the organization’s suppression list',
  ),
  'suppression.complaint': entry(
    409,
    'The address complained: only an admin lifting it with `force=true` lifts it',
  ),
  'suppression.erased': entry(
    409,
    'The address is suppressed because its person was erased: only an admin lifting it with `force=true` lifts it',
  ),
  // Segments
  'segment.notFound': entry(404, 'No segment of the organization has this id'),
  'segment.inUse': entry(
    400,
    'A series is narrowed by this segment; the error names each series',
  ),
  'segment.listMismatch': entry(
    400,
    'The segment filters another list than the one named; `details` names the field',
  ),
  // Sign-up pages
  'signupPage.notFound': entry(
    404,
    'No sign-up page of the organization has this id (or no published page is at this address)',
  ),
  'signupPage.slugTaken': entry(
    409,
    'Another sign-up page of the organization has this slug',
  ),
  'signupPage.limitReached': entry(
    400,
    'The organization has the most sign-up pages it may have (500)',
  ),
  'signupPage.fieldsInvalid': entry(
    400,
    'The custom fields a page asks name no field of the organization, or one twice; `details` names each `customFields.<i>.key`',
  ),
  'message.topicRequired': entry(
    400,
    'A message that uses {{topicUnsubscribeUrl}} needs a topic',
  ),
  // Sending setup
  'optin.confirmationUrlMissing': entry(
    400,
    'The confirmation email must contain {{confirmationUrl}}',
  ),
  'identity.notFound': entry(
    404,
    'No sender identity of the organization has this id',
  ),
  'identity.duplicate': entry(409, 'An identity with this address exists'),
  'identity.defaultInUse': entry(
    400,
    'The default identity cannot be deleted while others exist',
  ),
  'identity.cannotUnsetDefault': entry(
    400,
    'Make another identity the default instead',
  ),
  'identity.usedByCampaigns': entry(
    400,
    'A campaign (any status) is signed by this identity; the error names them',
  ),
  'identities.changed': entry(
    409,
    'The identities changed while the request ran; retry',
  ),
  'sending.noDefault': entry(400, 'The organization has no default identity'),
  'sending.severalAddresses': entry(
    400,
    'The sender settings name more than one address',
  ),
  'sender.notOnVerifiedDomain': entry(
    400,
    'The address is not on a verified domain of the organization',
  ),
  'sender.domainOfAnotherOrganization': entry(
    400,
    'The address is on a domain another organization proved',
  ),
  'sender.applicationDomain': entry(
    400,
    "The address is on the application's own domain",
  ),
  'domain.notFound': entry(404, 'No domain of the organization has this id'),
  'domain.alreadyDeclared': entry(
    409,
    'The organization already declared this domain',
  ),
  'domain.applicationDomain': entry(
    400,
    "The application's own domain cannot be declared",
  ),
  'domain.ownershipChanged': entry(
    409,
    'Another organization proved the domain while the request ran',
  ),
  'domain.refusedByProvider': entry(
    400,
    'The email provider refused the domain',
  ),
  'provider.unavailable': entry(
    503,
    'The email provider or DNS cannot be reached; retry later',
  ),
  'provider.resourceMissing': entry(
    404,
    'The email provider lost a resource it had created',
  ),
  // Public links
  'link.invalid': entry(400, 'The link was cut or changed'),
  'link.expired': entry(410, 'The link is past its expiry'),
  'link.contactGone': entry(
    400,
    'The subscription of the link no longer exists',
  ),
  // Campaigns
  'campaign.notFound': entry(
    404,
    'No campaign of the organization has this id',
  ),
  'campaign.changed': entry(
    409,
    'The campaign changed while the request ran; retry',
  ),
  'campaign.notDraft': entry(
    409,
    'Only a draft can be changed or deleted; this campaign is scheduled, sending, sent or failed',
  ),
  'campaign.scheduleInvalid': entry(
    400,
    '`scheduledAt` is not an instant with an offset, is past, or is nearer than the minimum lead time',
  ),
  'campaign.notDraftToSchedule': entry(
    400,
    'Only a draft can be scheduled; a scheduled campaign can be sent now (without `scheduledAt`)',
  ),
  'campaign.sending': entry(409, 'A send of this campaign is already running'),
  'campaign.sent': entry(
    409,
    'The campaign already went out; no second send starts',
  ),
  'campaign.failed': entry(409, 'The campaign failed: not in a sendable state'),
  'campaign.notSending': entry(
    409,
    'Only a sending campaign can be paused or cancelled; this one is a draft, scheduled, sent or failed',
  ),
  'campaign.notPaused': entry(409, 'Only a paused campaign can be resumed'),
  'campaign.notScheduled': entry(
    409,
    'Only a scheduled campaign can be unscheduled; this one is a draft, sending, sent or failed',
  ),
  // Sequences and series
  'sequence.notFound': entry(
    404,
    'No sequence or series of the organization has this id',
  ),
  'sequence.changed': entry(
    409,
    'The sequence, series or version changed while the request ran; read it again and retry',
  ),
  'sequence.capReached': entry(
    400,
    'The organization has as many sequences as its plan allows (paused ones count); the message names the cap and the count',
  ),
  'sequence.notSeries': entry(
    400,
    'The id is a sequence: the series routes take series only',
  ),
  'sequence.isSeries': entry(
    400,
    'The id is a series: use the series route (PATCH or DELETE /series/{seriesId})',
  ),
  'sequence.notPublished': entry(
    400,
    'No version is published yet: publish one before activating',
  ),
  'sequence.noDraft': entry(
    400,
    'No draft is open: open one with POST /sequences/{sequenceId}/versions first; nothing changed',
  ),
  'sequence.onlyVersion': entry(
    400,
    'The draft is the only version of a series never published, and holds its list: edit it, or delete the series',
  ),
  'sequence.draftOpen': entry(
    409,
    'A draft is already open: edit or publish it (at most one draft at a time)',
  ),
  'sequenceVersion.notFound': entry(
    404,
    'No version of this sequence has this id',
  ),
  'sequence.versionNotDraft': entry(
    400,
    'The version is published or superseded: only a draft can change',
  ),
  'sequenceNode.notFound': entry(404, 'No node of this version has this id'),
  'sequence.nodeLimit': entry(
    400,
    'The version already has the most nodes one version may hold',
  ),
  'sequence.publishInvalid': entry(
    400,
    'The draft cannot be published as it is; `details` names each problem',
  ),
  'sequence.topicInUse': entry(
    400,
    'The published version uses {{topicOptOutUrl}}: the topic cannot be removed',
  ),
  'sending.blocked': entry(
    409,
    'The organization cannot send now; `details` lists the blockers (as GET /me reports them)',
  ),
  // Delivery (consumers only: never an answer of the API)
  'event.unattributed': entry(
    400,
    'An email event without our organization tag: not mail this service sent',
  ),
} as const satisfies Record<string, CodeEntry>;

/** A code of the list. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes that answer `status`. */
export type CodeOf<S extends ErrorStatus> = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C]['status'] extends S ? C : never;
}[ErrorCode];

/** Whether a string is a code of the list (for answers read back in tests). */
export const isErrorCode = (code: string): code is ErrorCode =>
  Object.hasOwn(ERROR_CODES, code);

/** The HTTP status of a code. */
export const statusOf = (code: ErrorCode): ErrorStatus =>
  ERROR_CODES[code].status;

/** Base class of every error the service raises on purpose. */
export class AppError<C extends ErrorCode = ErrorCode> extends Error {
  /** Stable machine code, e.g. `list.notFound`; clients may branch on it. */
  readonly code: C;

  constructor(code: C, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The input is invalid; `details` names each offending field. */
export class ValidationError extends AppError<CodeOf<400>> {
  readonly details: FieldIssue[];

  constructor(
    message: string,
    details: FieldIssue[],
    options?: ErrorOptions & { code?: CodeOf<400> },
  ) {
    super(options?.code ?? 'request.invalid', message, options);
    this.details = details;
  }
}

/**
 * The request is well formed but cannot be taken as it is (422): an
 * Idempotency-Key reused for another request.
 */
export class UnprocessableError extends AppError<CodeOf<422>> {}

/** A rule of the domain refuses the request (a 400 without field details). */
export class RuleViolationError extends AppError<CodeOf<400>> {}

/** The resource does not exist, or belongs to another organization. */
export class NotFoundError extends AppError<CodeOf<404>> {}

/** The request conflicts with the current state (a taken name, a race). */
export class ConflictError extends AppError<CodeOf<409>> {}

/**
 * The organization cannot send (readiness blockers other than the
 * application-wide switch): 409, `details` naming each blocker.
 */
export class SendingBlockedError extends AppError<'sending.blocked'> {
  readonly details: FieldIssue[];

  constructor(readonly blockers: readonly string[]) {
    super(
      'sending.blocked',
      `The organization cannot send now: ${blockers.join(', ')} (GET /me reports the same blockers)`,
    );
    this.details = blockers.map((blocker) => ({
      field: 'blockers',
      message: blocker,
    }));
  }
}

/** Missing, unknown or revoked credentials. */
export class UnauthorizedError extends AppError<CodeOf<401>> {}

/** A legitimate caller whose role is too low. */
export class ForbiddenError extends AppError<CodeOf<403>> {}

/** The caller exceeded its request rate; nothing was done. */
export class RateLimitedError extends AppError<'rateLimit.exceeded'> {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'rateLimit.exceeded',
      `Rate limit exceeded: at most 120 requests per key in any 60 seconds; retry in ${retryAfterSeconds} s`,
    );
  }
}

/** A request body or collection over a documented size limit. */
export class PayloadTooLargeError extends AppError<CodeOf<413>> {}

/** The body is not JSON. */
export class UnsupportedMediaTypeError extends AppError<CodeOf<415>> {}

/** A dependency (the email provider, DNS) cannot be reached right now. */
export class ServiceUnavailableError extends AppError<CodeOf<503>> {}

/** A public link whose signature or purpose does not check out. */
export class InvalidLinkError extends AppError<
  'link.invalid' | 'link.contactGone'
> {}

/** A public link past its expiry. */
export class ExpiredLinkError extends AppError<'link.expired'> {}
