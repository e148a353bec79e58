/**
 * Bindings: what a function may use, declared once per group (endpoint or
 * consumer), in the spirit of SST's `link`. From one list derive:
 * - the `Deps` slice its routes and consumers are typed with (`DepsOf`), so
 *   a route calling a capability its group did not bind does not compile;
 * - the configuration its cold start validates (`shared/config.ts`);
 * - the adapters its composition root builds (`shared/runtime/deps.ts`);
 * - its IAM grants and environment in CDK (`infra/constructs/app-function.ts`).
 *
 * A type-only view of the areas' ports plus small value constructors: no
 * adapter, no SDK.
 */
import type { Deps } from './deps.ts';
import type { QueueSenders } from './ports.ts';
import type { SchedulingDeps } from './scheduling/ports.ts';
import type { AccountReader, TenantStatusReader } from './sending/provider.ts';
import type { SignupFormSettings } from './signup/ports.ts';

/** DynamoDB actions a function may call on the table. */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchWriteItem'
  | 'dynamodb:ConditionCheckItem';

/**
 * The stores the table holds, each its own adapter: a function names the
 * ones its code uses, and only their adapters are loaded (and typed).
 */
export const STORE_NAMES = [
  'organizations',
  'access',
  'rateLimits',
  'idempotency',
  'appSettings',
  'lists',
  'contacts',
  'activity',
  'tags',
  'optinSettings',
  'templates',
  'topics',
  'fields',
  'erasures',
  'segments',
  'signupPages',
  'signupLimits',
  'identities',
  'domains',
  'campaignReferences',
  'campaigns',
  'sends',
  'audience',
  'pacer',
  'sendWindows',
  'reputation',
  'campaignStats',
  'mailStats',
  'delivery',
  'sequences',
  'enrolments',
  'exportReader',
  'webhooks',
  'webhookDeliveries',
] as const satisfies readonly (keyof Deps)[];

/** One store of the table. */
export type StoreName = (typeof STORE_NAMES)[number];

/**
 * The stores every API request reads: its key, its rate counter, its org,
 * and the record of its Idempotency-Key when it carries one.
 */
export const PIPELINE_STORES = [
  'access',
  'rateLimits',
  'organizations',
  'idempotency',
] as const satisfies readonly StoreName[];

/**
 * The table: the stores the group's code uses, and exactly the actions it
 * calls on them.
 */
export interface TableBinding<S extends StoreName = StoreName> {
  kind: 'table';
  stores: readonly S[];
  actions: readonly TableAction[];
}
/** This deployment's addresses: the public API's URL, the app's sender. */
export interface EndpointsBinding {
  kind: 'endpoints';
}
/** Sends email through SES (`ses:SendEmail`). */
export interface MailBinding {
  kind: 'mail';
}
/** Signs or checks public links: may read the link signing secret. */
export interface LinkSecretBinding {
  kind: 'linkSecret';
}
/**
 * Reads or writes the suppression list: may read the address key secret,
 * which the table's `delivery` store keys suppressions with (a group that
 * names that store must bind this too; the composition root refuses to
 * build it otherwise).
 */
export interface AddressKeyBinding {
  kind: 'addressKey';
}
/**
 * Manages the sending setup: SES identities, tenants and configuration
 * sets, the account's quota, and DNS lookups for ownership checks.
 */
export interface SendingSetupBinding {
  kind: 'sendingSetup';
}
/** Reads the status of the organizations' SES tenants (readiness). */
export interface SendingStatusBinding {
  kind: 'sendingStatus';
}
/** Reads the SES account's quota and rate (`ses:GetAccount`). */
export interface SendingQuotaBinding {
  kind: 'sendingQuota';
}
/** Creates and deletes one-shot schedules delivering to these queues. */
export interface SchedulerBinding {
  kind: 'scheduler';
  queues: readonly string[];
}
/**
 * Takes the public sign-up form: its defences (fill time, limits, frame
 * ancestors) and the CAPTCHA provider the operator configured, if any.
 */
export interface SignupFormsBinding {
  kind: 'signupForms';
}
/**
 * Publishes webhook events (`webhookEvents`: the sink emitters hand their
 * events to): may read the organizations' subscription summaries
 * (`dynamodb:GetItem`) and send to the fan-out queue.
 */
export interface WebhookEventsBinding {
  kind: 'webhookEvents';
}
/**
 * Calls webhook endpoints over the internet through the guarded client,
 * and knows the URL rules of this stack (https only on AWS).
 */
export interface WebhookCallsBinding {
  kind: 'webhookCalls';
}
/**
 * Registers and disables API keys at the edge (the API Gateway usage plan
 * in front of our own key check): the key routes create and revoke keys.
 */
export interface GatewayKeysBinding {
  kind: 'gatewayKeys';
}
/**
 * Looks domains' MX records up (public DNS: no grant), to name the mailbox
 * provider of an address whose domain is not a known consumer one.
 */
export interface MailboxLookupBinding {
  kind: 'mailboxLookup';
}
/** Sends messages to a consumer group's queue. */
export interface QueueBinding<Q extends string = string> {
  kind: 'queue';
  queue: Q;
}

/** One capability a function is given. */
export type Binding =
  | TableBinding
  | EndpointsBinding
  | MailBinding
  | LinkSecretBinding
  | AddressKeyBinding
  | SendingSetupBinding
  | SendingStatusBinding
  | SendingQuotaBinding
  | SchedulerBinding
  | SignupFormsBinding
  | WebhookEventsBinding
  | WebhookCallsBinding
  | GatewayKeysBinding
  | MailboxLookupBinding
  | QueueBinding;

/** A group's declared list of bindings. */
export type Bindings = readonly Binding[];

/** The table actions every keyed request uses: its key, its rate counter. */
export const PIPELINE_ACTIONS = [
  // The key lookup reads the key and the application settings together.
  'dynamodb:BatchGetItem',
  'dynamodb:GetItem',
  'dynamodb:UpdateItem',
] as const satisfies readonly TableAction[];

/** Binds the table: these stores, these actions (no duplicates kept). */
export const table = <const S extends StoreName>(declaration: {
  stores: readonly S[];
  actions: readonly TableAction[];
}): TableBinding<S> => ({
  kind: 'table',
  stores: [...new Set(declaration.stores)],
  actions: [...new Set(declaration.actions)],
});
export const endpoints: EndpointsBinding = { kind: 'endpoints' };
export const mail: MailBinding = { kind: 'mail' };
export const linkSecret: LinkSecretBinding = { kind: 'linkSecret' };
export const addressKey: AddressKeyBinding = { kind: 'addressKey' };
export const sendingSetup: SendingSetupBinding = { kind: 'sendingSetup' };
export const sendingStatus: SendingStatusBinding = { kind: 'sendingStatus' };
export const sendingQuota: SendingQuotaBinding = { kind: 'sendingQuota' };
export const signupForms: SignupFormsBinding = { kind: 'signupForms' };
export const webhookEvents: WebhookEventsBinding = { kind: 'webhookEvents' };
export const webhookCalls: WebhookCallsBinding = { kind: 'webhookCalls' };
export const gatewayKeys: GatewayKeysBinding = { kind: 'gatewayKeys' };
export const mailboxLookup: MailboxLookupBinding = { kind: 'mailboxLookup' };
/** Binds the scheduler, allowed to target these consumer queues. */
export const scheduler = (...queues: string[]): SchedulerBinding => ({
  kind: 'scheduler',
  queues,
});
/** Binds sending to one consumer group's queue. */
export const queue = <const Q extends string>(name: Q): QueueBinding<Q> => ({
  kind: 'queue',
  queue: name,
});

/** The table's stores. */
export type TableStores = Pick<Deps, StoreName>;

/**
 * What comes with the table, whatever its stores: how long a key is
 * trusted, and where audience facts go (the facts stream consumer
 * publishes them; one line in runtime/deps.ts swaps it).
 */
export type TableSettings = Pick<
  Deps,
  'apiKeyCacheTtlSeconds' | 'audienceEvents' | 'reputationThresholds'
>;

/** What every function has: time and ids. */
export type BaseDeps = Pick<Deps, 'clock' | 'ids'>;

/** The `Deps` each kind of binding provides. */
interface Provided<B extends Binding> {
  table: Pick<TableStores, B extends TableBinding<infer S> ? S : never> &
    TableSettings;
  endpoints: Pick<Deps, 'endpoints'>;
  mail: Pick<Deps, 'mailer'>;
  linkSecret: Pick<Deps, 'links'>;
  // What it gives is the table's delivery store, built with the secret.
  addressKey: Record<never, never>;
  sendingSetup: Pick<Deps, 'provider' | 'dns' | 'providerStatusTtlSeconds'>;
  sendingStatus: {
    provider: TenantStatusReader;
    providerStatusTtlSeconds: number;
  };
  sendingQuota: { provider: AccountReader };
  signupForms: { signupForms: SignupFormSettings };
  gatewayKeys: Pick<Deps, 'gatewayKeys'>;
  mailboxLookup: Pick<Deps, 'mx'>;
  scheduler: SchedulingDeps &
    Pick<Deps, 'scheduleMinLeadSeconds' | 'queueDelayMaxSeconds'>;
  webhookEvents: Pick<Deps, 'webhookEvents'>;
  webhookCalls: Pick<Deps, 'webhookSender' | 'webhookUrlRules'>;
  queue: {
    queues: QueueSenders<B extends QueueBinding<infer Q> ? Q : never>;
  };
}

type UnionToIntersection<U> = (
  U extends unknown
    ? (x: U) => void
    : never
) extends (x: infer I) => void
  ? I
  : never;

/** What one binding provides. */
type ProvidedBy<B extends Binding> = B extends Binding
  ? Provided<B>[B['kind']]
  : never;

/**
 * The `Deps` slice of a group: time and ids, and what each of its bindings
 * provides. Routes and consumers are typed with it.
 */
export type DepsOf<B extends Bindings> = BaseDeps &
  UnionToIntersection<ProvidedBy<B[number]>>;

/** The bindings of a kind in a list. */
export const bindingsOf = <K extends Binding['kind']>(
  bindings: Bindings,
  kind: K,
): Extract<Binding, { kind: K }>[] =>
  bindings.filter(
    (binding): binding is Extract<Binding, { kind: K }> =>
      binding.kind === kind,
  );

/** Whether a list binds a kind. */
export const binds = (bindings: Bindings, kind: Binding['kind']): boolean =>
  bindings.some((binding) => binding.kind === kind);
