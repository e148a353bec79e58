/**
 * Driven adapter: checks a CAPTCHA answer with its provider's siteverify
 * endpoint (Cloudflare Turnstile or hCaptcha; both take `secret`,
 * `response` and `remoteip` as a form, and answer `{ success }`). A provider that cannot be reached or
 * answers something else counts as a refusal: the form's answer is the
 * same either way, and nothing is written.
 */
import * as v from 'valibot';
import { logger } from '../observability.ts';
import type { CaptchaVerifier } from '../signup/ports.ts';

/** Where each provider checks an answer. */
export const SITEVERIFY_URLS = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
} as const;

const Answer = v.object({ success: v.boolean() });

/** How long a check may take before it counts as a refusal. */
const TIMEOUT_MS = 5_000;

/** A provider's siteverify endpoint behind the port. */
export class HttpCaptchaVerifier implements CaptchaVerifier {
  constructor(
    readonly provider: 'turnstile' | 'hcaptcha',
    readonly siteKey: string,
    private readonly secret: () => Promise<string>,
    private readonly url: string = SITEVERIFY_URLS[provider],
  ) {}

  async verify(
    response: string,
    remoteIp: string | undefined,
  ): Promise<boolean> {
    const body = new URLSearchParams({
      secret: await this.secret(),
      response,
      // hCaptcha checks the answer was given to this site key.
      ...(this.provider === 'hcaptcha' ? { sitekey: this.siteKey } : {}),
      ...(remoteIp ? { remoteip: remoteIp } : {}),
    });
    try {
      const answer = await fetch(this.url, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const parsed = v.safeParse(Answer, await answer.json());
      return answer.ok && parsed.success && parsed.output.success;
    } catch (error) {
      logger.warn('CAPTCHA check failed', { error, provider: this.provider });
      return false;
    }
  }
}
