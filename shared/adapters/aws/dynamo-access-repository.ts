/**
 * Driven adapter: users, memberships and API keys in the single table.
 *
 * A membership item holds the set of its live key ids (`keyIds`) and a
 * revision number (`rev`). Every change of the membership (role, removal,
 * a key added or revoked) bumps `rev` under a condition on the revision it
 * read, inside one transaction with the key items it touches, so a key's
 * copied role can never drift from its creator's role.
 *
 * A key is also entered in its organization's collection of keys
 * (`ORG#<orgId>` / `APIKEY#<keyId>`, a pointer, counted by `APIKEY$count`)
 * in the transaction that creates it, for the listing. The pointer never
 * changes: what a listing shows (role, revocation) is read from the key
 * itself, so a membership change still touches one item per key. The last
 * use of a key is a mark of its own beside its request log, written at
 * most once an hour by the request path (`markUsed`).
 */
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import type {
  ApiKeyRecord,
  ListedApiKey,
  Member,
  User,
} from '../../access/model.ts';
import { MAX_KEYS_PER_MEMBER, ROLES } from '../../access/model.ts';
import type { AccessRepository } from '../../access/ports.ts';
import { orderedScopes, SCOPES } from '../../access/scopes.ts';
import { ifMissing, type Update } from '../../db/expressions.ts';
import { type ItemOf, itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import { retryOnConflict } from '../../retry.ts';
import { appSettingsOf, rememberAppSettings } from './app-settings-memo.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGet,
  batchGetOnce,
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

const UserItem = itemSchema('User', {
  userId: v.string(),
  email: v.string(),
});

const MemberItem = itemSchema('Member', {
  orgId: v.string(),
  userId: v.string(),
  email: v.string(),
  role: v.picklist(ROLES),
  rev: v.optional(v.number(), 0),
  // DynamoDB stores no empty set: no attribute means no live key.
  keyIds: v.optional(v.set(v.string()), () => new Set<string>()),
});

const ApiKeyItem = itemSchema('ApiKey', {
  keyId: v.string(),
  orgId: v.string(),
  userId: v.string(),
  role: v.picklist(ROLES),
  secretHash: v.string(),
  createdAt: v.string(),
  revokedAt: v.optional(v.string()),
  // Why the key was revoked, for the operator: the domain's record leaves it out.
  revokedReason: v.optional(v.picklist(['revoked', 'member_removed'])),
  name: v.optional(v.string()),
  email: v.optional(v.string()),
  // A set: DynamoDB stores none empty, and absent means full access.
  scopes: v.optional(v.set(v.picklist(SCOPES))),
});

/** A key's entry in its organization's collection: the key's id. */
const ApiKeyEntryItem = itemSchema('ApiKeyEntry', {
  keyId: v.string(),
});

/** When a key was last used, to the hour (`markUsed`). */
const ApiKeyLastUseItem = itemSchema('ApiKeyLastUse', {
  lastUsedAt: v.string(),
});

interface MemberRecord extends Member {
  rev: number;
  keyIds: string[];
}

const memberRecord = ({
  keyIds,
  ...member
}: ItemOf<typeof MemberItem>): MemberRecord => ({
  ...member,
  keyIds: [...keyIds],
});

const keyRecord = ({
  revokedReason: _reason,
  scopes,
  ...key
}: ItemOf<typeof ApiKeyItem>): ApiKeyRecord => ({
  ...key,
  ...(scopes ? { scopes: orderedScopes(scopes) } : {}),
});

type MemberUpdate = Update<v.InferInput<typeof MemberItem.schema>>;
type KeyUpdate = Update<v.InferInput<typeof ApiKeyItem.schema>>;

/** Who may call the API: users, members, API keys. */
export class DynamoAccessRepository implements AccessRepository {
  private readonly users;
  private readonly members;
  private readonly apiKeys;
  private readonly entries;
  private readonly lastUses;

  constructor(private readonly table: DynamoTable) {
    this.users = entity(table, UserItem);
    this.members = entity(table, MemberItem);
    this.apiKeys = entity(table, ApiKeyItem);
    this.entries = entity(table, ApiKeyEntryItem);
    this.lastUses = entity(table, ApiKeyLastUseItem);
  }

  async getOrCreateUser(email: string, newId: string): Promise<User> {
    const user = await this.users.update(
      keys.userByEmail(email),
      { set: { userId: ifMissing(newId), email } },
      { returning: 'new' },
    );
    return { id: user.userId, email };
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    const user = await this.users.get(keys.userByEmail(email), {
      consistent: true,
    });
    return user && { id: user.userId, email: user.email };
  }

  async getMember(orgId: string, userId: string): Promise<Member | undefined> {
    const item = await this.readMember(orgId, userId);
    if (!item) return undefined;
    const { rev: _rev, keyIds: _keyIds, ...member } = item;
    return member;
  }

  async putMember(member: Member): Promise<void> {
    await this.withRetries(async () => {
      const current = await this.readMember(member.orgId, member.userId);
      if (!current) {
        await this.transact([
          this.members.putTx(
            keys.member(member.orgId, member.userId),
            { ...member, rev: 1 },
            { if: (w) => w.missing() },
          ),
        ]);
        return;
      }
      await this.transact([
        this.bumpMember(current, { set: { role: member.role } }),
        ...current.keyIds.map((keyId) =>
          this.updateKey(keyId, { set: { role: member.role } }),
        ),
      ]);
    });
  }

  async removeMember(
    orgId: string,
    userId: string,
    at: Date,
  ): Promise<string[] | undefined> {
    return this.withRetries(async () => {
      const current = await this.readMember(orgId, userId);
      if (!current) return undefined;
      await this.transact([
        this.members.deleteTx(keys.member(orgId, userId), {
          if: (w) => w.eq('rev', current.rev),
        }),
        ...current.keyIds.map((keyId) =>
          this.updateKey(keyId, {
            set: {
              revokedAt: at.toISOString(),
              revokedReason: 'member_removed',
            },
          }),
        ),
      ]);
      return current.keyIds;
    });
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    await this.withRetries(async () => {
      const current = await this.readMember(key.orgId, key.userId);
      if (!current) {
        throw new NotFoundError(
          'member.notFound',
          `User ${key.userId} is not a member of organization ${key.orgId}`,
        );
      }
      if (current.keyIds.length >= MAX_KEYS_PER_MEMBER) {
        throw new ConflictError(
          'apiKey.limit',
          `A member holds at most ${MAX_KEYS_PER_MEMBER} live API keys; revoke one first`,
        );
      }
      const { scopes, ...rest } = key;
      await this.transact([
        this.apiKeys.putTx(
          keys.apiKey(key.keyId),
          {
            ...rest,
            role: current.role,
            ...(scopes ? { scopes: new Set(scopes) } : {}),
          },
          { if: (w) => w.missing() },
        ),
        this.bumpMember(current, { add: { keyIds: new Set([key.keyId]) } }),
        ...this.enter(key.orgId, key.keyId),
      ]);
    });
  }

  /** The key's entry in its organization's collection, and its count. */
  private enter(orgId: string, keyId: string): TransactItem[] {
    return [
      this.entries.putTx(
        keys.apiKeyOfOrganization(orgId, keyId),
        { keyId },
        { if: (w) => w.missing() },
      ),
      moveCollectionCounter(this.table, keys.apiKeysOfOrganization(orgId), 1),
    ];
  }

  async pageKeys(
    orgId: string,
    request: PageRequest,
  ): Promise<Page<ListedApiKey>> {
    const page = await pageOfCollection(
      this.table,
      keys.apiKeysOfOrganization(orgId),
      request,
    );
    const keyIds = page.items.map((item) => this.entries.parse(item).keyId);
    const listed = await this.withLastUse(keyIds);
    return {
      items: keyIds.map((keyId) => {
        const key = listed.get(keyId);
        // Entered in the transaction that stores it, and never deleted.
        if (!key) throw new Error(`API key ${keyId} is entered but missing`);
        return key;
      }),
      total: page.total,
    };
  }

  async getKey(keyId: string): Promise<ListedApiKey | undefined> {
    return (await this.withLastUse([keyId])).get(keyId);
  }

  /** The keys and their last-use marks, in one BatchGetItem per 50 keys. */
  private async withLastUse(
    keyIds: readonly string[],
  ): Promise<Map<string, ListedApiKey>> {
    const items = await batchGet(
      this.table,
      keyIds.flatMap((keyId) => [
        keys.apiKey(keyId),
        keys.apiKeyLastUse(keyId),
      ]),
    );
    const lastUse = new Map<string, string>();
    const found = new Map<string, ApiKeyRecord>();
    for (const item of items) {
      const pk = String(item.PK);
      if (pk.startsWith('RATE#')) {
        lastUse.set(
          pk.slice('RATE#'.length),
          this.lastUses.parse(item).lastUsedAt,
        );
      } else {
        const key = keyRecord(this.apiKeys.parse(item));
        found.set(key.keyId, key);
      }
    }
    return new Map(
      [...found].map(([keyId, key]) => {
        const lastUsedAt = lastUse.get(keyId);
        return [keyId, { ...key, ...(lastUsedAt ? { lastUsedAt } : {}) }];
      }),
    );
  }

  async markUsed(keyId: string, at: Date, since: Date): Promise<Date> {
    try {
      await this.lastUses.update(
        keys.apiKeyLastUse(keyId),
        { set: { lastUsedAt: at.toISOString() } },
        {
          if: (w) =>
            w.or(
              w.missing('lastUsedAt'),
              w.lt('lastUsedAt', since.toISOString()),
            ),
          returningOnFailure: 'old',
        },
      );
      return at;
    } catch (error) {
      // A mark at or after `since` is there already: the one to remember.
      const stored = this.lastUses.failedItem(error);
      if (stored) return new Date(stored.lastUsedAt);
      throw error;
    }
  }

  async indexKeys(orgId: string): Promise<string[]> {
    const members = await this.members.all(keys.membersOfOrganization(orgId), {
      consistent: true,
    });
    const entered: string[] = [];
    for (const member of members.map(memberRecord)) {
      for (const keyId of member.keyIds) {
        try {
          await this.transact([
            ...this.enter(orgId, keyId),
            // Older keys carry no creator's email: the membership has it.
            this.apiKeys.updateTx(
              keys.apiKey(keyId),
              { set: { email: ifMissing(member.email) } },
              { if: (w) => w.exists() },
            ),
          ]);
          entered.push(keyId);
        } catch (error) {
          // Entered already (by its creation, or an earlier run).
          if ((failedConditions(error) ?? []).includes(0)) continue;
          throw error;
        }
      }
    }
    return entered;
  }

  /**
   * The key, read with the application settings item in one request: the
   * settings are remembered for this container's shown reads (see
   * `app-settings-memo.ts`), so a cold container answers a GET that shows
   * the application switch without a request of its own for it.
   */
  async findKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const readAt = performance.now();
    const keyOfKey = keys.apiKey(keyId);
    const { items, unprocessed } = await batchGetOnce(this.table, [
      keyOfKey,
      keys.appSettings(),
    ]);
    const isKey = (item: { PK?: unknown; SK?: unknown }) =>
      item.PK === keyOfKey.PK && item.SK === keyOfKey.SK;
    if (!unprocessed.some((key) => key.PK === keys.appSettings().PK)) {
      const app = items.find((item) => item.PK === keys.appSettings().PK);
      rememberAppSettings(this.table, appSettingsOf(app), readAt);
    }
    // A key left unprocessed (throttling) is read on its own.
    if (unprocessed.some(isKey)) return this.readKey(keyId);
    const item = items.find(isKey);
    return item ? keyRecord(this.apiKeys.parse(item)) : undefined;
  }

  private async readKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const key = await this.apiKeys.get(keys.apiKey(keyId), {
      consistent: true,
    });
    return key && keyRecord(key);
  }

  async revokeKey(keyId: string, at: Date): Promise<boolean> {
    return this.withRetries(async () => {
      const key = await this.readKey(keyId);
      if (!key) return false;
      if (key.revokedAt) return true;
      const revoke = this.updateKey(keyId, {
        set: { revokedAt: at.toISOString(), revokedReason: 'revoked' },
      });
      const member = await this.readMember(key.orgId, key.userId);
      await this.transact(
        member?.keyIds.includes(keyId)
          ? [
              revoke,
              this.bumpMember(member, {
                delete: { keyIds: new Set([keyId]) },
              }),
            ]
          : [revoke],
      );
      return true;
    });
  }

  private async readMember(
    orgId: string,
    userId: string,
  ): Promise<MemberRecord | undefined> {
    const member = await this.members.get(keys.member(orgId, userId), {
      consistent: true,
    });
    return member && memberRecord(member);
  }

  /** An update of the membership, conditional on the revision read. */
  private bumpMember(member: MemberRecord, update: MemberUpdate): TransactItem {
    return this.members.updateTx(
      keys.member(member.orgId, member.userId),
      { ...update, set: { ...update.set, rev: member.rev + 1 } },
      { if: (w) => w.eq('rev', member.rev) },
    );
  }

  /** An update of a live key (never resurrects a revoked one). */
  private updateKey(keyId: string, update: KeyUpdate): TransactItem {
    return this.apiKeys.updateTx(keys.apiKey(keyId), update, {
      if: (w) => w.and(w.exists(), w.missing('revokedAt')),
    });
  }

  private transact(items: TransactItem[]): Promise<void> {
    return transactWrite(this.table, items);
  }

  /** Re-runs a read-then-write step when a concurrent change beat it. */
  private withRetries<T>(step: () => Promise<T>): Promise<T> {
    return retryOnConflict((retryable) =>
      step().catch((error: unknown) => {
        const raced =
          isConditionFailure(error) ||
          (failedConditions(error)?.length ?? 0) > 0;
        if (!raced) throw error;
        return retryable(
          new ConflictError(
            'member.changed',
            'The membership changed concurrently; retry',
            { cause: error },
          ),
        );
      }),
    );
  }
}
