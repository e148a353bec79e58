/**
 * The endpoint groups: one Lambda each. The CDK stack and the local gateway
 * both read this registry, so a route is declared in exactly one place.
 */
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Context,
} from 'aws-lambda';
import type { Deps } from '../shared/deps.ts';
import type { Route } from '../shared/http/route.ts';
import { createHandler as createContactsHandler } from './contacts/handler.ts';
import { contactRoutes } from './contacts/routes.ts';
import { REDOC_BUNDLE } from './docs/assets.ts';
import { createHandler as createDocsHandler } from './docs/handler.ts';
import { createDocsRoutes } from './docs/routes.ts';
import { createHandler as createDomainsHandler } from './domains/handler.ts';
import { domainRoutes } from './domains/routes.ts';
import { createHandler as createListsHandler } from './lists/handler.ts';
import { listRoutes } from './lists/routes.ts';
import { createHandler as createMeHandler } from './me/handler.ts';
import { meRoutes } from './me/routes.ts';
import { createHandler as createPublicHandler } from './public/handler.ts';
import { publicRoutes } from './public/routes.ts';
import { createHandler as createSettingsHandler } from './settings/handler.ts';
import { settingsRoutes } from './settings/routes.ts';
import { createHandler as createTagsHandler } from './tags/handler.ts';
import { tagRoutes } from './tags/routes.ts';
import { createHandler as createTemplatesHandler } from './templates/handler.ts';
import { templateRoutes } from './templates/routes.ts';
import { createHandler as createTopicsHandler } from './topics/handler.ts';
import { topicRoutes } from './topics/routes.ts';

/** A group's handler, as Lambda (or the local gateway) invokes it. */
export type GroupHandler = (
  event: APIGatewayProxyEvent,
  context: Context,
) => Promise<APIGatewayProxyResult>;

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
  /** Short name, used for construct ids, log groups and document tags. */
  name: string;
  /** What the group is about, for a reader of the API reference. */
  description: string;
  /** The Lambda entry file, relative to the repository root. */
  entry: string;
  routes: Route[];
  createHandler: (deps: Deps) => GroupHandler;
  /** Least privilege: the table actions of the pipeline plus the group's own. */
  tableActions: TableAction[];
  /** Sends email through SES (needs ses:SendEmail). */
  sendsEmail?: boolean;
  /** Signs or checks public links (needs the link signing secret). */
  usesLinkSecret?: boolean;
  /**
   * Manages SES identities, tenants and configuration sets, and reads the
   * account (the sending setup).
   */
  managesSendingSetup?: boolean;
  /** Computes readiness: reads the tenant's status (ses:GetTenant). */
  readsSendingStatus?: boolean;
  /**
   * Files of npm packages the function reads at run time (module paths,
   * e.g. `redoc/bundles/redoc.standalone.js`): copied beside its bundle.
   */
  assets?: string[];
}

/**
 * The routes of the API reference. They describe every group, themselves
 * included, so they read the registry when first asked, not now.
 */
const docsRoutes = createDocsRoutes(() => endpointGroups);

/** Every endpoint group of the API. */
export const endpointGroups: EndpointGroup[] = [
  {
    name: 'me',
    description:
      "The caller's context: its organization, role and key, and whether the organization can send.",
    entry: 'functions/me/lambda.ts',
    routes: meRoutes,
    createHandler: createMeHandler,
    // Readiness reads the domains and the address book, and the tenant.
    tableActions: [...PIPELINE_ACTIONS, 'dynamodb:Query'],
    readsSendingStatus: true,
  },
  {
    name: 'lists',
    description: 'Lists of the organization, each holding its contacts.',
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
  {
    name: 'contacts',
    description:
      'Contacts of the lists: adding one or many (with double opt-in), reading, changing, unsubscribing and tagging them.',
    entry: 'functions/contacts/lambda.ts',
    routes: contactRoutes,
    createHandler: createContactsHandler,
    tableActions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
    ],
    sendsEmail: true,
    usesLinkSecret: true,
    // The confirmation email passes the readiness guards.
    readsSendingStatus: true,
  },
  {
    name: 'tags',
    description: 'Tags of the organization, put on contacts by name.',
    entry: 'functions/tags/lambda.ts',
    routes: tagRoutes,
    createHandler: createTagsHandler,
    tableActions: [...PIPELINE_ACTIONS, 'dynamodb:Query', 'dynamodb:PutItem'],
  },
  {
    name: 'templates',
    description: 'Email templates (Liquid), their rendering and test sends.',
    entry: 'functions/templates/lambda.ts',
    routes: templateRoutes,
    createHandler: createTemplatesHandler,
    tableActions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
    // Test sends; previews sign (test) links.
    sendsEmail: true,
    usesLinkSecret: true,
  },
  {
    name: 'topics',
    description: 'Topics a contact can opt out of without leaving the list.',
    entry: 'functions/topics/lambda.ts',
    routes: topicRoutes,
    createHandler: createTopicsHandler,
    tableActions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
    ],
  },
  {
    name: 'settings',
    description:
      'Sender settings, the address book of sending identities, and the double opt-in email.',
    entry: 'functions/settings/lambda.ts',
    routes: settingsRoutes,
    createHandler: createSettingsHandler,
    tableActions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
    // Opt-in test sends; readiness reads the tenant's status.
    sendsEmail: true,
    usesLinkSecret: true,
    managesSendingSetup: true,
  },
  {
    name: 'domains',
    description:
      'Sending domains: declaring one, its DNS records and their verification.',
    entry: 'functions/domains/lambda.ts',
    routes: domainRoutes,
    createHandler: createDomainsHandler,
    tableActions: [
      ...PIPELINE_ACTIONS,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ],
    managesSendingSetup: true,
  },
  {
    name: 'public',
    description:
      'Pages reached from links in emails, without a key: confirmation, unsubscribe and topic opt-out.',
    entry: 'functions/public/lambda.ts',
    routes: publicRoutes,
    createHandler: createPublicHandler,
    // No key, no rate counter: reads contacts and topics, confirms,
    // unsubscribes and records topic opt-outs.
    tableActions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
    ],
    usesLinkSecret: true,
  },
  {
    name: 'docs',
    description:
      'This reference: the OpenAPI document and its page, without a key.',
    entry: 'functions/docs/lambda.ts',
    routes: docsRoutes,
    createHandler: (deps) => createDocsHandler(deps, docsRoutes),
    // Reads nothing: the document comes from the declarations.
    tableActions: [],
    assets: [REDOC_BUNDLE],
  },
];
