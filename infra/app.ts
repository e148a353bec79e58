/**
 * Infrastructure. The CDK app: the stateful stack (table and secrets) and the
 * stateless stack (functions and API) of one stage, checked by cdk-nag.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { StatefulStack } from './stateful-stack.ts';
import { StatelessStack } from './stateless-stack.ts';

/** The stage name used when the `stage` context is not given. */
export const DEFAULT_STAGE = 'EmailMarketing';

/** The stacks of one stage. */
export interface Stacks {
  data: StatefulStack;
  api: StatelessStack;
}

/**
 * Adds the stage's stacks to `app` and registers the AWS Solutions checks.
 * Tests call it with bundling turned off; the entry point below synthesises.
 */
export const buildApp = (app: App): Stacks => {
  const stage: string = app.node.tryGetContext('stage') ?? DEFAULT_STAGE;
  const data = new StatefulStack(app, `${stage}Data`);
  const api = new StatelessStack(app, `${stage}Api`, {
    table: data.table,
    linkSigningSecret: data.linkSigningSecret,
    addressKeySecret: data.addressKeySecret,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { data, api };
};

const runDirectly =
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;

if (runDirectly) {
  const app = new App();
  buildApp(app);
  app.synth();
}
