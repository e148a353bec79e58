/**
 * Application logic of the address book (spec, "Settings and sender
 * identities", rules 1 to 5). Every change re-reads the book and writes it
 * back conditionally, so exactly one identity is the default whenever the
 * book is not empty.
 */

import * as v from 'valibot';
import { ConflictError, NotFoundError, RuleViolationError } from '../errors.ts';
import { retryOnConflict } from '../retry.ts';
import { normalizeEmail, Timestamp, ViewId } from '../validation.ts';
import type { Identity, IdentityBook } from './model.ts';
import type { SendingDeps as Deps } from './ports.ts';
import { checkSenderAddress } from './sender.ts';

/** An identity (an entry of the address book) as the API shows it. */
export const IdentityView = v.pipe(
  v.object({
    id: ViewId,
    senderEmail: v.pipe(v.string(), v.email()),
    senderName: v.pipe(
      v.string(),
      v.description('The display name; empty when none was given'),
    ),
    isDefault: v.pipe(
      v.boolean(),
      v.description(
        'Exactly one identity is the default whenever the book is not empty; it signs every send that names no identity',
      ),
    ),
    createdAt: Timestamp,
  }),
  v.title('SenderIdentity'),
);
export type IdentityView = v.InferOutput<typeof IdentityView>;

/** The answer of DELETE /settings/identities/{identityId}. */
export const DeletedIdentity = v.pipe(
  v.object({
    id: v.pipe(ViewId, v.description('The id of the identity removed')),
  }),
  v.title('DeletedIdentity'),
);
export type DeletedIdentity = v.InferOutput<typeof DeletedIdentity>;

type BookDeps = Pick<
  Deps,
  | 'identities'
  | 'domains'
  | 'campaignReferences'
  | 'ids'
  | 'clock'
  | 'endpoints'
>;

/** The whole book, default first, then by creation. */
export const viewsOf = (book: IdentityBook): IdentityView[] =>
  book.identities
    .map((identity) => ({
      ...identity,
      isDefault: identity.id === book.defaultId,
    }))
    .sort(
      (a, b) =>
        Number(b.isDefault) - Number(a.isDefault) ||
        a.createdAt.localeCompare(b.createdAt),
    );

const viewOf = (book: IdentityBook, id: string): IdentityView => {
  const view = viewsOf(book).find((identity) => identity.id === id);
  if (!view) throw new Error(`identity ${id} missing from its book`);
  return view;
};

/** Reads the book, applies a change, writes it back; retries on a race. */
export const changeBook = async (
  deps: Pick<Deps, 'identities'>,
  orgId: string,
  change: (book: IdentityBook) => IdentityBook | Promise<IdentityBook>,
): Promise<IdentityBook> =>
  retryOnConflict(async (retryable) => {
    const before = await deps.identities.getBook(orgId);
    const after = await change(before);
    if (after === before) return before;
    await deps.identities.saveBook(orgId, before, after).catch(retryable);
    return after;
  });

const find = (book: IdentityBook, id: string): Identity => {
  const identity = book.identities.find((i) => i.id === id);
  if (!identity)
    throw new NotFoundError('identity.notFound', `No identity ${id}`);
  return identity;
};

const refuseDuplicate = (
  book: IdentityBook,
  email: string,
  exceptId?: string,
) => {
  const wanted = normalizeEmail(email);
  if (
    book.identities.some(
      (i) => normalizeEmail(i.senderEmail) === wanted && i.id !== exceptId,
    )
  ) {
    throw new ConflictError(
      'identity.duplicate',
      `${email} is already in the address book`,
    );
  }
};

/** Rule 4: an address named by any campaign cannot be deleted. */
export const refuseIfCampaignsUse = async (
  deps: Pick<Deps, 'campaignReferences'>,
  orgId: string,
  identity: Identity,
) => {
  const campaigns = await deps.campaignReferences.usingIdentity(
    orgId,
    identity.id,
  );
  if (campaigns.length === 0) return;
  throw new RuleViolationError(
    'identity.usedByCampaigns',
    `${identity.senderEmail} signs these campaigns: ${campaigns
      .map((c) => `"${c.name}" (${c.id})`)
      .join(
        ', ',
      )}. Point them to another address, or to the default with sendingIdentityId null, then delete it.`,
  );
};

/** The whole book, default first. */
export const listIdentities = async (
  deps: Pick<Deps, 'identities'>,
  orgId: string,
): Promise<IdentityView[]> => viewsOf(await deps.identities.getBook(orgId));

/** Adds an address; the first one, or one with isDefault true, is the default. */
export const createIdentity = async (
  deps: BookDeps,
  orgId: string,
  input: { senderEmail: string; senderName?: string; isDefault?: boolean },
): Promise<IdentityView> => {
  const id = deps.ids.createdId();
  // An earlier run of this request (its Idempotency-Key) added it: that one.
  if (deps.ids.rerun) {
    const book = await deps.identities.getBook(orgId);
    if (book.identities.some((identity) => identity.id === id)) {
      return viewOf(book, id);
    }
  }
  await checkSenderAddress(deps, orgId, input.senderEmail);
  const identity: Identity = {
    id,
    senderEmail: normalizeEmail(input.senderEmail),
    senderName: input.senderName ?? '',
    createdAt: deps.clock.now().toISOString(),
  };
  const book = await changeBook(deps, orgId, (before) => {
    refuseDuplicate(before, identity.senderEmail);
    const makeDefault = input.isDefault === true || !before.defaultId;
    return {
      ...before,
      identities: [...before.identities, identity],
      ...(makeDefault ? { defaultId: identity.id } : {}),
    };
  });
  return viewOf(book, identity.id);
};

/**
 * Changes an address or a name, or promotes with isDefault true. isDefault
 * false is refused (rule 2): promote another address instead.
 */
export const updateIdentity = async (
  deps: BookDeps,
  orgId: string,
  identityId: string,
  input: {
    senderEmail?: string;
    senderName?: string | null;
    isDefault?: boolean;
  },
): Promise<IdentityView> => {
  if (input.senderEmail) {
    await checkSenderAddress(deps, orgId, input.senderEmail);
  }
  const book = await changeBook(deps, orgId, (before) => {
    const current = find(before, identityId);
    if (input.isDefault === false) {
      throw new RuleViolationError(
        'identity.cannotUnsetDefault',
        `${current.senderEmail}: isDefault false is refused; make another address the default instead`,
      );
    }
    if (input.senderEmail)
      refuseDuplicate(before, input.senderEmail, identityId);
    const updated: Identity = {
      ...current,
      ...(input.senderEmail
        ? { senderEmail: normalizeEmail(input.senderEmail) }
        : {}),
      ...(input.senderName !== undefined
        ? { senderName: input.senderName ?? '' }
        : {}),
    };
    return {
      ...before,
      identities: before.identities.map((i) =>
        i.id === identityId ? updated : i,
      ),
      ...(input.isDefault ? { defaultId: identityId } : {}),
    };
  });
  return viewOf(book, identityId);
};

/**
 * Removes an address. The default cannot go while others remain (rule 1);
 * an address named by a campaign cannot go (rule 4); the last one can, and
 * sending falls back to the application address (rule 3).
 */
export const deleteIdentity = async (
  deps: BookDeps,
  orgId: string,
  identityId: string,
): Promise<DeletedIdentity> => {
  await changeBook(deps, orgId, async (before) => {
    const identity = find(before, identityId);
    if (before.defaultId === identityId && before.identities.length > 1) {
      throw new RuleViolationError(
        'identity.defaultInUse',
        `${identity.senderEmail} is the default address and others remain: make another one the default first`,
      );
    }
    await refuseIfCampaignsUse(deps, orgId, identity);
    const { defaultId: _, ...rest } = before;
    const identities = before.identities.filter((i) => i.id !== identityId);
    return {
      ...rest,
      identities,
      ...(before.defaultId && before.defaultId !== identityId
        ? { defaultId: before.defaultId }
        : {}),
    };
  });
  return { id: identityId };
};
