/**
 * Infrastructure. What holds data and must survive a redeploy: the single
 * DynamoDB table (with its change stream), built from the same definition as
 * the local stack's table, the secret that signs the public links already
 * sent in emails, and the address key the suppression list is keyed by.
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

/** The stateful stack: the table and its two secrets, all retained. */
export class StatefulStack extends Stack {
  /** The single table of the service. */
  readonly table: Table;

  /**
   * Signs and checks the links in emails (confirmation, unsubscribe). Only
   * the functions of groups that use it may read it.
   */
  readonly linkSigningSecret: Secret;

  /**
   * The address key: suppressions are stored under the keyed hash of their
   * address. Only the functions that read or write suppressions may read it.
   */
  readonly addressKeySecret: Secret;

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

    this.addressKeySecret = new Secret(this, 'AddressKeySecret', {
      description:
        'The address key: suppressions are stored under the HMAC of their address with it. Never rotate it: every suppression would need rekeying, and an erased address cannot be.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.addressKeySecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'No rotation, by design: every suppression is stored under the keyed hash of its address, so a new value would need every item rekeyed, and an erased person’s item (which holds the hash alone) could never be. Its reach is limited instead: only the functions that read or write suppressions may read it.',
    });

    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'LinkSigningSecretArn', {
      value: this.linkSigningSecret.secretArn,
    });
    new CfnOutput(this, 'AddressKeySecretArn', {
      value: this.addressKeySecret.secretArn,
    });
  }
}
