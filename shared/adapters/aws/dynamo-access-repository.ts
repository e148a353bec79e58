/**
 * Driven adapter: users, memberships and API keys in the single table.
 *
 * A membership item holds the set of its live key ids (`keyIds`) and a
 * revision number (`rev`). Every change of the membership (role, removal,
 * a key added or revoked) bumps `rev` under a condition on the revision it
 * read, inside one transaction with the key items it touches, so a key's
 * copied role can never drift from its creator's role.
 */
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import type { ApiKeyRecord, Member, User } from '../../access/model.ts';
import { ROLES } from '../../access/model.ts';
import type { AccessRepository } from '../../access/ports.ts';
import { ifMissing, type Update } from '../../db/expressions.ts';
import { type ItemOf, itemSchema } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import { retryOnConflict } from '../../retry.ts';
import { appSettingsOf, rememberAppSettings } from './app-settings-memo.ts';
import { entity } from './dynamo-entity.ts';
import {
  batchGetOnce,
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  type TransactItem,
  transactWrite,
} from './dynamo-table.ts';

/** Live keys one member may hold: keeps every membership change in one transaction. */
export const MAX_KEYS_PER_MEMBER = 50;

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
  ...key
}: ItemOf<typeof ApiKeyItem>): ApiKeyRecord => key;

type MemberUpdate = Update<v.InferInput<typeof MemberItem.schema>>;
type KeyUpdate = Update<v.InferInput<typeof ApiKeyItem.schema>>;

/** Who may call the API: users, members, API keys. */
export class DynamoAccessRepository implements AccessRepository {
  private readonly users;
  private readonly members;
  private readonly apiKeys;

  constructor(private readonly table: DynamoTable) {
    this.users = entity(table, UserItem);
    this.members = entity(table, MemberItem);
    this.apiKeys = entity(table, ApiKeyItem);
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
      await this.transact([
        this.apiKeys.putTx(
          keys.apiKey(key.keyId),
          { ...key, role: current.role },
          { if: (w) => w.missing() },
        ),
        this.bumpMember(current, { add: { keyIds: new Set([key.keyId]) } }),
      ]);
    });
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
