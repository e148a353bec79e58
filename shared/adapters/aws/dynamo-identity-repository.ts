/**
 * Driven adapter: the address book. Identities are items of the
 * organization's partition; a head item holds the default and a version,
 * and every change of the book is one transaction conditional on that
 * version, so "exactly one default" holds whatever the interleaving.
 */
import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { keys } from '../../db/keys.ts';
import { ConflictError } from '../../errors.ts';
import type { Identity, IdentityBook } from '../../sending/model.ts';
import type { IdentityRepository } from '../../sending/ports.ts';
import {
  type DynamoTable,
  failedConditions,
  type TransactItem,
} from './dynamo-table.ts';

const fromItem = (item: Record<string, unknown>): Identity => ({
  id: String(item.id),
  senderEmail: String(item.senderEmail),
  senderName: String(item.senderName ?? ''),
  createdAt: String(item.createdAt),
});

/** The address book and its head item. */
export class DynamoIdentityRepository implements IdentityRepository {
  constructor(private readonly table: DynamoTable) {}

  async getBook(orgId: string): Promise<IdentityBook> {
    const query = keys.identitiesOfOrganization(orgId);
    const [head, list] = await Promise.all([
      this.table.client.send(
        new GetCommand({
          TableName: this.table.tableName,
          Key: keys.identityBook(orgId),
          ConsistentRead: true,
        }),
      ),
      this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          ExpressionAttributeValues: {
            ':pk': query.PK,
            ':prefix': query.skPrefix,
          },
          ConsistentRead: true,
        }),
      ),
    ]);
    const defaultId = head.Item?.defaultId;
    return {
      identities: (list.Items ?? []).map(fromItem),
      ...(typeof defaultId === 'string' ? { defaultId } : {}),
      version: Number(head.Item?.version ?? 0),
    };
  }

  async saveBook(
    orgId: string,
    before: IdentityBook,
    after: IdentityBook,
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    const previous = new Map(before.identities.map((i) => [i.id, i]));
    const items: TransactItem[] = [
      {
        Put: {
          TableName,
          Item: {
            ...keys.identityBook(orgId),
            _type: 'IdentityBook',
            version: before.version + 1,
            ...(after.defaultId ? { defaultId: after.defaultId } : {}),
          },
          ConditionExpression:
            before.version === 0
              ? 'attribute_not_exists(PK)'
              : 'version = :version',
          ...(before.version === 0
            ? {}
            : { ExpressionAttributeValues: { ':version': before.version } }),
        },
      },
      ...after.identities
        .filter(
          (identity) =>
            JSON.stringify(previous.get(identity.id)) !==
            JSON.stringify(identity),
        )
        .map(
          (identity): TransactItem => ({
            Put: {
              TableName,
              Item: {
                ...keys.identity(orgId, identity.id),
                _type: 'Identity',
                ...identity,
              },
            },
          }),
        ),
      ...before.identities
        .filter(
          (identity) => !after.identities.some((i) => i.id === identity.id),
        )
        .map(
          (identity): TransactItem => ({
            Delete: { TableName, Key: keys.identity(orgId, identity.id) },
          }),
        ),
    ];
    try {
      await this.table.client.send(
        new TransactWriteCommand({ TransactItems: items }),
      );
    } catch (error) {
      if (failedConditions(error)?.includes(0)) {
        throw new ConflictError(
          'identities.changed',
          'The address book changed meanwhile; read it again',
          { cause: error },
        );
      }
      throw error;
    }
  }
}
