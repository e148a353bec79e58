/**
 * Driven adapter support: the table handle shared by the DynamoDB
 * repositories, and the translation of DynamoDB failures into domain terms.
 */
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The document client and the table name, passed to every repository. */
export interface DynamoTable {
  client: DynamoDBDocumentClient;
  tableName: string;
}

/** True for a failed condition of a single-item write. */
export const isConditionFailure = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException;

/**
 * For a cancelled transaction, the positions of the items whose condition
 * failed; undefined for any other error.
 */
export const failedConditions = (error: unknown): number[] | undefined => {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).flatMap((reason, index) =>
    reason.Code === 'ConditionalCheckFailed' ? [index] : [],
  );
};

/** Epoch seconds, the unit of the table's TTL attribute. */
export const epochSeconds = (date: Date): number =>
  Math.floor(date.getTime() / 1000);
