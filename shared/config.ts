/**
 * Runtime configuration, derived from a function's bindings: each binding
 * names the variables it needs, the cold start reads and validates exactly
 * those, and a misconfigured function fails there rather than on a request.
 * A function is told only what it uses.
 */
import * as v from 'valibot';
import { type Binding, type Bindings, bindingsOf } from './bindings.ts';
import { WEBHOOK_FANOUT_QUEUE } from './webhooks/queues.ts';

const seconds = (fallback: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.transform(Number),
      v.number(),
      v.integer(),
      v.minValue(0),
    ),
    String(fallback),
  );

/** A whole number of things (same parsing as seconds). */
const count = seconds;

const Text = v.pipe(v.string(), v.minLength(1));

/** The environment variable naming a consumer group's queue URL. */
export const queueUrlEnv = (group: string): string =>
  `QUEUE_URL_${group.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** The environment variable naming a consumer group's dead-letter queue URL. */
export const deadLetterQueueEnv = (group: string): string =>
  `DEAD_LETTER_QUEUE_URL_${group.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** The environment variable naming a schedule target's queue ARN. */
export const scheduleTargetEnv = (group: string): string =>
  `SCHEDULE_TARGET_QUEUE_ARN_${group.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** The variables of each kind of binding. */
const VARIABLES = {
  table: {
    TABLE_NAME: Text,
    /** How long a warm container trusts a resolved API key; also the revocation delay. */
    API_KEY_CACHE_TTL_SECONDS: seconds(10),
    /**
     * The reputation guardrail's thresholds, each optional, e.g.
     * `bounceRate=0.03,minSends=5000` (`reputation/model.ts`); default ours.
     */
    REPUTATION_GUARDRAIL: v.optional(v.string()),
  },
  endpoints: {
    /** The API's public base URL, ending in /api/v1: links in emails point here. */
    PUBLIC_API_URL: v.pipe(
      v.string(),
      v.url(),
      v.regex(/\/api\/v1$/, 'must end in /api/v1'),
    ),
    /** The application's own sender address, the fallback From. */
    APP_FROM_ADDRESS: v.pipe(v.string(), v.email()),
    /** The base URL of the hosted sign-up pages (their own origin on AWS). */
    PAGES_URL: v.pipe(v.string(), v.url()),
  },
  mail: {
    /** The configuration set of mail sent outside a tenant: its events too. */
    SES_CONFIGURATION_SET: v.optional(Text),
  },
  linkSecret: {
    /** The link signing secret itself (local stack, tests)… */
    LINK_SIGNING_SECRET: v.optional(v.pipe(v.string(), v.minLength(32))),
    /** …or the ARN of the Secrets Manager secret holding it (AWS). */
    LINK_SIGNING_SECRET_ARN: v.optional(v.string()),
  },
  addressKey: {
    /** The address key secret itself (local stack, tests)… */
    ADDRESS_KEY_SECRET: v.optional(v.pipe(v.string(), v.minLength(32))),
    /** …or the ARN of the Secrets Manager secret holding it (AWS). */
    ADDRESS_KEY_SECRET_ARN: v.optional(v.string()),
  },
  sendingSetup: {
    /** Account and region: the SES adapter builds identity and tenant ARNs. */
    AWS_ACCOUNT_ID: v.pipe(
      v.string(),
      v.regex(/^\d{12}$/, 'must be 12 digits'),
    ),
    AWS_REGION: v.optional(v.string(), 'us-east-1'),
    /** DNS servers for ownership checks (comma-separated host[:port]); default: the system's. */
    DNS_SERVERS: v.optional(v.string()),
    /** How long a stored tenant status is trusted before asking SES again. */
    PROVIDER_STATUS_TTL_SECONDS: seconds(60),
    /** The operator's open and click tracking domain; default: SES's own. */
    SES_TRACKING_DOMAIN: v.optional(
      v.pipe(
        v.string(),
        v.regex(
          /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
          'must be a lower-case domain name',
        ),
      ),
    ),
    /** How tracked links and the open pixel use HTTPS on that domain. */
    SES_TRACKING_HTTPS_POLICY: v.optional(
      v.picklist(['REQUIRE', 'REQUIRE_OPEN_ONLY', 'OPTIONAL']),
      'REQUIRE',
    ),
  },
  sendingStatus: {
    AWS_ACCOUNT_ID: v.pipe(
      v.string(),
      v.regex(/^\d{12}$/, 'must be 12 digits'),
    ),
    AWS_REGION: v.optional(v.string(), 'us-east-1'),
    PROVIDER_STATUS_TTL_SECONDS: seconds(60),
  },
  sendingQuota: {
    AWS_ACCOUNT_ID: v.pipe(
      v.string(),
      v.regex(/^\d{12}$/, 'must be 12 digits'),
    ),
    AWS_REGION: v.optional(v.string(), 'us-east-1'),
  },
  scheduler: {
    SCHEDULE_GROUP_NAME: Text,
    SCHEDULER_ROLE_ARN: Text,
    SCHEDULER_DEAD_LETTER_QUEUE_ARN: Text,
    /** The least lead time of `scheduledAt`. */
    SCHEDULE_MIN_LEAD_SECONDS: seconds(120),
  },
  signupForms: {
    /** A form sent sooner than this after it was shown is a bot's. */
    SIGNUP_MIN_FILL_SECONDS: seconds(3),
    /** Sign-ups per source address per hour, across every page. */
    SIGNUP_MAX_PER_IP_PER_HOUR: count(20),
    /** Sign-ups per email address per hour, in one organization. */
    SIGNUP_MAX_PER_EMAIL_PER_HOUR: count(5),
    /** CSP frame-ancestors of the pages, e.g. "https://www.example.com"; default 'none'. */
    SIGNUP_FRAME_ANCESTORS: v.optional(
      v.pipe(
        v.string(),
        v.regex(
          /^('none'|'self'|https:\/\/[a-z0-9.*-]+(:\d+)?)( ('self'|https:\/\/[a-z0-9.*-]+(:\d+)?))*$/,
          "must be 'none', or space-separated https origins and 'self'",
        ),
      ),
      "'none'",
    ),
    /** The CAPTCHA provider of every page, if any: turnstile or hcaptcha. */
    SIGNUP_CAPTCHA_PROVIDER: v.optional(v.picklist(['turnstile', 'hcaptcha'])),
    /** Its public site key. */
    SIGNUP_CAPTCHA_SITE_KEY: v.optional(Text),
    /** Its secret key itself (local stack, tests)… */
    SIGNUP_CAPTCHA_SECRET: v.optional(Text),
    /** …or the ARN of the Secrets Manager secret holding it (AWS). */
    SIGNUP_CAPTCHA_SECRET_ARN: v.optional(Text),
  },
  webhookEvents: {
    /** The table holding the organizations' subscription summaries. */
    TABLE_NAME: Text,
  },
  webhookCalls: {},
  mailboxLookup: {},
  gatewayKeys: {
    /** The REST API whose stage's usage plan holds the keys… */
    REST_API_ID: Text,
    /** …and that stage (the plan is found by them at the first key change). */
    API_STAGE_NAME: Text,
  },
  queue: {},
} as const satisfies Record<Binding['kind'], v.ObjectEntries>;

/**
 * The validated configuration. Each variable is there when one of the
 * function's bindings needs it (a schema of that binding checked it).
 */
export interface Config {
  TABLE_NAME?: string;
  API_KEY_CACHE_TTL_SECONDS?: number;
  REPUTATION_GUARDRAIL?: string;
  PUBLIC_API_URL?: string;
  APP_FROM_ADDRESS?: string;
  LINK_SIGNING_SECRET?: string;
  LINK_SIGNING_SECRET_ARN?: string;
  ADDRESS_KEY_SECRET?: string;
  ADDRESS_KEY_SECRET_ARN?: string;
  AWS_ACCOUNT_ID?: string;
  AWS_REGION?: string;
  DNS_SERVERS?: string;
  PROVIDER_STATUS_TTL_SECONDS?: number;
  SES_CONFIGURATION_SET?: string;
  SES_TRACKING_DOMAIN?: string;
  SES_TRACKING_HTTPS_POLICY?: 'REQUIRE' | 'REQUIRE_OPEN_ONLY' | 'OPTIONAL';
  SCHEDULE_GROUP_NAME?: string;
  SCHEDULER_ROLE_ARN?: string;
  SCHEDULER_DEAD_LETTER_QUEUE_ARN?: string;
  SCHEDULE_MIN_LEAD_SECONDS?: number;
  PAGES_URL?: string;
  SIGNUP_MIN_FILL_SECONDS?: number;
  SIGNUP_MAX_PER_IP_PER_HOUR?: number;
  SIGNUP_MAX_PER_EMAIL_PER_HOUR?: number;
  SIGNUP_FRAME_ANCESTORS?: string;
  SIGNUP_CAPTCHA_PROVIDER?: 'turnstile' | 'hcaptcha';
  SIGNUP_CAPTCHA_SITE_KEY?: string;
  SIGNUP_CAPTCHA_SECRET?: string;
  SIGNUP_CAPTCHA_SECRET_ARN?: string;
  REST_API_ID?: string;
  API_STAGE_NAME?: string;
  /** Queue URLs and schedule targets, by their derived names. */
  [name: string]: string | number | undefined;
}

/** A variable a binding's schema required, read back. */
export const required = <T>(value: T | undefined, name: string): T => {
  if (value === undefined) {
    throw new Error(`Invalid configuration: ${name} is required`);
  }
  return value;
};

/** The configuration schema of a function with these bindings. */
export const configSchemaOf = (bindings: Bindings) => {
  const entries: v.ObjectEntries = {};
  for (const binding of bindings) {
    Object.assign(entries, VARIABLES[binding.kind]);
    if (binding.kind === 'queue') {
      entries[queueUrlEnv(binding.queue)] = v.pipe(v.string(), v.url());
    }
    if (binding.kind === 'webhookEvents') {
      // Where the events go: the fan-out consumer's queue.
      entries[queueUrlEnv(WEBHOOK_FANOUT_QUEUE)] = v.pipe(v.string(), v.url());
    }
    if (binding.kind === 'scheduler') {
      for (const target of binding.queues) {
        entries[scheduleTargetEnv(target)] = Text;
      }
    }
  }
  const linkSecret = bindingsOf(bindings, 'linkSecret').length > 0;
  const addressKey = bindingsOf(bindings, 'addressKey').length > 0;
  return v.pipe(
    v.object(entries),
    v.check(
      (env: Record<string, unknown>) =>
        !linkSecret ||
        Boolean(env.LINK_SIGNING_SECRET || env.LINK_SIGNING_SECRET_ARN),
      'LINK_SIGNING_SECRET or LINK_SIGNING_SECRET_ARN is required',
    ),
    v.check(
      (env: Record<string, unknown>) =>
        !addressKey ||
        Boolean(env.ADDRESS_KEY_SECRET || env.ADDRESS_KEY_SECRET_ARN),
      'ADDRESS_KEY_SECRET or ADDRESS_KEY_SECRET_ARN is required',
    ),
    v.check(
      (env: Record<string, unknown>) =>
        !env.SIGNUP_CAPTCHA_PROVIDER ||
        Boolean(
          env.SIGNUP_CAPTCHA_SITE_KEY &&
            (env.SIGNUP_CAPTCHA_SECRET || env.SIGNUP_CAPTCHA_SECRET_ARN),
        ),
      'SIGNUP_CAPTCHA_PROVIDER needs SIGNUP_CAPTCHA_SITE_KEY and SIGNUP_CAPTCHA_SECRET or SIGNUP_CAPTCHA_SECRET_ARN',
    ),
  );
};

/** The names of the variables a function with these bindings is told. */
export const configNamesOf = (bindings: Bindings): string[] =>
  Object.keys(configSchemaOf(bindings).pipe[0].entries).sort();

/**
 * Reads and validates the configuration of a function with these
 * bindings; throws naming every bad variable.
 */
export const loadConfig = (
  bindings: Bindings,
  env: Record<string, string | undefined> = process.env,
): Config => {
  const result = v.safeParse(configSchemaOf(bindings), env);
  if (!result.success) {
    const problems = result.issues
      .map((issue) => `${v.getDotPath(issue) ?? '?'}: ${issue.message}`)
      .join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return result.output as Config;
};
