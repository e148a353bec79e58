/**
 * Runtime configuration, read from the environment once and validated, so a
 * misconfigured function fails at cold start rather than on a request.
 */
import * as v from 'valibot';

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

const ConfigSchema = v.pipe(
  v.object({
    TABLE_NAME: v.pipe(v.string(), v.minLength(1)),
    /** How long a warm container trusts a resolved API key; also the revocation delay. */
    API_KEY_CACHE_TTL_SECONDS: seconds(10),
    /** The API's public base URL, ending in /api/v1: links in emails point here. */
    PUBLIC_API_URL: v.pipe(
      v.string(),
      v.url(),
      v.regex(/\/api\/v1$/, 'must end in /api/v1'),
    ),
    /** The application's own sender address, the fallback From. */
    APP_FROM_ADDRESS: v.pipe(v.string(), v.email()),
    /** The link signing secret itself (local stack, tests)… */
    LINK_SIGNING_SECRET: v.optional(v.pipe(v.string(), v.minLength(32))),
    /** …or the ARN of the Secrets Manager secret holding it (AWS). */
    LINK_SIGNING_SECRET_ARN: v.optional(v.string()),
    /** Account and region: the SES adapter builds identity and tenant ARNs. */
    AWS_ACCOUNT_ID: v.optional(
      v.pipe(v.string(), v.regex(/^\d{12}$/, 'must be 12 digits')),
    ),
    AWS_REGION: v.optional(v.string(), 'us-east-1'),
    /** DNS servers for ownership checks (comma-separated host[:port]); default: the system's. */
    DNS_SERVERS: v.optional(v.string()),
    /** How long a stored tenant status is trusted before asking SES again. */
    PROVIDER_STATUS_TTL_SECONDS: seconds(60),
  }),
  v.check(
    (env) => Boolean(env.LINK_SIGNING_SECRET || env.LINK_SIGNING_SECRET_ARN),
    'LINK_SIGNING_SECRET or LINK_SIGNING_SECRET_ARN is required',
  ),
);

/** The validated configuration of a function or of the local stack. */
export type Config = v.InferOutput<typeof ConfigSchema>;

/** Reads and validates the configuration; throws naming every bad variable. */
export const loadConfig = (
  env: Record<string, string | undefined> = process.env,
): Config => {
  const result = v.safeParse(ConfigSchema, env);
  if (!result.success) {
    const problems = result.issues
      .map((issue) => `${v.getDotPath(issue) ?? '?'}: ${issue.message}`)
      .join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return result.output;
};
