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

const ConfigSchema = v.object({
  TABLE_NAME: v.pipe(v.string(), v.minLength(1)),
  /** How long a warm container trusts a resolved API key; also the revocation delay. */
  API_KEY_CACHE_TTL_SECONDS: seconds(10),
});

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
