/**
 * The public sign-up form's settings from the configuration, shared by the
 * composition roots: the limits, the frame ancestors, and the CAPTCHA
 * verifier when a provider is configured.
 */
import { HttpCaptchaVerifier } from '../adapters/http-captcha-verifier.ts';
import type { Config } from '../config.ts';
import type { SignupFormSettings } from '../signup/ports.ts';

/** Defaults when a variable is absent (the config schema applies them too). */
export const SIGNUP_FORM_DEFAULTS = {
  minFillSeconds: 3,
  maxPerIpPerHour: 20,
  maxPerEmailPerHour: 5,
  frameAncestors: "'none'",
} as const;

/** Builds the settings; the secret is fetched when first needed. */
export const signupFormSettings = (
  config: Config,
  secretFrom: (arn: string, what: string) => Promise<string>,
): SignupFormSettings => {
  const provider = config.SIGNUP_CAPTCHA_PROVIDER;
  const siteKey = config.SIGNUP_CAPTCHA_SITE_KEY;
  let secret: Promise<string> | undefined;
  return {
    minFillSeconds:
      config.SIGNUP_MIN_FILL_SECONDS ?? SIGNUP_FORM_DEFAULTS.minFillSeconds,
    maxPerIpPerHour:
      config.SIGNUP_MAX_PER_IP_PER_HOUR ?? SIGNUP_FORM_DEFAULTS.maxPerIpPerHour,
    maxPerEmailPerHour:
      config.SIGNUP_MAX_PER_EMAIL_PER_HOUR ??
      SIGNUP_FORM_DEFAULTS.maxPerEmailPerHour,
    frameAncestors:
      config.SIGNUP_FRAME_ANCESTORS ?? SIGNUP_FORM_DEFAULTS.frameAncestors,
    ...(provider && siteKey
      ? {
          captcha: new HttpCaptchaVerifier(provider, siteKey, () => {
            secret ??= config.SIGNUP_CAPTCHA_SECRET
              ? Promise.resolve(config.SIGNUP_CAPTCHA_SECRET)
              : secretFrom(config.SIGNUP_CAPTCHA_SECRET_ARN ?? '', 'CAPTCHA');
            return secret;
          }),
        }
      : {}),
  };
};
