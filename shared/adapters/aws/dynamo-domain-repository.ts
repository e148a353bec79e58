/**
 * Driven adapter: sending domains. Each organization's declaration is an
 * item of its partition (last known statuses, proof of ownership); one claim
 * item per domain name records which organizations declared it and which one
 * proved it. A proof that transfers the domain updates the new owner's
 * declaration, the claim and the previous owner's declaration together.
 */
import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import {
  ENTITY_TYPE,
  entityType,
  itemSchema,
  parseItem,
} from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import { retryOnConflict } from '../../retry.ts';
import type { SendingDomain } from '../../sending/model.ts';
import type { DomainRepository } from '../../sending/ports.ts';
import type { DkimStatus, MailFromStatus } from '../../sending/provider.ts';
import {
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  type TransactItem,
} from './dynamo-table.ts';

/** The DKIM and MAIL FROM statuses, as the provider reports them. */
const STATUSES = [
  'PENDING',
  'SUCCESS',
  'FAILED',
] as const satisfies readonly DkimStatus[] & readonly MailFromStatus[];

const DomainItem = itemSchema('Domain', {
  id: v.string(),
  domain: v.string(),
  createdAt: v.string(),
  dkimStatus: v.picklist(STATUSES),
  mailFromDomain: v.optional(v.nullable(v.string()), null),
  mailFromStatus: v.optional(v.nullable(v.picklist(STATUSES)), null),
  ownershipProved: v.optional(v.boolean(), false),
  declaredAfterAnother: v.optional(v.boolean(), false),
  lastCheckedAt: v.optional(v.nullable(v.string()), null),
});

/** Who declared a domain name, who proved it, whether its identity was found. */
const DomainClaimItem = itemSchema('DomainClaim', {
  // DynamoDB stores no empty set: no attribute means nobody declares it.
  declaredBy: v.optional(v.set(v.string()), () => new Set<string>()),
  ownerOrgId: v.optional(v.string()),
  ownerDomainId: v.optional(v.string()),
  identityFound: v.optional(v.boolean(), false),
});

/** A domain item's declaration (also read with the address book). */
export const domainFromItem = (item: Record<string, unknown>): SendingDomain =>
  parseItem(DomainItem, item);

const alreadyDeclared = (domain: SendingDomain, cause?: unknown) =>
  new ConflictError(
    'domain.alreadyDeclared',
    `${domain.domain} is already declared by this organization`,
    { cause },
  );

const gone = (domainId: string, cause?: unknown) =>
  new NotFoundError('domain.notFound', `No domain ${domainId}`, { cause });

/** Declarations, claims and proofs of sending domains. */
export class DynamoDomainRepository implements DomainRepository {
  constructor(private readonly table: DynamoTable) {}

  async list(orgId: string): Promise<SendingDomain[]> {
    const query = keys.domainsOfOrganization(orgId);
    const { Items = [] } = await this.table.client.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': query.PK,
          ':prefix': query.skPrefix,
        },
        ConsistentRead: true,
      }),
    );
    return Items.map(domainFromItem);
  }

  async get(
    orgId: string,
    domainId: string,
  ): Promise<SendingDomain | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.domain(orgId, domainId),
        ConsistentRead: true,
      }),
    );
    return Item ? domainFromItem(Item) : undefined;
  }

  async declare(
    orgId: string,
    domain: SendingDomain,
    options: { foundIdentity?: boolean } = {},
  ): Promise<SendingDomain> {
    const { tableName: TableName } = this.table;
    return retryOnConflict(async (retryable) => {
      // Who declared the name before: the transaction holds only if still so.
      const claim = await this.claim(domain.domain);
      if (claim.declaredBy.has(orgId)) throw alreadyDeclared(domain);
      const first = claim.declaredBy.size === 0;
      // The first declaration that found the identity marks it as found.
      const markFound = first && options.foundIdentity === true;
      const declared = {
        ...domain,
        declaredAfterAnother: !first || options.foundIdentity === true,
      };
      try {
        await this.table.client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName,
                  Key: keys.domainClaim(domain.domain),
                  UpdateExpression: markFound
                    ? 'ADD declaredBy :org SET #type = :type, identityFound = :true'
                    : 'ADD declaredBy :org SET #type = :type',
                  ConditionExpression: first
                    ? 'attribute_not_exists(declaredBy)'
                    : 'NOT contains(declaredBy, :orgId)',
                  ExpressionAttributeNames: { '#type': ENTITY_TYPE },
                  ExpressionAttributeValues: {
                    ':org': new Set([orgId]),
                    ':type': DomainClaimItem.type,
                    ...(first ? {} : { ':orgId': orgId }),
                    ...(markFound ? { ':true': true } : {}),
                  },
                },
              },
              {
                Put: {
                  TableName,
                  Item: {
                    ...keys.domain(orgId, domain.id),
                    ...entityType('Domain'),
                    ...declared,
                  },
                  ConditionExpression: 'attribute_not_exists(PK)',
                },
              },
            ],
          }),
        );
        return declared;
      } catch (error) {
        // Another declaration came in meanwhile: read the claim again.
        if (failedConditions(error)?.includes(0)) {
          retryable(alreadyDeclared(domain, error));
        }
        throw error;
      }
    });
  }

  /** The organizations that declare a name (strongly consistent). */
  private async claim(name: string) {
    const key = keys.domainClaim(name);
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: key,
        ConsistentRead: true,
      }),
    );
    return parseItem(DomainClaimItem, Item ?? {}, key);
  }

  async saveState(orgId: string, domain: SendingDomain): Promise<void> {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.domain(orgId, domain.id),
          // Statuses only: the proof of ownership moves by its own transaction.
          UpdateExpression:
            'SET dkimStatus = :dkim, mailFromDomain = :mailFrom, mailFromStatus = :mailFromStatus, lastCheckedAt = :at',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: {
            ':dkim': domain.dkimStatus,
            ':mailFrom': domain.mailFromDomain,
            ':mailFromStatus': domain.mailFromStatus,
            ':at': domain.lastCheckedAt,
          },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw gone(domain.id, error);
      throw error;
    }
  }

  async remove(
    orgId: string,
    domain: SendingDomain,
  ): Promise<{ stillDeclared: boolean; keepIdentity: boolean }> {
    const { tableName: TableName } = this.table;
    const claim = await this.claim(domain.domain);
    const owned =
      claim.ownerOrgId === orgId && claim.ownerDomainId === domain.id;
    try {
      await this.table.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName,
                Key: keys.domain(orgId, domain.id),
                ConditionExpression: 'attribute_exists(PK)',
              },
            },
            {
              Update: {
                TableName,
                Key: keys.domainClaim(domain.domain),
                UpdateExpression: owned
                  ? 'DELETE declaredBy :org REMOVE ownerOrgId, ownerDomainId'
                  : 'DELETE declaredBy :org',
                ExpressionAttributeValues: { ':org': new Set([orgId]) },
              },
            },
          ],
        }),
      );
    } catch (error) {
      if (failedConditions(error)?.includes(0)) throw gone(domain.id, error);
      throw error;
    }
    const stillDeclared = [...claim.declaredBy].some((id) => id !== orgId);
    return {
      stillDeclared,
      keepIdentity: stillDeclared || claim.identityFound,
    };
  }

  async owner(
    domain: string,
  ): Promise<{ orgId: string; domainId: string } | undefined> {
    const { ownerOrgId, ownerDomainId } = await this.claim(domain);
    return ownerOrgId !== undefined && ownerDomainId !== undefined
      ? { orgId: ownerOrgId, domainId: ownerDomainId }
      : undefined;
  }

  async proveOwnership(
    orgId: string,
    domain: SendingDomain,
    at: string,
    previous?: { orgId: string; domainId: string },
  ): Promise<void> {
    const { tableName: TableName } = this.table;
    const items: TransactItem[] = [
      {
        Update: {
          TableName,
          Key: keys.domain(orgId, domain.id),
          UpdateExpression:
            'SET ownershipProved = :true, ownershipProvedAt = :at',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':true': true, ':at': at },
        },
      },
      {
        Update: {
          TableName,
          Key: keys.domainClaim(domain.domain),
          // A proved domain's identity is its owner's: no longer "found".
          UpdateExpression:
            'SET ownerOrgId = :org, ownerDomainId = :domainId REMOVE identityFound',
          // Nobody else took it since we read the previous owner.
          ConditionExpression: previous
            ? 'ownerOrgId = :previousOrg AND ownerDomainId = :previousDomain'
            : 'attribute_not_exists(ownerOrgId)',
          ExpressionAttributeValues: {
            ':org': orgId,
            ':domainId': domain.id,
            ...(previous
              ? {
                  ':previousOrg': previous.orgId,
                  ':previousDomain': previous.domainId,
                }
              : {}),
          },
        },
      },
      ...(previous && previous.domainId !== domain.id
        ? [
            {
              Update: {
                TableName,
                Key: keys.domain(previous.orgId, previous.domainId),
                UpdateExpression:
                  'SET ownershipProved = :false, ownershipLostAt = :at',
                ConditionExpression: 'attribute_exists(PK)',
                ExpressionAttributeValues: { ':false': false, ':at': at },
              },
            } satisfies TransactItem,
          ]
        : []),
    ];
    try {
      await this.table.client.send(
        new TransactWriteCommand({ TransactItems: items }),
      );
    } catch (error) {
      if (failedConditions(error)?.length) {
        throw new ConflictError(
          'domain.ownershipChanged',
          `The ownership of ${domain.domain} changed meanwhile; verify again`,
          { cause: error },
        );
      }
      throw error;
    }
  }
}
