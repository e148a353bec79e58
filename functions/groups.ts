/**
 * The endpoint groups: one Lambda each. The CDK stack and the local gateway
 * both read this registry, so a route is declared in exactly one place.
 */
import type { ApiHandler } from '../shared/http/api-handler.ts';
import type { Route } from '../shared/http/route.ts';
import type { Deps } from '../shared/ports.ts';
import { createHandler as createListsHandler } from './lists/handler.ts';
import { listRoutes } from './lists/routes.ts';
import { createHandler as createMeHandler } from './me/handler.ts';
import { meRoutes } from './me/routes.ts';

/** DynamoDB actions a group's function may call on the table. */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchWriteItem'
  | 'dynamodb:ConditionCheckItem';

/** Every request reads its key and counts itself against the rate limit. */
const PIPELINE_ACTIONS: TableAction[] = [
  'dynamodb:GetItem',
  'dynamodb:UpdateItem',
];

/** One endpoint group and what its function needs. */
export interface EndpointGroup {
  /** Short name, used for construct ids and log groups. */
  name: string;
  /** The Lambda entry file, relative to the repository root. */
  entry: string;
  routes: Route[];
  createHandler: (deps: Deps) => ApiHandler;
  /** Least privilege: the table actions of the pipeline plus the group's own. */
  tableActions: TableAction[];
}

/** Every endpoint group of the API. */
export const endpointGroups: EndpointGroup[] = [
  {
    name: 'me',
    entry: 'functions/me/lambda.ts',
    routes: meRoutes,
    createHandler: createMeHandler,
    tableActions: PIPELINE_ACTIONS,
  },
  {
    name: 'lists',
    entry: 'functions/lists/lambda.ts',
    routes: listRoutes,
    createHandler: createListsHandler,
    tableActions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
    ],
  },
];
