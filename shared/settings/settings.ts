/**
 * Application logic of GET /settings and PATCH /settings/sending.
 */
import * as v from 'valibot';
import { RuleViolationError } from '../errors.ts';
import { type Organization, timeZoneOf } from '../organizations/model.ts';
import {
  existingOrganization,
  requireOrganization,
} from '../organizations/organizations.ts';
import { hasSomeField, inJsonSchema } from '../schema-notes.ts';
import {
  changeBook,
  IdentityView,
  refuseIfCampaignsUse,
} from '../sending/identities.ts';
import type { Identity } from '../sending/model.ts';
import {
  Readiness,
  type ReadinessDeps,
  sendingStateOf,
} from '../sending/readiness.ts';
import { checkSenderAddress, defaultIdentityOf } from '../sending/sender.ts';
import {
  EmailAddress,
  lineText,
  multilineText,
  TimeZone,
} from '../validation.ts';
import { OptinSettings } from './optin.ts';
import type { SettingsDeps as Deps } from './ports.ts';

/**
 * A sender's display name: one line of text (no control character, tab or
 * line break of any kind: it reaches the From header), at most 200 bytes
 * of UTF-8, no angle brackets.
 */
export const SenderName = v.pipe(
  lineText(200),
  v.trim(),
  v.check((name) => !/[<>]/.test(name), 'must not contain angle brackets'),
  inJsonSchema({ not: { pattern: '[<>]' } }),
);

/** Body of PATCH /settings/sending: left out = unchanged, null = cleared. */
export const UpdateSendingBody = v.pipe(
  v.object({
    senderEmail: v.optional(v.nullable(EmailAddress)),
    senderName: v.optional(v.nullable(SenderName)),
    postalAddress: v.optional(
      v.nullable(
        // Multi-line (it is printed in mail footers), at most 2,000 bytes.
        v.pipe(
          multilineText(2_000),
          v.trim(),
          v.maxLength(500, 'must be at most 500 characters'),
        ),
      ),
    ),
    // null: back to UTC.
    timezone: v.optional(v.nullable(TimeZone)),
  }),
  v.check(
    hasSomeField,
    'must change at least one of senderEmail, senderName, postalAddress, timezone',
  ),
);
export type UpdateSendingInput = v.InferOutput<typeof UpdateSendingBody>;

/** The sending part of the settings object. */
export const SendingSettings = v.pipe(
  v.object({
    senderEmail: v.pipe(
      v.nullable(IdentityView.entries.senderEmail),
      v.description('Address of the default identity; null without one'),
    ),
    senderName: v.pipe(
      v.nullable(v.string()),
      v.description(
        'Display name of the default identity; null without one or when it has none',
      ),
    ),
    postalAddress: v.pipe(
      v.nullable(v.string()),
      v.description(
        'Legal mention printed in mail footers (`{{postalAddress}}`), kept on the organization; may contain newlines',
      ),
    ),
    effectiveSender: v.pipe(
      v.string(),
      v.description(
        "The From header that really goes out: the default identity once its address is on a verified domain of the organization (and the provider does not pause it); otherwise the application's own address, with the default's name as display name",
      ),
    ),
    effectiveReplyTo: v.pipe(
      v.nullable(IdentityView.entries.senderEmail),
      v.description(
        "The Reply-To that goes with it: the default address while mail goes out From the application's address; otherwise null",
      ),
    ),
    timezone: v.pipe(
      v.string(),
      v.description(
        'The IANA time zone sending times are read in (a sequence step’s `sendTimeMinutes`, a series’ days); `UTC` until set',
      ),
    ),
  }),
  v.title('SendingSettings'),
);
export type SendingSettings = v.InferOutput<typeof SendingSettings>;

/** The settings object of the spec (GET /settings, PATCH /settings/sending). */
export const SettingsView = v.pipe(
  v.object({
    sending: SendingSettings,
    optin: OptinSettings,
    readiness: Readiness,
  }),
  v.title('Settings'),
);
export type SettingsView = v.InferOutput<typeof SettingsView>;

type SettingsDeps = ReadinessDeps &
  Pick<Deps, 'optinSettings' | 'endpoints' | 'campaignReferences' | 'ids'>;

/** GET /settings: sending, opt-in and readiness. */
export const getSettings = async (
  deps: SettingsDeps,
  orgId: string,
): Promise<SettingsView> => {
  // The organization and its opt-in settings come in one request.
  const { organization, optin } =
    await deps.optinSettings.getWithOrganization(orgId);
  return settingsOf(deps, existingOrganization(orgId, organization), optin);
};

const settingsOf = async (
  deps: SettingsDeps,
  org: Organization,
  knownOptin?: OptinSettings,
): Promise<SettingsView> => {
  const [{ book, readiness, sender }, optin] = await Promise.all([
    sendingStateOf(deps, org, undefined, { shown: true }),
    knownOptin ?? deps.optinSettings.get(org.id),
  ]);

  const identity = defaultIdentityOf(book);
  return {
    sending: {
      senderEmail: identity?.senderEmail ?? null,
      senderName: identity ? identity.senderName || null : null,
      postalAddress: org.postalAddress ?? null,
      effectiveSender: sender.from,
      effectiveReplyTo: sender.replyTo ?? null,
      timezone: timeZoneOf(org),
    },
    optin,
    readiness,
  };
};

/**
 * PATCH /settings/sending, per the spec's table: senderEmail sets the
 * default address (creating the identity when the book is empty, promoting
 * an identity of that address, or changing the default's address); null
 * removes the default (400 with more than one address); senderName alone
 * renames the default (400 without one); postalAddress stays on the
 * organization.
 */
export const updateSendingSettings = async (
  deps: SettingsDeps,
  orgId: string,
  input: UpdateSendingInput,
): Promise<SettingsView> => {
  const org = await requireOrganization(deps, orgId);
  if (input.senderEmail) {
    await checkSenderAddress(deps, orgId, input.senderEmail);
  }
  if (input.senderEmail !== undefined || input.senderName !== undefined) {
    await changeBook(deps, orgId, async (before) => {
      const current = defaultIdentityOf(before);
      const name =
        input.senderName === undefined ? undefined : (input.senderName ?? '');
      if (input.senderEmail === null) {
        if (before.identities.length > 1) {
          throw new RuleViolationError(
            'sending.severalAddresses',
            `The address book holds ${before.identities.length} addresses: delete the others, or make one the default, instead of clearing senderEmail`,
          );
        }
        if (!current) return before;
        await refuseIfCampaignsUse(deps, orgId, current);
        return { identities: [], version: before.version };
      }
      if (input.senderEmail) {
        const email = input.senderEmail;
        const existing = before.identities.find((i) => i.senderEmail === email);
        const target: Identity = existing
          ? { ...existing, ...(name !== undefined ? { senderName: name } : {}) }
          : current
            ? {
                ...current,
                senderEmail: email,
                ...(name !== undefined ? { senderName: name } : {}),
              }
            : {
                id: deps.ids.id(),
                senderEmail: email,
                senderName: name ?? '',
                createdAt: deps.clock.now().toISOString(),
              };
        const others = before.identities.filter((i) => i.id !== target.id);
        return {
          ...before,
          identities: [...others, target],
          defaultId: target.id,
        };
      }
      if (!current) {
        throw new RuleViolationError(
          'sending.noDefault',
          'There is no default address to rename: set senderEmail first',
        );
      }
      return {
        ...before,
        identities: before.identities.map((i) =>
          i.id === current.id ? { ...i, senderName: name ?? '' } : i,
        ),
      };
    });
  }
  if (input.postalAddress !== undefined) {
    await deps.organizations.setPostalAddress(
      orgId,
      input.postalAddress || null,
    );
  }
  if (input.timezone !== undefined) {
    await deps.organizations.setTimezone(orgId, input.timezone);
  }
  return settingsOf(deps, await requireOrganization(deps, org.id));
};
