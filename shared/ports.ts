/**
 * Cross-cutting ports: the capabilities every area may use (time, ids, the
 * mailer, link signing, this deployment's addresses) and the page shape of
 * collections. Each area declares its own stores in `shared/<area>/ports.ts`;
 * `shared/deps.ts` aggregates them all. This file imports nothing.
 */

/** The current time; fixed in tests. */
export interface Clock {
  now(): Date;
}

/** Identifier and secret generation; deterministic in tests if needed. */
export interface Ids {
  /** A new time-ordered UUID (v7): sorting ids sorts by creation time. */
  id(): string;
  /** A new random secret of `bytes` bytes, base64url encoded. */
  secret(bytes: number): string;
  /**
   * The id of the resource a create makes (a list, a campaign, a send…):
   * a new `id()`, but in a request carrying an `Idempotency-Key` the same
   * on every run of that request, so a run after one that stopped without
   * answering finds what that one created (see `rerun`).
   */
  createdId(): string;
  /**
   * True on such a run only: an earlier run of the same request may have
   * created its resources already. A create then looks for the one under
   * its `createdId()` first and answers it as created, never a second.
   */
  readonly rerun: boolean;
}

/** One page of a collection and the collection's total size. */
export interface Page<T> {
  items: T[];
  total: number;
  /**
   * Where the next page starts, for a listing that takes a cursor: null
   * on the last page; absent where the listing takes none.
   */
  nextCursor?: string | null;
  /** The page's number when a cursor chose it (not the query's `page`). */
  page?: number;
  /**
   * For a listing that counts its matches within a read budget: whether
   * `total` is the whole count (absent where totals are always exact).
   */
  totalExact?: boolean;
}

/** Page number (from 1) and page size. */
export interface PageRequest {
  page: number;
  limit: number;
}

/** A complete outgoing message: what the Mailer port sends. */
export interface OutgoingMessage {
  /** `Name <address>` or a bare address. */
  from: string;
  /** Where replies go when they must not go to `from`: a bare address. */
  replyTo?: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  /** Extra headers, e.g. List-Unsubscribe. */
  headers?: Record<string, string>;
  /**
   * The SES tenant of the organization, once provisioned; the configuration
   * set of the same name goes with it.
   */
  tenantName?: string;
  /**
   * Message tags (SES `EmailTags`; names and values of ASCII letters,
   * digits, `_` and `-`): the events SES publishes about the message
   * carry them back (see `shared/delivery/ses-event.ts`).
   */
  tags?: Record<string, string>;
}

/** Sends one email. */
export interface Mailer {
  send(message: OutgoingMessage): Promise<{ messageId: string }>;
}

/** Signs and checks the claims of public links (confirm, unsubscribe…). */
export interface LinkSigner {
  /** A compact, URL-safe token for `purpose`, valid for `ttlSeconds`. */
  sign(
    purpose: string,
    claims: Record<string, string>,
    ttlSeconds: number,
  ): Promise<string>;
  /**
   * The claims of a valid token of `purpose`; `InvalidLinkError` for a
   * tampered or foreign token, `ExpiredLinkError` for an expired one.
   */
  verify(purpose: string, token: string): Promise<Record<string, string>>;
}

/** Addresses and URLs of this deployment. */
export interface Endpoints {
  /** Base URL of the API as the public sees it, ending in `/api/v1`. */
  publicApiUrl: string;
  /**
   * Base URL of the hosted sign-up pages (`{pagesUrl}/p/{org}/{page}`): an
   * origin of their own on AWS, so that customer HTML never shares one
   * with the API.
   */
  pagesUrl: string;
  /** The application's own sender address (the fallback `From`). */
  appFromAddress: string;
}

/** The cross-cutting dependencies: every area's `Deps` extends them. */
export interface CoreDeps {
  clock: Clock;
  ids: Ids;
  mailer: Mailer;
  links: LinkSigner;
  endpoints: Endpoints;
}

/**
 * How a read is made: strongly consistent (the default: it sees every
 * write that succeeded before it) or, with `consistent: false`, eventually
 * consistent — half the read units, and a write of the last second may not
 * show yet. For reads that a later, consistent one checks again.
 */
export interface ReadOptions {
  consistent?: boolean;
}

/** How a message is sent to a queue. */
export interface SendOptions {
  /** The tenant the message belongs to (the fair queue's group). */
  group?: string;
  /** Seconds before a consumer may receive it: 0 to 900. */
  delaySeconds?: number;
}

/** Sends JSON messages to one consumer group's queue. */
export interface QueueSender {
  /**
   * Sends one message, serialised as JSON; consumers are idempotent.
   * `group` names the tenant the message belongs to: a fair queue serves
   * the groups in turn, so one with a backlog does not starve the others.
   * `delaySeconds` (0–900) keeps the message out of sight that long.
   * Rejects with `MessagesRefusedError` when the queue refuses the message
   * for what it is.
   */
  send(message: unknown, options?: SendOptions): Promise<void>;
  /**
   * Sends up to ten messages in one request (SQS `SendMessageBatch`), each
   * with its own options; rejects unless every one was taken — with
   * `MessagesRefusedError` when the others were and those no retry cures
   * were not. A sender without it sends them one by one.
   */
  sendBatch?(messages: readonly QueueMessage[]): Promise<void>;
}

/** A message the queue refused, and its words for why. */
export interface RefusedMessage {
  /** The message as it was handed to the sender (the same reference). */
  message: unknown;
  /** The queue's code, e.g. `InvalidParameterValue` (a body too large). */
  code: string;
  reason: string;
}

/**
 * Some messages were refused for what they are (too large, say): sending
 * them again would be refused again. A sender rejects with it only once
 * it retried what a retry may cure and sent every other message, so a
 * caller may drop the refused ones and go on; any other rejection means
 * some message may not have been sent, and the whole may be sent again.
 */
export class MessagesRefusedError extends Error {
  constructor(
    readonly refused: readonly RefusedMessage[],
    options?: ErrorOptions,
  ) {
    super(
      `The queue refused ${refused.length} message(s): ${refused.map(({ code, reason }) => `${code}: ${reason}`).join('; ')}`,
      options,
    );
    this.name = 'MessagesRefusedError';
  }
}

/** One message of a batch, and how it is sent. */
export interface QueueMessage {
  message: unknown;
  options?: SendOptions;
}

/** The queues a function may send to, by consumer group name. */
export type QueueSenders<Q extends string> = Record<Q, QueueSender>;
