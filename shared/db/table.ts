/**
 * The single table's shape, shared by the CDK stack and the local stack so
 * that both create the very same table.
 */

/** Attribute names of the generic keys and of the housekeeping fields. */
export const attr = {
  pk: 'PK',
  sk: 'SK',
  type: '_type',
  ttl: 'ttl',
} as const;

/** A global secondary index on two string attributes. */
export interface IndexDefinition {
  name: string;
  partitionKey: string;
  sortKey: string;
}

/**
 * What the table's change stream carries of each written item: both images,
 * so a consumer sees what changed (audience facts diff them).
 */
export type StreamView = 'NEW_AND_OLD_IMAGES';

/** Key schema, indexes, TTL attribute and change stream of the table. */
export interface TableDefinition {
  partitionKey: string;
  sortKey: string;
  indexes: IndexDefinition[];
  ttlAttribute: string;
  /** The change stream (DynamoDB Streams) the stream consumers read. */
  stream: StreamView;
}

/**
 * The table definition. No secondary index yet: every access pattern so far
 * is served by the primary key (see the README's access-pattern table).
 */
export const tableDefinition: TableDefinition = {
  partitionKey: attr.pk,
  sortKey: attr.sk,
  indexes: [],
  ttlAttribute: attr.ttl,
  stream: 'NEW_AND_OLD_IMAGES',
};
