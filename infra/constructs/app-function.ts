/**
 * Infrastructure. One Lambda function with the house defaults: Node 22 on
 * arm64, an ESM bundle with source maps, JSON logs to its own log group,
 * active tracing, and resource access granted only through `bind*` helpers.
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  LoggingFormat,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { TableAction } from '../../functions/groups.ts';

/** The repository root: entries and the lock file are relative to it. */
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Props of an {@link AppFunction}. */
export interface AppFunctionProps {
  /** The handler module, relative to the repository root. */
  entry: string;
}

/**
 * A `NodejsFunction` with the house defaults. Environment variables are set
 * only by the `bind*` methods, so a grant and its variable stay together.
 */
export class AppFunction extends Construct {
  /** The underlying function, e.g. for API integrations. */
  readonly fn: NodejsFunction;

  /** The function's log group, one month of retention. */
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: AppFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // An explicit role instead of AWSLambdaBasicExecutionRole: the function
    // may write to its own log group and nowhere else.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    });
    this.logGroup.grantWrite(role);

    this.fn = new NodejsFunction(this, 'Function', {
      entry: `${repoRoot}${props.entry}`,
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: `${repoRoot}package-lock.json`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(10),
      role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      tracing: Tracing.ACTIVE,
      environment: {
        POWERTOOLS_SERVICE_NAME: 'email-marketing',
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        format: OutputFormat.ESM,
        minify: true,
        sourceMap: true,
        target: 'node22',
        mainFields: ['module', 'main'],
        // CommonJS dependencies inside an ESM bundle still call `require`.
        banner:
          "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      },
    });
  }

  /**
   * Grants exactly `actions` on the table (and its indexes, if any) and tells
   * the function the table's name through `TABLE_NAME`.
   */
  bindTable(table: ITable, actions: readonly TableAction[]): void {
    table.grant(this.fn, ...actions);
    this.fn.addEnvironment('TABLE_NAME', table.tableName);
  }
}
