/**
 * Infrastructure. What holds data and must survive a redeploy: the single
 * DynamoDB table, built from the same definition as the local stack's table.
 */
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { type TableDefinition, tableDefinition } from '../shared/db/table.ts';

/** Props of the {@link StatefulStack}. */
export interface StatefulStackProps extends StackProps {
  /** The table's shape; defaults to the service's own definition. */
  definition?: TableDefinition;
}

const stringKey = (name: string) => ({ name, type: AttributeType.STRING });

/** The stateful stack: the table, retained and protected from deletion. */
export class StatefulStack extends Stack {
  /** The single table of the service. */
  readonly table: Table;

  constructor(scope: Construct, id: string, props: StatefulStackProps = {}) {
    super(scope, id, props);
    const definition = props.definition ?? tableDefinition;

    this.table = new Table(this, 'Table', {
      partitionKey: stringKey(definition.partitionKey),
      sortKey: stringKey(definition.sortKey),
      timeToLiveAttribute: definition.ttlAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of definition.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: stringKey(index.partitionKey),
        sortKey: stringKey(index.sortKey),
        projectionType: ProjectionType.ALL,
      });
    }

    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }
}
