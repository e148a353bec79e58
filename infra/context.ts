/**
 * Infrastructure. The operator's settings of a stage, from the CDK context
 * (`-c name=value` or cdk.json), each checked before anything is built: a
 * wrong value fails the synth with the setting's name, never a deploy.
 */
import { CfnParameter } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { TrackingDomain } from '../shared/adapters/aws/ses-email-provider.ts';
import { API_PREFIX } from '../shared/http/route.ts';
import {
  DEFAULT_MEMORY_MB,
  type SignupFormResources,
} from './constructs/app-function.ts';

/** The sender address used when the `appFromAddress` context is not given. */
export const DEFAULT_APP_FROM_ADDRESS = 'no-reply@example.com';

/**
 * An email address as the functions' configuration accepts it (valibot's
 * `email()`), in the Java regex syntax of a CloudFormation `AllowedPattern`.
 */
const EMAIL_PATTERN =
  '^[\\w+-]+(\\.[\\w+-]+)*@[A-Za-z0-9]+([.-][A-Za-z0-9]+)*\\.[A-Za-z]{2,}$';

/**
 * The application's own sender address: the `AppFromAddress` parameter
 * (added to `scope`), whose default is the `appFromAddress` context.
 */
export const appFromAddress = (scope: Construct): CfnParameter => {
  const defaultFrom =
    contextString(scope, 'appFromAddress') ?? DEFAULT_APP_FROM_ADDRESS;
  if (!new RegExp(EMAIL_PATTERN).test(defaultFrom)) {
    throw new Error(
      `The appFromAddress context must be an email address; got ${defaultFrom}`,
    );
  }
  return new CfnParameter(scope, 'AppFromAddress', {
    type: 'String',
    description:
      "The application's own sender address, the fallback From of every email. It must be a verified SES identity (or belong to a verified domain) in this account and region.",
    default: defaultFrom,
    allowedPattern: EMAIL_PATTERN,
    constraintDescription:
      'must be an email address, e.g. no-reply@example.com',
  });
};

/**
 * The base URL links in emails point to when the API has a custom domain:
 * the `publicApiUrl` context, an https URL ending in the API's prefix.
 */
export const publicApiUrl = (scope: Construct): string | undefined => {
  const fromContext = contextString(scope, 'publicApiUrl');
  if (
    fromContext !== undefined &&
    (!URL.canParse(fromContext) ||
      !fromContext.startsWith('https://') ||
      !fromContext.endsWith(API_PREFIX))
  ) {
    throw new Error(
      `The publicApiUrl context must be an https URL ending in ${API_PREFIX}; got ${fromContext}`,
    );
  }
  return fromContext;
};

/**
 * The pages' custom domain: `signupPagesDomain` with
 * `signupPagesCertificateArn` (an ACM certificate of this region), or none.
 */
export const signupPagesDomain = (
  scope: Construct,
): { name: string; certificateArn: string } | undefined => {
  const name = contextString(scope, 'signupPagesDomain');
  const certificateArn = contextString(scope, 'signupPagesCertificateArn');
  if (name !== undefined && !DOMAIN_NAME.test(name)) {
    throw new Error(
      `The signupPagesDomain context must be a lower-case domain name; got ${name}`,
    );
  }
  if ((name === undefined) !== (certificateArn === undefined)) {
    throw new Error(
      'Give signupPagesDomain and signupPagesCertificateArn together',
    );
  }
  return name && certificateArn ? { name, certificateArn } : undefined;
};

/**
 * The sign-up form's settings from the context: `signupMinFillSeconds`,
 * `signupMaxPerIpPerHour`, `signupMaxPerEmailPerHour`,
 * `signupFrameAncestors`, and a CAPTCHA with `signupCaptchaProvider`
 * (turnstile or hcaptcha), `signupCaptchaSiteKey` and
 * `signupCaptchaSecretName` (a Secrets Manager secret holding its key,
 * imported into `scope`).
 */
export const signupFormResources = (scope: Construct): SignupFormResources => {
  const count = (key: string): number | undefined =>
    contextWholeNumber(scope, key, [0, Infinity], () => 'a whole number');
  const provider = contextString(scope, 'signupCaptchaProvider');
  const siteKey = contextString(scope, 'signupCaptchaSiteKey');
  const secretName = contextString(scope, 'signupCaptchaSecretName');
  if (
    provider !== undefined &&
    provider !== 'turnstile' &&
    provider !== 'hcaptcha'
  ) {
    throw new Error(
      'The signupCaptchaProvider context must be turnstile or hcaptcha',
    );
  }
  if (provider && (!siteKey || !secretName)) {
    throw new Error(
      'signupCaptchaProvider needs signupCaptchaSiteKey and signupCaptchaSecretName',
    );
  }
  const frameAncestors = contextString(scope, 'signupFrameAncestors');
  const settings: SignupFormResources = {};
  const minFill = count('signupMinFillSeconds');
  const perIp = count('signupMaxPerIpPerHour');
  const perEmail = count('signupMaxPerEmailPerHour');
  if (minFill !== undefined) settings.minFillSeconds = minFill;
  if (perIp !== undefined) settings.maxPerIpPerHour = perIp;
  if (perEmail !== undefined) settings.maxPerEmailPerHour = perEmail;
  if (frameAncestors !== undefined) settings.frameAncestors = frameAncestors;
  if (provider && siteKey && secretName) {
    settings.captcha = {
      provider,
      siteKey,
      secret: Secret.fromSecretNameV2(scope, 'CaptchaSecret', secretName),
    };
  }
  return settings;
};

/**
 * A consumer's memory in MB: the `<group>MemoryMB` context
 * (`sendMemoryMB`…), else what the group declares, else the default.
 */
export const memoryOf = (
  scope: Construct,
  group: string,
  declared: number | undefined,
): number => {
  const mb = contextWholeNumber(
    scope,
    `${group}MemoryMB`,
    [128, 10_240],
    (value) => `a whole number of MB from 128 to 10240; got ${String(value)}`,
  );
  return mb ?? declared ?? DEFAULT_MEMORY_MB;
};

/**
 * The operator's open and click tracking domain (the `trackingDomain`
 * context) and its HTTPS policy (`trackingHttpsPolicy`, default REQUIRE):
 * the application's configuration set and every tenant's name it.
 * Without it SES tracks through its own domain.
 */
export const trackingDomain = (
  scope: Construct,
): TrackingDomain | undefined => {
  const domain = contextString(scope, 'trackingDomain');
  const policy = contextString(scope, 'trackingHttpsPolicy') ?? 'REQUIRE';
  if (!isHttpsPolicy(policy)) {
    throw new Error(
      `The trackingHttpsPolicy context must be one of ${HTTPS_POLICIES.join(', ')}; got ${policy}`,
    );
  }
  if (domain === undefined) return undefined;
  if (!DOMAIN_NAME.test(domain)) {
    throw new Error(
      `The trackingDomain context must be a lower-case domain name such as track.example.com; got ${domain}`,
    );
  }
  return { domain, httpsPolicy: policy };
};

/**
 * Requests one source address may make in a minute (from `-c name=42` or
 * cdk.json), or `fallback`: what a WAF rate-based rule counts, from 10 to
 * 2,000,000,000 per window.
 */
export const requestsPerMinute = (
  scope: Construct,
  key: string,
  fallback: number,
): number =>
  contextWholeNumber(
    scope,
    key,
    [10, 2_000_000_000],
    () => 'an integer from 10 up',
  ) ?? fallback;

const HTTPS_POLICIES = ['REQUIRE', 'REQUIRE_OPEN_ONLY', 'OPTIONAL'] as const;

const isHttpsPolicy = (value: string): value is TrackingDomain['httpsPolicy'] =>
  (HTTPS_POLICIES as readonly string[]).includes(value);

/** A lower-case domain name of two labels or more. */
const DOMAIN_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/**
 * A whole-number context value within `[min, max]` (`-c name=42` gives a
 * string), or undefined; anything else fails: `The <key> context must be
 * <what the value should be>`.
 */
const contextWholeNumber = (
  scope: Construct,
  key: string,
  [min, max]: readonly [number, number],
  shouldBe: (value: unknown) => string,
): number | undefined => {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined) return undefined;
  const number = typeof value === 'string' ? Number(value) : value;
  if (
    typeof number !== 'number' ||
    !Number.isInteger(number) ||
    number < min ||
    number > max
  ) {
    throw new Error(`The ${key} context must be ${shouldBe(value)}`);
  }
  return number;
};

/** A string context value, or undefined; anything else is an error. */
const contextString = (scope: Construct, key: string): string | undefined => {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw new Error(`The ${key} context must be a non-empty string`);
  }
  return value;
};
