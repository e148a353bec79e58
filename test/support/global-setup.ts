import type { TestProject } from 'vitest/node';
import { startDynamoDb } from '../../infra/local/dynamodb.ts';
import { startMailbox } from '../../infra/local/mailbox.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    mailboxUrl: string;
  }
}

/**
 * Starts one in-memory DynamoDB engine and one SES v2 emulator (mailbox)
 * for the whole run; test files keep apart by table and by recipient.
 */
export default async function setup(project: TestProject) {
  const engine = await startDynamoDb();
  const mailbox = await startMailbox().catch(async (error: unknown) => {
    await engine.stop();
    throw error;
  });
  project.provide('dynamodbEndpoint', engine.endpoint);
  project.provide('mailboxUrl', mailbox.url);
  return async () => {
    await Promise.all([engine.stop(), mailbox.stop()]);
  };
}
