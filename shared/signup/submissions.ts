/**
 * The public side of sign-up pages: showing a published page, and taking
 * its form. Every sign-up goes through double opt-in, whatever the
 * organization's `optin.required`: the contact is pending (or stays
 * unsubscribed) until it follows the link of the confirmation email.
 *
 * The answer never tells what happened to the address (no enumeration):
 * a new, pending, subscribed, unsubscribed or suppressed address, a bot
 * caught by a defence, or a limit reached — all get the same success
 * message. Only mistakes a person can fix (a malformed email, a name too
 * long, a name carrying a web address or a phone number, a custom field's
 * value that does not fit it) are answered, on the form, naming the field.
 */
import * as v from 'valibot';
import { sendConfirmation } from '../audience/confirmation.ts';
import {
  type ConsentRecord,
  type Contact,
  MAX_CONSENT_RECORDS,
} from '../audience/model.ts';
import type { AudienceDeps } from '../audience/ports.ts';
import { suppressedStatuses } from '../audience/suppressed.ts';
import {
  ExpiredLinkError,
  InvalidLinkError,
  NotFoundError,
} from '../errors.ts';
import type { FieldValue } from '../fields/model.ts';
import { definitionsOf } from '../fields/values.ts';
import { Claim, type LinkCodec, readLink, signLink } from '../links/claims.ts';
import { logger } from '../observability.ts';
import { retryOnConflict } from '../retry.ts';
import type { ReadinessDeps } from '../sending/readiness.ts';
import { EmailAddress, lineText } from '../validation.ts';
import {
  type AskedRecord,
  askedRecordsOf,
  customInputsOf,
} from './custom-fields.ts';
import { readCustomFields } from './custom-values.ts';
import { contactInEmail, contactInName, contactInNames } from './form-names.ts';
import { CAPTCHA_RESPONSE_FIELDS } from './markup.ts';
import { addressCounter, type SignupPage } from './model.ts';
import type { CustomFormState, CustomInput } from './page-model.ts';
import type {
  PublishedPage,
  SignupFormSettings,
  SignupLimits,
  SignupPageRepository,
} from './ports.ts';
import { sourceOf } from './source-address.ts';
import type { FormState, SignupField } from './themes.ts';

/** What the public form needs. */
export type SubmissionDeps = Omit<AudienceDeps, 'provider' | 'dns'> &
  ReadinessDeps & {
    signupPages: SignupPageRepository;
    signupLimits: SignupLimits;
    signupForms: SignupFormSettings;
  };

/** The link purpose of the form's fill-time token. */
export const FORM_TOKEN_PURPOSE = 'signup-form';
/** The hidden input carrying the fill-time token. */
export const FORM_TOKEN_FIELD = 'form_token';
/** The honeypot: a text input people never see; bots fill it. */
export const HONEYPOT_FIELD = 'website';
/** A form token lasts a day: a tab left open longer is asked to send again. */
const FORM_TOKEN_TTL_SECONDS = 24 * 3600;
/** At most one confirmation email per address per page in this time. */
export const CONFIRMATION_SPACING_SECONDS = 24 * 3600;
const HOUR = 3600;

/** The browser and network facts of a sign-up. */
export interface Visitor {
  ip?: string;
  userAgent?: string;
  /**
   * The page that sent the visitor to the form: the `Referer` of the page
   * view, carried by the form's token (the post itself has none).
   */
  referrer?: string;
}

/** A page to draw: what it is, and the state of its form. */
export interface ShownPage {
  published: PublishedPage;
  organizationName: string;
  state: FormState;
  /** 200 for the page, 400 when the form is shown again with errors. */
  statusCode: 200 | 400;
}

const notFound = () => new NotFoundError('signupPage.notFound', 'No such page');

const findPage = async (
  deps: Pick<SubmissionDeps, 'signupPages' | 'organizations'>,
  orgSlug: string,
  pageSlug: string,
) => {
  const published = await deps.signupPages.published(orgSlug, pageSlug);
  if (!published) throw notFound();
  const org = await deps.organizations.get(published.orgId);
  if (!org) throw notFound();
  return { published, org };
};

/** The longest referrer a consent record keeps, in characters. */
const MAX_REFERRER_CHARS = 2048;

/**
 * The page that sent the visitor to the form (the `Referer` of the page's
 * GET), as a consent record keeps it: an http(s) URL of at most 2,048
 * characters, normalized; anything else is no referrer at all.
 */
export const referrerOf = (header: string | undefined): string | undefined => {
  if (!header || header.length > MAX_REFERRER_CHARS) return undefined;
  let url: URL;
  try {
    url = new URL(header);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return url.href.length <= MAX_REFERRER_CHARS ? url.href : undefined;
};

/** What a form's token says about the form (see `freshState`). */
interface FormOrigin {
  /** When the person first saw the form (epoch milliseconds). */
  shownAt: number;
  /**
   * The page view's own id: one sign-up per view. The form shown again
   * with its errors keeps it, so a token is used once, not replayed.
   */
  view: string;
  /** The page that sent them to it, if it said so. */
  referrer?: string;
}

/**
 * What the form's fill-time token says: its page and origin. A token from
 * before views had ids has no `view`.
 */
type FormTokenClaims = Omit<FormOrigin, 'view'> & {
  pageId: string;
  view?: string;
};

/** The form's fill-time token. */
const FORM_TOKEN: LinkCodec<FormTokenClaims> = {
  purpose: FORM_TOKEN_PURPOSE,
  ttlSeconds: FORM_TOKEN_TTL_SECONDS,
  toWire: (claims) => ({
    p: claims.pageId,
    t: String(claims.shownAt),
    ...(claims.view ? { v: claims.view } : {}),
    ...(claims.referrer ? { r: claims.referrer } : {}),
  }),
  fromWire: v.pipe(
    v.object({
      p: Claim,
      t: v.pipe(Claim, v.transform(Number), v.finite()),
      v: v.optional(Claim),
      r: v.optional(v.string()),
    }),
    v.transform((wire) => {
      const referrer = referrerOf(wire.r);
      return {
        pageId: wire.p,
        shownAt: wire.t,
        ...(wire.v ? { view: wire.v } : {}),
        ...(referrer ? { referrer } : {}),
      };
    }),
  ),
};

/**
 * A form to draw, with a token saying when it was first shown and where
 * the visitor came from: our pages send no `Referer` themselves
 * (`Referrer-Policy: no-referrer`), so the form's post carries the page
 * view's in its token.
 */
const freshState = async (
  deps: Pick<SubmissionDeps, 'links' | 'clock' | 'signupForms' | 'ids'>,
  page: SignupPage,
  origin: FormOrigin = {
    shownAt: deps.clock.now().getTime(),
    view: deps.ids.id(),
  },
  values: FormState['values'] = {},
  errors: FormState['errors'] = {},
  custom?: CustomFormState,
): Promise<FormState> => ({
  values,
  errors,
  ...(custom?.inputs.length ? { custom } : {}),
  hidden: {
    [FORM_TOKEN_FIELD]: await signLink(deps.links, FORM_TOKEN, {
      pageId: page.id,
      ...origin,
    }),
  },
  honeypot: HONEYPOT_FIELD,
  ...(deps.signupForms.captcha
    ? {
        captcha: {
          provider: deps.signupForms.captcha.provider,
          siteKey: deps.signupForms.captcha.siteKey,
        },
      }
    : {}),
  done: false,
});

/**
 * The custom fields a page's form asks: those of its fields that still
 * exist (one Query of the organization's fields, only when the page asks
 * some). A pasted page asks none.
 */
const customInputs = async (
  deps: Pick<SubmissionDeps, 'fields'>,
  orgId: string,
  page: SignupPage,
): Promise<CustomInput[]> =>
  page.theme !== null && page.content.customFields?.length
    ? customInputsOf(
        page.content.customFields,
        await definitionsOf(deps, orgId),
      )
    : [];

/**
 * The published page at `/p/{orgSlug}/{pageSlug}`, with an empty form
 * remembering the page that sent the visitor (`referrer`, the GET's
 * `Referer` header) for the consent record.
 */
export const showSignupPage = async (
  deps: Pick<
    SubmissionDeps,
    | 'signupPages'
    | 'organizations'
    | 'links'
    | 'clock'
    | 'signupForms'
    | 'ids'
    | 'fields'
  >,
  orgSlug: string,
  pageSlug: string,
  referrer?: string,
): Promise<ShownPage> => {
  const { published, org } = await findPage(deps, orgSlug, pageSlug);
  const from = referrerOf(referrer);
  const inputs = await customInputs(deps, published.orgId, published.page);
  return {
    published,
    organizationName: org.name,
    state: await freshState(
      deps,
      published.page,
      {
        shownAt: deps.clock.now().getTime(),
        view: deps.ids.id(),
        ...(from ? { referrer: from } : {}),
      },
      {},
      {},
      { inputs, values: {}, errors: {} },
    ),
    statusCode: 200,
  };
};

const NameField = v.pipe(
  lineText(400),
  v.trim(),
  v.maxLength(100, 'must be at most 100 characters'),
);

/** The fields a person fills, checked; messages written for people. */
const checkFields = (
  page: SignupPage,
  form: Record<string, string>,
): {
  values: Partial<Record<SignupField, string>>;
  errors: Partial<Record<SignupField, string>>;
  email?: string;
  firstName?: string;
  lastName?: string;
} => {
  const values: Partial<Record<SignupField, string>> = {
    email: (form.email ?? '').slice(0, 320),
    ...(page.content.fields.firstName
      ? { firstName: (form.firstName ?? '').slice(0, 200) }
      : {}),
    ...(page.content.fields.lastName
      ? { lastName: (form.lastName ?? '').slice(0, 200) }
      : {}),
  };
  const errors: Partial<Record<SignupField, string>> = {};
  const email = v.safeParse(EmailAddress, form.email ?? '');
  if ((form.email ?? '').trim() === '') {
    errors.email = 'Enter your email address.';
  } else if (!email.success) {
    errors.email = 'Enter an email address in the form name@example.com.';
  } else if (contactInEmail(email.output)) {
    errors.email =
      'Enter your email address without a web address after the +.';
  }
  const names: Record<string, string | undefined> = {};
  for (const field of ['firstName', 'lastName'] as const) {
    if (!page.content.fields[field]) continue;
    const parsed = v.safeParse(NameField, form[field] ?? '');
    if (!parsed.success) {
      errors[field] = `Use at most 100 characters, on one line.`;
    } else if (contactInName(parsed.output)) {
      errors[field] =
        'Enter a name only: no web or email address, no phone number.';
    } else if (parsed.output) {
      names[field] = parsed.output;
    }
  }
  // Two names that make a number or an address only together.
  if (names.firstName && names.lastName) {
    if (contactInNames([names.firstName, names.lastName])) {
      errors.lastName =
        'Enter a name only: no web or email address, no phone number.';
      delete names.lastName;
    }
  }
  return {
    values,
    errors,
    ...(email.success ? { email: email.output } : {}),
    ...(names.firstName ? { firstName: names.firstName } : {}),
    ...(names.lastName ? { lastName: names.lastName } : {}),
  };
};

/** The names a form gave, marked as a stranger's (see `Contact.signupNames`). */
const signupNamesOf = (input: {
  firstName?: string;
  lastName?: string;
}): Pick<Contact, 'signupNames'> => {
  const names = (['firstName', 'lastName'] as const).filter(
    (name) => input[name],
  );
  return names.length ? { signupNames: names } : {};
};

/** Why a submission was dropped without a word (logged, never shown). */
type Dropped =
  | 'honeypot'
  | 'token'
  | 'token_used'
  | 'too_fast'
  | 'captcha'
  | 'ip_limit'
  | 'email_limit';

/** What the form's token says; undefined for a forged or missing one. */
const readToken = async (
  deps: Pick<SubmissionDeps, 'links'>,
  page: SignupPage,
  token: string | undefined,
): Promise<FormOrigin | 'expired' | undefined> => {
  if (!token) return undefined;
  try {
    const { pageId, view, ...origin } = await readLink(
      deps.links,
      FORM_TOKEN,
      token,
    );
    if (pageId !== page.id) return undefined;
    // A token from before views had ids: shown again, as an expired one.
    if (!view) return 'expired';
    return { ...origin, view };
  } catch (error) {
    if (error instanceof ExpiredLinkError) return 'expired';
    if (error instanceof InvalidLinkError) return undefined;
    throw error;
  }
};

/** The hour window a counter counts in (epoch seconds). */
const hourOf = (now: Date) => Math.floor(now.getTime() / 1000 / HOUR) * HOUR;

/**
 * Takes a submission of a published page's form. Answers the page with
 * errors (400) for a mistake a person can fix, and otherwise the success
 * message (200), whatever happened to the address.
 */
export const submitSignup = async (
  deps: SubmissionDeps,
  orgSlug: string,
  pageSlug: string,
  form: Record<string, string>,
  visitor: Omit<Visitor, 'referrer'>,
): Promise<ShownPage> => {
  const { published, org } = await findPage(deps, orgSlug, pageSlug);
  const { page, orgId } = published;
  const settings = deps.signupForms;
  const shown = (state: FormState, statusCode: 200 | 400): ShownPage => ({
    published,
    organizationName: org.name,
    state,
    statusCode,
  });
  const success = async () =>
    shown({ ...(await freshState(deps, page)), done: true }, 200);
  const drop = async (reason: Dropped) => {
    logger.info('Sign-up dropped', { reason, orgId, pageId: page.id });
    return success();
  };

  // 1. The honeypot and the token: bots are told nothing.
  if ((form[HONEYPOT_FIELD] ?? '') !== '') return drop('honeypot');
  const token = await readToken(deps, page, form[FORM_TOKEN_FIELD]);
  if (token === undefined) return drop('token');

  // 2. What a person can fix is said, on the form.
  const checked = checkFields(page, form);
  const custom = readCustomFields(await customInputs(deps, orgId, page), form);
  const mistaken =
    Object.keys(checked.errors).length > 0 ||
    Object.keys(custom.state.errors).length > 0;
  if (token === 'expired' && !mistaken) {
    checked.errors.email =
      'This form was open for more than a day: please send it again.';
  }
  if (token === 'expired' || mistaken || !checked.email) {
    // The form shown again keeps the time it was first shown (a person
    // fixing a typo quickly is not taken for a bot) and where from.
    const origin =
      token === 'expired'
        ? { shownAt: deps.clock.now().getTime(), view: deps.ids.id() }
        : token;
    return shown(
      await freshState(
        deps,
        page,
        origin,
        checked.values,
        checked.errors,
        custom.state,
      ),
      400,
    );
  }
  const email = checked.email;
  if (
    deps.clock.now().getTime() - token.shownAt <
    settings.minFillSeconds * 1000
  ) {
    return drop('too_fast');
  }

  // 3. The CAPTCHA, when the operator set one up.
  if (settings.captcha) {
    const answer =
      form[CAPTCHA_RESPONSE_FIELDS[settings.captcha.provider]] ?? '';
    if (!answer || !(await settings.captcha.verify(answer, visitor.ip))) {
      return drop('captcha');
    }
  }

  // 4. One sign-up per page view: a token replayed (by a script that
  // fetched the form once and waited once) is spent.
  if (
    !(await deps.signupLimits.take(
      `VIEW#${token.view}`,
      Math.floor(token.shownAt / 1000),
      FORM_TOKEN_TTL_SECONDS,
      1,
    ))
  ) {
    return drop('token_used');
  }

  // 5. Limits per source (an address, or an IPv6 /64; all pages) and per
  // email address.
  const window = hourOf(deps.clock.now());
  if (
    !(await deps.signupLimits.take(
      `IP#${sourceOf(visitor.ip)}`,
      window,
      HOUR,
      settings.maxPerIpPerHour,
    ))
  ) {
    return drop('ip_limit');
  }
  if (
    !(await deps.signupLimits.take(
      addressCounter(orgId, email),
      window,
      HOUR,
      settings.maxPerEmailPerHour,
    ))
  ) {
    return drop('email_limit');
  }

  // 6. The sign-up itself; its outcome is not told.
  await signUp(deps, orgId, page, {
    email,
    ...(checked.firstName ? { firstName: checked.firstName } : {}),
    ...(checked.lastName ? { lastName: checked.lastName } : {}),
    fields: custom.values,
    asked: askedRecordsOf(custom.state.inputs),
    visitor: {
      ...visitor,
      ...(token.referrer ? { referrer: token.referrer } : {}),
    },
  });
  return success();
};

/** Statuses a sign-up may (re)start a confirmation for. */
const signsUp = (contact: Contact | undefined) =>
  !contact || contact.status === 'pending' || contact.status === 'unsubscribed';

/**
 * Records a sign-up in the page's list and sends its confirmation:
 * - a new address joins as pending, with its names;
 * - a pending one gets a fresh link (the older one is superseded);
 * - an unsubscribed one stays unsubscribed until it follows its link;
 * - a subscribed, bounced or complained one, or a suppressed address, is
 *   left as it is, and nothing is sent.
 * At most one confirmation email per address per page in 24 hours: a
 * sign-up within that time changes nothing. Names and custom field values
 * are taken from the form for a new contact only (an unconfirmed form
 * never overwrites a contact); the consent record keeps what was asked;
 * a pending or unsubscribed one takes the new sign-up's `optinAt` and
 * `optinIp`, since its new link confirms this opt-in.
 */
const signUp = async (
  deps: SubmissionDeps,
  orgId: string,
  page: SignupPage,
  input: {
    email: string;
    firstName?: string;
    lastName?: string;
    /** The custom field values given, by key (checked). */
    fields: Record<string, FieldValue>;
    /** The custom fields the form asked. */
    asked: AskedRecord[];
    visitor: Visitor;
  },
): Promise<void> => {
  const { email, visitor } = input;
  const existing = await deps.contacts.get(orgId, page.listId, email);
  if (!signsUp(existing)) return;
  if ((await suppressedStatuses(deps, orgId, [email])).size > 0) return;
  const now = deps.clock.now();
  if (
    !(await deps.signupLimits.claimConfirmation(
      orgId,
      page.id,
      email,
      now,
      CONFIRMATION_SPACING_SECONDS,
    ))
  ) {
    return;
  }
  const at = now.toISOString();
  const consent: ConsentRecord = {
    pageId: page.id,
    pageVersion: page.version,
    consentText: page.content.consentText,
    ...(visitor.ip ? { ip: visitor.ip } : {}),
    ...(visitor.userAgent
      ? { userAgent: visitor.userAgent.slice(0, 512) }
      : {}),
    ...(visitor.referrer ? { referrer: visitor.referrer } : {}),
    ...(input.asked.length ? { askedFields: input.asked } : {}),
    signedUpAt: at,
  };
  const after = await retryOnConflict(async (retryable) => {
    const before = await deps.contacts.get(orgId, page.listId, email);
    if (!signsUp(before)) return undefined;
    const next: Contact = before
      ? {
          ...before,
          // This sign-up is the opt-in its link confirms: when and where
          // from are its own (an address it does not have is none).
          optinAt: at,
          optinIp: visitor.ip,
          confirmationNonce: deps.ids.id(),
          consents: [...(before.consents ?? []), consent].slice(
            -MAX_CONSENT_RECORDS,
          ),
          updatedAt: at,
        }
      : {
          id: deps.ids.id(),
          listId: page.listId,
          email,
          ...(input.firstName ? { firstName: input.firstName } : {}),
          ...(input.lastName ? { lastName: input.lastName } : {}),
          ...signupNamesOf(input),
          ...(Object.keys(input.fields).length ? { fields: input.fields } : {}),
          status: 'pending',
          tagIds: [],
          optinAt: at,
          ...(visitor.ip ? { optinIp: visitor.ip } : {}),
          confirmationNonce: deps.ids.id(),
          consents: [consent],
          createdAt: at,
          updatedAt: at,
          version: 0,
        };
    await deps.contacts
      .save(orgId, [
        { ...(before ? { before } : {}), after: next, origin: 'form' },
      ])
      .catch(retryable);
    return next;
  });
  if (!after) {
    await deps.signupLimits.releaseConfirmation(orgId, page.id, email);
    return;
  }
  const outcome = await sendConfirmation(deps, orgId, after);
  if (outcome.status !== 'sent') {
    // Nothing went out (the organization cannot send now, the provider
    // refused): the next sign-up may try again at once.
    await deps.signupLimits.releaseConfirmation(orgId, page.id, email);
    logger.warn('Sign-up confirmation not sent', {
      orgId,
      pageId: page.id,
      outcome,
    });
  }
};
