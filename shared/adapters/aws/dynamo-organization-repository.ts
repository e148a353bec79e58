/**
 * Driven adapter: organizations in the single DynamoDB table.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type {
  IsolationState,
  Organization,
} from '../../organizations/model.ts';
import type { OrganizationRepository } from '../../organizations/ports.ts';
import { putWithReservation } from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import { type DynamoTable, isConditionFailure } from './dynamo-table.ts';

/** The reservation of an organization's slug. */
const OrganizationSlugItem = itemSchema('OrganizationSlug', {
  orgId: v.string(),
});

const toItem = (org: Organization) => ({
  ...keys.organization(org.id),
  ...entityType('Organization'),
  id: org.id,
  name: org.name,
  slug: org.slug,
  sendingAllowed: org.sendingAllowed,
  createdAt: org.createdAt,
  ...(org.sendQuota24h !== undefined ? { sendQuota24h: org.sendQuota24h } : {}),
});

const IsolationItem = v.object({
  provisioning: v.picklist(['none', 'provisioned', 'incomplete']),
  sendingStatus: v.picklist(['ENABLED', 'DISABLED']),
  checkedAt: v.string(),
}) satisfies v.GenericSchema<unknown, IsolationState>;

const OrganizationItem = itemSchema('Organization', {
  id: v.string(),
  name: v.string(),
  slug: v.string(),
  sendingAllowed: v.boolean(),
  createdAt: v.string(),
  postalAddress: v.optional(v.string()),
  isolation: v.optional(IsolationItem),
  sendQuota24h: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  timezone: v.optional(v.string()),
  sequenceCap: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});

/** The organization's domain-verification token, written once. */
const ChallengeTokenItem = itemSchema('Organization', {
  challengeToken: v.string(),
});

/** An organization item's organization (also read beside its settings). */
export const organizationFromItem = (
  item: Record<string, unknown>,
): Organization => parseItem(OrganizationItem, item);

/** How many organizations' challenge tokens a container keeps in memory. */
const MEMORIZED_TOKENS = 10_000;

/** Organizations, with their slugs reserved application-wide. */
export class DynamoOrganizationRepository implements OrganizationRepository {
  /** Challenge tokens already read, by organization (they never change). */
  private readonly challengeTokens = new Map<string, string>();

  constructor(private readonly table: DynamoTable) {}

  async create(org: Organization): Promise<void> {
    await putWithReservation(this.table, {
      reservation: entity(this.table, OrganizationSlugItem).putTx(
        keys.organizationSlug(org.slug),
        { orgId: org.id },
        {
          if: (w) => w.missing(),
          otherwise: (cause) =>
            new ConflictError(
              'organization.slugTaken',
              `The slug ${org.slug} is taken`,
              { cause },
            ),
        },
      ),
      item: {
        Put: {
          TableName: this.table.tableName,
          Item: toItem(org),
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
    });
  }

  async get(orgId: string): Promise<Organization | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.organization(orgId),
      }),
    );
    return Item ? organizationFromItem(Item) : undefined;
  }

  async setSendingAllowed(orgId: string, allowed: boolean): Promise<void> {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.organization(orgId),
          UpdateExpression: 'SET sendingAllowed = :allowed',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':allowed': allowed },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new NotFoundError(
          'organization.notFound',
          `No organization ${orgId}`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  async setPostalAddress(
    orgId: string,
    postalAddress: string | null,
  ): Promise<void> {
    await this.update(
      orgId,
      postalAddress === null
        ? { expression: 'REMOVE postalAddress', values: {} }
        : {
            expression: 'SET postalAddress = :value',
            values: { ':value': postalAddress },
          },
    );
  }

  async setTimezone(orgId: string, timezone: string | null): Promise<void> {
    await this.update(
      orgId,
      // `timezone` is one of DynamoDB's reserved words.
      timezone === null
        ? { expression: 'REMOVE #tz', values: {}, names: { '#tz': 'timezone' } }
        : {
            expression: 'SET #tz = :value',
            values: { ':value': timezone },
            names: { '#tz': 'timezone' },
          },
    );
  }

  async challengeToken(orgId: string, candidate: string): Promise<string> {
    // Written once and never changed: a container reads it once.
    const known = this.challengeTokens.get(orgId);
    if (known !== undefined) return known;
    const token = await this.readOrCreateChallengeToken(orgId, candidate);
    if (this.challengeTokens.size >= MEMORIZED_TOKENS) {
      this.challengeTokens.clear();
    }
    this.challengeTokens.set(orgId, token);
    return token;
  }

  private async readOrCreateChallengeToken(
    orgId: string,
    candidate: string,
  ): Promise<string> {
    // A read first: the token is written once, and reads must not write.
    const key = keys.organization(orgId);
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: key,
        ProjectionExpression: 'challengeToken',
      }),
    );
    if (Item?.challengeToken !== undefined) {
      return parseItem(ChallengeTokenItem, Item, key).challengeToken;
    }
    const { Attributes } = await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: key,
        UpdateExpression:
          'SET challengeToken = if_not_exists(challengeToken, :candidate)',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':candidate': candidate },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return parseItem(ChallengeTokenItem, Attributes ?? {}, key).challengeToken;
  }

  async saveIsolation(orgId: string, isolation: IsolationState): Promise<void> {
    await this.update(orgId, {
      // "isolation" is a DynamoDB reserved word.
      expression: 'SET #isolation = :value',
      values: { ':value': isolation },
      names: { '#isolation': 'isolation' },
    });
  }

  async setSequenceCap(orgId: string, cap: number): Promise<void> {
    await this.update(orgId, {
      expression: 'SET sequenceCap = :value',
      values: { ':value': cap },
    });
  }

  async setSendQuota(orgId: string, max24h: number): Promise<void> {
    await this.update(orgId, {
      expression: 'SET sendQuota24h = :value',
      values: { ':value': max24h },
    });
  }

  private async update(
    orgId: string,
    change: {
      expression: string;
      values: Record<string, unknown>;
      names?: Record<string, string>;
    },
  ) {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.organization(orgId),
          UpdateExpression: change.expression,
          ConditionExpression: 'attribute_exists(PK)',
          ...(Object.keys(change.values).length
            ? { ExpressionAttributeValues: change.values }
            : {}),
          ...(change.names ? { ExpressionAttributeNames: change.names } : {}),
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new NotFoundError(
          'organization.notFound',
          `No organization ${orgId}`,
          {
            cause: error,
          },
        );
      }
      throw error;
    }
  }
}
