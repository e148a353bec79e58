/**
 * Infrastructure. What holds data and must survive a redeploy: the single
 * DynamoDB table (with its change stream), built from the same definition as
 * the local stack's table, and the secret that signs the public links
 * already sent in emails.
 */
import {
  CfnOutput,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { type TableDefinition, tableDefinition } from '../shared/db/table.ts';

/** Props of the {@link StatefulStack}. */
export interface StatefulStackProps extends StackProps {
  /** The table's shape; defaults to the service's own definition. */
  definition?: TableDefinition;
}

const stringKey = (name: string) => ({ name, type: AttributeType.STRING });

/** The stateful stack: the table and the link signing secret, both retained. */
export class StatefulStack extends Stack {
  /** The single table of the service. */
  readonly table: Table;

  /**
   * Signs and checks the links in emails (confirmation, unsubscribe). Only
   * the functions of groups that use it may read it.
   */
  readonly linkSigningSecret: Secret;

  constructor(scope: Construct, id: string, props: StatefulStackProps = {}) {
    super(scope, id, props);
    const definition = props.definition ?? tableDefinition;

    this.table = new Table(this, 'Table', {
      partitionKey: stringKey(definition.partitionKey),
      sortKey: stringKey(definition.sortKey),
      timeToLiveAttribute: definition.ttlAttribute,
      // Committed writes, old and new image: the stream consumers' source.
      stream: StreamViewType[definition.stream],
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

    this.linkSigningSecret = new Secret(this, 'LinkSigningSecret', {
      description:
        'Signs the confirmation and unsubscribe links in emails. Rotating it invalidates every link already sent.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.linkSigningSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'No automatic rotation: a new value invalidates every confirmation and unsubscribe link already sent, and unsubscribe links must keep working. Rotate deliberately (after a leak, accepting that old links break), by putting a new secret value; functions pick it up within their one-hour cache.',
    });

    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'LinkSigningSecretArn', {
      value: this.linkSigningSecret.secretArn,
    });
  }
}
