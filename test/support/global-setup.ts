import type { TestProject } from 'vitest/node';
import { startDynamoDb } from '../../infra/local/dynamodb.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/** Starts one in-memory DynamoDB engine for the whole run. */
export default async function setup(project: TestProject) {
  const engine = await startDynamoDb();
  project.provide('dynamodbEndpoint', engine.endpoint);
  return () => engine.stop();
}
