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
import {
  BatchGetCommand,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import type { ApiKeyRecord, Member, User } from '../../access/model.ts';
import { ROLES } from '../../access/model.ts';
import type { AccessRepository } from '../../access/ports.ts';
import {
  ENTITY_TYPE,
  entityType,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import { retryOnConflict } from '../../retry.ts';
import { appSettingsOf, rememberAppSettings } from './app-settings-memo.ts';
import {
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  type TransactItem,
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
});

interface MemberRecord extends Member {
  rev: number;
  keyIds: string[];
}

const memberFromItem = (item: Record<string, unknown>): MemberRecord => {
  const { keyIds, ...member } = parseItem(MemberItem, item);
  return { ...member, keyIds: [...keyIds] };
};

const keyFromItem = (item: Record<string, unknown>): ApiKeyRecord =>
  parseItem(ApiKeyItem, item);

/** Who may call the API: users, members, API keys. */
export class DynamoAccessRepository implements AccessRepository {
  constructor(private readonly table: DynamoTable) {}

  async getOrCreateUser(email: string, newId: string): Promise<User> {
    const { Attributes } = await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.userByEmail(email),
        UpdateExpression:
          'SET userId = if_not_exists(userId, :id), email = :email, #type = :type',
        ExpressionAttributeNames: { '#type': ENTITY_TYPE },
        ExpressionAttributeValues: {
          ':id': newId,
          ':email': email,
          ':type': UserItem.type,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const user = parseItem(UserItem, Attributes ?? {}, keys.userByEmail(email));
    return { id: user.userId, email };
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.userByEmail(email),
        ConsistentRead: true,
      }),
    );
    if (!Item) return undefined;
    const user = parseItem(UserItem, Item);
    return { id: user.userId, email: user.email };
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
        await this.table.client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.table.tableName,
                  Item: {
                    ...keys.member(member.orgId, member.userId),
                    ...entityType('Member'),
                    ...member,
                    rev: 1,
                  },
                  ConditionExpression: 'attribute_not_exists(PK)',
                },
              },
            ],
          }),
        );
        return;
      }
      await this.transact([
        this.bumpMember(
          current,
          'SET #role = :role',
          { ':role': member.role },
          { '#role': 'role' },
        ),
        ...current.keyIds.map((keyId) =>
          this.updateKey(
            keyId,
            'SET #role = :role',
            { ':role': member.role },
            { '#role': 'role' },
          ),
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
        {
          Delete: {
            TableName: this.table.tableName,
            Key: keys.member(orgId, userId),
            ConditionExpression: 'rev = :rev',
            ExpressionAttributeValues: { ':rev': current.rev },
          },
        },
        ...current.keyIds.map((keyId) =>
          this.updateKey(
            keyId,
            'SET revokedAt = :at, revokedReason = :reason',
            {
              ':at': at.toISOString(),
              ':reason': 'member_removed',
            },
          ),
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
        {
          Put: {
            TableName: this.table.tableName,
            Item: {
              ...keys.apiKey(key.keyId),
              ...entityType('ApiKey'),
              ...key,
              role: current.role,
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        this.bumpMember(current, 'ADD keyIds :key', {
          ':key': new Set([key.keyId]),
        }),
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
    const { Responses, UnprocessedKeys } = await this.table.client.send(
      new BatchGetCommand({
        RequestItems: {
          [this.table.tableName]: {
            Keys: [keyOfKey, keys.appSettings()],
            ConsistentRead: true,
          },
        },
      }),
    );
    const items = Responses?.[this.table.tableName] ?? [];
    const unprocessed = UnprocessedKeys?.[this.table.tableName]?.Keys ?? [];
    const isKey = (item: Record<string, unknown>) =>
      item.PK === keyOfKey.PK && item.SK === keyOfKey.SK;
    if (!unprocessed.some((key) => key.PK === keys.appSettings().PK)) {
      const app = items.find((item) => item.PK === keys.appSettings().PK);
      rememberAppSettings(this.table, appSettingsOf(app), readAt);
    }
    // A key left unprocessed (throttling) is read on its own.
    if (unprocessed.some(isKey)) return this.readKey(keyId);
    const item = items.find(isKey);
    return item ? keyFromItem(item) : undefined;
  }

  private async readKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.apiKey(keyId),
        ConsistentRead: true,
      }),
    );
    return Item ? keyFromItem(Item) : undefined;
  }

  async revokeKey(keyId: string, at: Date): Promise<boolean> {
    return this.withRetries(async () => {
      const key = await this.readKey(keyId);
      if (!key) return false;
      if (key.revokedAt) return true;
      const revoke = this.updateKey(
        keyId,
        'SET revokedAt = :at, revokedReason = :reason',
        {
          ':at': at.toISOString(),
          ':reason': 'revoked',
        },
      );
      const member = await this.readMember(key.orgId, key.userId);
      await this.transact(
        member?.keyIds.includes(keyId)
          ? [
              revoke,
              this.bumpMember(member, 'DELETE keyIds :key', {
                ':key': new Set([keyId]),
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
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.member(orgId, userId),
        ConsistentRead: true,
      }),
    );
    return Item ? memberFromItem(Item) : undefined;
  }

  /** An update of the membership, conditional on the revision read. */
  private bumpMember(
    member: MemberRecord,
    update: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ): TransactItem {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.member(member.orgId, member.userId),
        // A clause keyword may appear once: extend a SET, or add one.
        UpdateExpression: update.startsWith('SET ')
          ? `${update}, rev = :next`
          : `${update} SET rev = :next`,
        ConditionExpression: 'rev = :rev',
        ExpressionAttributeValues: {
          ...values,
          ':rev': member.rev,
          ':next': member.rev + 1,
        },
        ...(names ? { ExpressionAttributeNames: names } : {}),
      },
    };
  }

  /** An update of a live key (never resurrects a revoked one). */
  private updateKey(
    keyId: string,
    update: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ): TransactItem {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.apiKey(keyId),
        UpdateExpression: update,
        ConditionExpression:
          'attribute_exists(PK) AND attribute_not_exists(revokedAt)',
        ExpressionAttributeValues: values,
        ...(names ? { ExpressionAttributeNames: names } : {}),
      },
    };
  }

  private async transact(items: TransactItem[]): Promise<void> {
    await this.table.client.send(
      new TransactWriteCommand({ TransactItems: items }),
    );
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
