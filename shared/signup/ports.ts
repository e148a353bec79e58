/**
 * Ports of sign-up pages: their store, the counters that bound abuse of the
 * public form, and the CAPTCHA check. Pages also read lists and the
 * organization, and add contacts the audience's way.
 */
import type { Page, PageRequest } from '../ports.ts';
import type { SignupPage } from './model.ts';

/** A published page found by its public address. */
export interface PublishedPage {
  orgId: string;
  page: SignupPage;
  /** The sanitized HTML of a pasted page. */
  html?: string;
}

/** Sign-up pages of an organization. */
export interface SignupPageRepository {
  /**
   * Stores a new page (and its pasted HTML), reserves its slug under the
   * organization's slug and counts it, in one transaction:
   * `ConflictError` (`signupPage.slugTaken`) for a taken slug,
   * `RuleViolationError` (`signupPage.limitReached`) past the cap.
   */
  create(
    org: { id: string; slug: string },
    page: SignupPage,
    html?: string,
  ): Promise<void>;
  /** One page (strongly consistent), without its HTML. */
  get(orgId: string, pageId: string): Promise<SignupPage | undefined>;
  /** The sanitized HTML of a pasted page. */
  html(orgId: string, pageId: string): Promise<string | undefined>;
  /** Newest first; the total from the organization's counter. */
  page(orgId: string, request: PageRequest): Promise<Page<SignupPage>>;
  /** Every page of the organization, newest first (at most the cap). */
  all(orgId: string): Promise<SignupPage[]>;
  /**
   * Replaces a page on the condition that it is still at `before`'s
   * version; moves the slug reservation when the slug changed
   * (`signupPage.slugTaken`); writes the HTML when given, deletes it for
   * null. `ConflictError` (`write.contended`) when the page changed.
   */
  update(
    org: { id: string; slug: string },
    before: SignupPage,
    after: SignupPage,
    html?: string | null,
  ): Promise<void>;
  /** Deletes a page, its HTML and its slug; false when it was gone. */
  delete(org: { id: string; slug: string }, page: SignupPage): Promise<boolean>;
  /** The published page at `/p/{orgSlug}/{pageSlug}`, if any. */
  published(
    orgSlug: string,
    pageSlug: string,
  ): Promise<PublishedPage | undefined>;
}

/** Fixed-window counters that bound what the public form lets through. */
export interface SignupLimits {
  /**
   * Counts one attempt under `key` in the window starting at `windowStart`
   * (seconds since the epoch, `windowSeconds` long); false, counting
   * nothing, when `max` were already counted there.
   */
  take(
    key: string,
    windowStart: number,
    windowSeconds: number,
    max: number,
  ): Promise<boolean>;
  /**
   * Marks that a confirmation email goes to `email` for `pageId` now;
   * false, writing nothing, when one did within `seconds`.
   */
  claimConfirmation(
    orgId: string,
    pageId: string,
    email: string,
    now: Date,
    seconds: number,
  ): Promise<boolean>;
  /**
   * Lets a mark go (the email did not go out after all): the next sign-up
   * of the address on the page may send one at once.
   */
  releaseConfirmation(
    orgId: string,
    pageId: string,
    email: string,
  ): Promise<void>;
  /**
   * Deletes every item naming an erased address: its counter's windows and
   * its confirmation marks on these pages. Returns how many were deleted.
   */
  forgetAddress(
    orgId: string,
    email: string,
    pageIds: readonly string[],
  ): Promise<number>;
}

/** Checks the answer of a CAPTCHA widget with its provider. */
export interface CaptchaVerifier {
  /** The provider whose widget the page shows. */
  provider: 'turnstile' | 'hcaptcha';
  /** The public site key the widget is drawn with. */
  siteKey: string;
  /** Whether the provider accepts this answer from this address. */
  verify(response: string, remoteIp: string | undefined): Promise<boolean>;
}

/** How the public form defends itself (operator configuration). */
export interface SignupFormSettings {
  /** Less time than this between showing the form and a submission is a bot. */
  minFillSeconds: number;
  /** Submissions per source address per hour, across all pages. */
  maxPerIpPerHour: number;
  /** Submissions per email address per hour, in one organization. */
  maxPerEmailPerHour: number;
  /** CSP `frame-ancestors` of the pages: `'none'` unless configured. */
  frameAncestors: string;
  /** The CAPTCHA every page asks, when the operator configured one. */
  captcha?: CaptchaVerifier;
}
