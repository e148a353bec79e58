/**
 * Builds a function's dependencies from its bindings: only the adapters its
 * bindings name, over what its runtime provides. The part shared by the AWS
 * and the local composition roots.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { GatewayKeyRegistry } from '../access/ports.ts';
import { loggingAudienceEvents } from '../adapters/logging-audience-events.ts';
import { randomIds, systemClock } from '../adapters/system.ts';
import type { AudienceEvents } from '../audience/ports.ts';
import {
  type Binding,
  type Bindings,
  bindingsOf,
  binds,
  type DepsOf,
  STORE_NAMES,
} from '../bindings.ts';
import type { AddressKeySecret } from '../delivery/address-key.ts';
import type {
  Clock,
  Endpoints,
  Ids,
  LinkSigner,
  Mailer,
  QueueSender,
} from '../ports.ts';
import {
  DEFAULT_REPUTATION_THRESHOLDS,
  type ReputationThresholds,
} from '../reputation/model.ts';
import type { Scheduler } from '../scheduling/ports.ts';
import type { DnsResolver, EmailProvider } from '../sending/provider.ts';
import { RecentDomainAnswers } from '../sending/recent-domain-answers.ts';
import type { SignupFormSettings } from '../signup/ports.ts';
import type {
  WebhookCallsDeps,
  WebhookSender,
  WebhookUrlRules,
} from '../webhooks/delivery-ports.ts';
import { WEBHOOK_FANOUT_QUEUE } from '../webhooks/queues.ts';
import { loadStores } from './stores.ts';

/** The table and the settings of its stores. */
export interface TableOptions {
  dynamo: DynamoDBDocumentClient;
  tableName: string;
  /** How long a warm container trusts a resolved key. */
  apiKeyCacheTtlSeconds: number;
  audienceEvents?: AudienceEvents;
  /** The reputation guardrail's thresholds; default ours (decision 0061). */
  reputationThresholds?: ReputationThresholds;
}

/**
 * What a runtime provides, each part built only when a binding needs it:
 * a function is never told, nor builds, what it does not use.
 */
export interface DepsOptions {
  clock?: Clock;
  ids?: Ids;
  table?: () => Awaitable<TableOptions>;
  endpoints?: () => Endpoints;
  /** The mailer (`mail`): SES v2, locally with simulated events. */
  mailer?: () => Awaitable<Mailer>;
  /** The link signing secret, fetched when first needed. */
  linkSecret?: () => () => Promise<string>;
  /** The address key secret (suppressions), fetched when first needed. */
  addressKeySecret?: () => AddressKeySecret;
  /** The email provider (SES v2, or the local stand-in) and DNS. */
  provider?: () => Awaitable<EmailProvider>;
  dns?: () => Awaitable<DnsResolver>;
  /** Default 60 s. */
  providerStatusTtlSeconds?: number;
  scheduler?: () => Awaitable<Scheduler>;
  /** Default 120 s. */
  scheduleMinLeadSeconds?: number;
  /** The sender of one consumer group's queue. */
  queue?: (name: string) => Awaitable<QueueSender>;
  /** The defences of the public sign-up form (operator settings). */
  signupForms?: () => Awaitable<SignupFormSettings>;
  /**
   * The longest wait sent as a delayed queue message (default 900 s, SQS's
   * limit); longer ones are schedules.
   */
  queueDelayMaxSeconds?: number;
  /**
   * The URL rules of webhook endpoints here, and the client that calls
   * them (default: the guarded client under those rules).
   */
  webhookCalls?: () => Awaitable<{
    rules: WebhookUrlRules;
    sender?: WebhookSender;
  }>;
  /** The edge's registry of API keys (API Gateway; none locally). */
  gatewayKeys?: () => Awaitable<GatewayKeyRegistry>;
}

/**
 * A part a runtime provides, at once or once loaded: the AWS root imports
 * each adapter and SDK client when a binding first needs it.
 */
type Awaitable<T> = T | Promise<T>;

const need = <T>(part: (() => T) | undefined, binding: string): T => {
  if (!part) {
    throw new Error(
      `The composition root provides nothing for the ${binding} binding`,
    );
  }
  return part();
};

/**
 * The stores a table binding names, and what comes with every table. The
 * delivery store needs the address key: its group must bind `addressKey`.
 */
const tableDeps = async (
  binding: Extract<Binding, { kind: 'table' }>,
  options: TableOptions,
  addressKeySecret: AddressKeySecret | undefined,
) => ({
  ...(await loadStores(
    binding.stores,
    { client: options.dynamo, tableName: options.tableName },
    addressKeySecret ? { addressKeySecret } : {},
  )),
  audienceEvents: options.audienceEvents ?? loggingAudienceEvents,
  apiKeyCacheTtlSeconds: options.apiKeyCacheTtlSeconds,
  reputationThresholds:
    options.reputationThresholds ?? DEFAULT_REPUTATION_THRESHOLDS,
});

/**
 * The sink of webhook events: the table's subscription summaries, read
 * through a small adapter of its own, and the fan-out queue, asked for
 * when first sent to.
 */
const webhookEventsOf = async (options: DepsOptions, clock: Clock) => {
  const table = await need(options.table, 'webhookEvents');
  const queue = options.queue;
  if (!queue) throw new Error('The composition root provides no queues');
  const [{ DynamoWebhookSubscriptions }, { QueuedWebhookEventSink }] =
    await Promise.all([
      import('../adapters/aws/dynamo-webhook-subscriptions.ts'),
      import('../webhooks/event-sink.ts'),
    ]);
  return new QueuedWebhookEventSink({
    subscriptions: new DynamoWebhookSubscriptions({
      client: table.dynamo,
      tableName: table.tableName,
    }),
    queue: () => queue(WEBHOOK_FANOUT_QUEUE),
    clock,
  });
};

/**
 * The webhook client: the one given, or the guarded client under the
 * rules (loaded with the first call).
 */
const webhookCallsOf = (calls: {
  rules: WebhookUrlRules;
  sender?: WebhookSender;
}): WebhookCallsDeps => {
  let guarded: Promise<WebhookSender> | undefined;
  const sender: WebhookSender = calls.sender ?? {
    post: async (request) => {
      guarded ??= import('../adapters/guarded-webhook-sender.ts').then(
        ({ GuardedWebhookSender }) =>
          new GuardedWebhookSender({ rules: calls.rules }),
      );
      return (await guarded).post(request);
    },
  };
  return { webhookSender: sender, webhookUrlRules: calls.rules };
};

/** What one binding adds to the deps. */
const provide = async (
  binding: Binding,
  bindings: Bindings,
  options: DepsOptions,
  clock: Clock,
): Promise<Record<string, unknown>> => {
  switch (binding.kind) {
    case 'table':
      return tableDeps(
        binding,
        await need(options.table, 'table'),
        binds(bindings, 'addressKey')
          ? need(options.addressKeySecret, 'addressKey')
          : undefined,
      );
    case 'endpoints':
      return { endpoints: need(options.endpoints, 'endpoints') };
    case 'mail':
      return { mailer: await need(options.mailer, 'mail') };
    case 'linkSecret': {
      // jose loads with the first link signed or checked, not at init.
      const secret = need(options.linkSecret, 'linkSecret');
      let signer: Promise<LinkSigner> | undefined;
      const load = () => {
        signer ??= import('../adapters/jose-link-signer.ts').then(
          ({ JoseLinkSigner }) => new JoseLinkSigner(secret, clock),
        );
        return signer;
      };
      const links: LinkSigner = {
        sign: async (purpose, claims, ttlSeconds) =>
          (await load()).sign(purpose, claims, ttlSeconds),
        verify: async (purpose, token) => (await load()).verify(purpose, token),
      };
      return { links };
    }
    case 'addressKey':
      // Given to the table's delivery store (above), nothing else.
      return {};
    case 'sendingSetup':
      return {
        // Recent domain answers are reused within the freshness (GET /domains).
        provider: new RecentDomainAnswers(
          await need(options.provider, 'sendingSetup'),
          clock,
        ),
        dns: await need(options.dns, 'sendingSetup'),
        providerStatusTtlSeconds: options.providerStatusTtlSeconds ?? 60,
      };
    case 'sendingStatus':
      return {
        provider: await need(options.provider, 'sendingStatus'),
        providerStatusTtlSeconds: options.providerStatusTtlSeconds ?? 60,
      };
    case 'sendingQuota':
      return { provider: await need(options.provider, 'sendingQuota') };
    case 'scheduler':
      return {
        scheduler: await need(options.scheduler, 'scheduler'),
        scheduleMinLeadSeconds: options.scheduleMinLeadSeconds ?? 120,
        queueDelayMaxSeconds: options.queueDelayMaxSeconds ?? 900,
      };
    case 'webhookEvents':
      return { webhookEvents: await webhookEventsOf(options, clock) };
    case 'webhookCalls':
      return {
        ...webhookCallsOf(await need(options.webhookCalls, 'webhookCalls')),
      };
    case 'signupForms':
      return { signupForms: await need(options.signupForms, 'signupForms') };
    case 'gatewayKeys':
      return { gatewayKeys: await need(options.gatewayKeys, 'gatewayKeys') };
    case 'mailboxLookup':
      // The resolver of the sending setup's ownership checks: MX is public.
      return { mx: await need(options.dns, 'mailboxLookup') };
    case 'queue':
      return {};
  }
};

/**
 * The deps of a function with these bindings: time and ids, and for each
 * binding its adapters (the setup provider wins over the status reader when
 * both are bound; queue bindings gather into `queues`).
 */
export const buildDeps = async <const B extends Bindings>(
  bindings: B,
  options: DepsOptions,
): Promise<DepsOf<B>> => {
  const clock = options.clock ?? systemClock;
  const deps: Record<string, unknown> = {
    clock,
    ids: options.ids ?? randomIds,
  };
  // The setup binding last, so its provider replaces the status reader.
  const ordered = [...bindings].sort(
    (a, b) =>
      Number(a.kind === 'sendingSetup') - Number(b.kind === 'sendingSetup'),
  );
  const provided = await Promise.all(
    ordered.map((binding) => provide(binding, bindings, options, clock)),
  );
  for (const part of provided) Object.assign(deps, part);
  const queues = bindingsOf(bindings, 'queue');
  if (queues.length > 0) {
    const send = options.queue;
    if (!send) throw new Error('The composition root provides no queues');
    deps.queues = Object.fromEntries(
      await Promise.all(
        queues.map(async (binding) => [
          binding.queue,
          await send(binding.queue),
        ]),
      ),
    );
  }
  return deps as DepsOf<B>;
};

/** Every binding there is: the local stack and the tests run every group. */
export const ALL_BINDINGS = [
  { kind: 'table', stores: STORE_NAMES, actions: [] },
  { kind: 'endpoints' },
  { kind: 'mail' },
  { kind: 'linkSecret' },
  { kind: 'addressKey' },
  { kind: 'sendingSetup' },
  { kind: 'sendingStatus' },
  { kind: 'sendingQuota' },
  { kind: 'scheduler', queues: [] },
  { kind: 'signupForms' },
  { kind: 'webhookEvents' },
  { kind: 'webhookCalls' },
  { kind: 'gatewayKeys' },
  { kind: 'mailboxLookup' },
] as const satisfies Bindings;

/** Marshalling options of every document client we create. */
export const documentClientOptions = {
  marshallOptions: { removeUndefinedValues: true },
} as const;
