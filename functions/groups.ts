/**
 * The endpoint groups: one Lambda each. The CDK stack and the local gateway
 * both read this registry, so a route is declared in exactly one place.
 */
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Context,
} from 'aws-lambda';
import type { Bindings, DepsOf } from '../shared/bindings.ts';
import { createApiHandler } from '../shared/http/api-handler.ts';
import { createPublicHandler } from '../shared/http/public-handler.ts';
import type { Route } from '../shared/http/route.ts';
import { campaignBindings, campaignRoutes } from './campaigns/routes.ts';
import { contactBindings, contactRoutes } from './contacts/routes.ts';
import { REDOC_BUNDLE } from './docs/assets.ts';
import { createDocsRoutes, docsBindings } from './docs/routes.ts';
import { domainBindings, domainRoutes } from './domains/routes.ts';
import { fieldBindings, fieldRoutes } from './fields/routes.ts';
import { keyBindings, keyRoutes } from './keys/routes.ts';
import { listBindings, listRoutes } from './lists/routes.ts';
import { meBindings, meRoutes } from './me/routes.ts';
import { pageBindings, pageRoutes } from './pages/routes.ts';
import { privacyBindings, privacyRoutes } from './privacy/routes.ts';
import { publicBindings, publicRoutes } from './public/routes.ts';
import { segmentBindings, segmentRoutes } from './segments/routes.ts';
import { sequenceBindings, sequenceRoutes } from './sequences/routes.ts';
import { settingsBindings, settingsRoutes } from './settings/routes.ts';
import { signupPageBindings, signupPageRoutes } from './signup-pages/routes.ts';
import {
  suppressionBindings,
  suppressionRoutes,
} from './suppressions/routes.ts';
import { tagBindings, tagRoutes } from './tags/routes.ts';
import { templateBindings, templateRoutes } from './templates/routes.ts';
import { topicBindings, topicRoutes } from './topics/routes.ts';
import { webhookBindings, webhookRoutes } from './webhooks/routes.ts';

/** A group's handler, as Lambda (or the local gateway) invokes it. */
export type GroupHandler = (
  event: APIGatewayProxyEvent,
  context: Context,
) => Promise<APIGatewayProxyResult>;

/** One endpoint group and what its function may use. */
export interface EndpointGroup<B extends Bindings = Bindings> {
  /** Short name, used for construct ids, log groups and document tags. */
  name: string;
  /** What the group is about, for a reader of the API reference. */
  description: string;
  /** The Lambda entry file, relative to the repository root. */
  entry: string;
  /**
   * What the function may use: its grants, environment, configuration and
   * deps derive from this list, and its routes are typed with those deps.
   */
  bindings: B;
  routes: readonly Route<DepsOf<B>>[];
  /**
   * The pipeline its routes run in: the API's (`createApiHandler`: key,
   * rate limit, role, JSON), or the public one (`createPublicHandler`: no
   * key, HTML answers). Its Lambda entry calls the same pipeline (as
   * test/architecture checks).
   */
  pipeline: (
    deps: DepsOf<B>,
    routes: readonly Route<DepsOf<B>>[],
  ) => GroupHandler;
  /** The pipeline over the group's routes, built with `deps`. */
  createHandler: (deps: DepsOf<B>) => GroupHandler;
  /**
   * Files of npm packages the function reads at run time (module paths,
   * e.g. `redoc/bundles/redoc.standalone.js`): copied beside its bundle.
   */
  assets?: string[];
}

/**
 * Declares an endpoint group: its routes and pipeline are checked against
 * the deps its bindings give, and its handler is their pipeline over them.
 */
export const endpointGroup = <const B extends Bindings>(
  // The bindings decide the deps; the routes and pipeline are checked.
  declaration: Omit<
    EndpointGroup<B>,
    'routes' | 'pipeline' | 'createHandler'
  > & {
    routes: readonly Route<DepsOf<NoInfer<B>>>[];
    pipeline: EndpointGroup<NoInfer<B>>['pipeline'];
  },
): EndpointGroup<B> => ({
  ...declaration,
  createHandler: (deps) => declaration.pipeline(deps, declaration.routes),
});

/**
 * The routes of the API reference. They describe every group, themselves
 * included, so they read the registry when first asked, not now.
 */
export const docsRoutes = createDocsRoutes(async () => endpointGroups);

/** Every endpoint group of the API. */
export const endpointGroups: readonly EndpointGroup[] = [
  endpointGroup({
    name: 'me',
    description:
      "The caller's context: its organization, role and key, and whether the organization can send.",
    entry: 'functions/me/lambda.ts',
    bindings: meBindings,
    routes: meRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'lists',
    description: 'Lists of the organization, each holding its contacts.',
    entry: 'functions/lists/lambda.ts',
    bindings: listBindings,
    routes: listRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'contacts',
    description:
      'Contacts of the lists: adding one or many (with double opt-in), reading, changing, unsubscribing and tagging them.',
    entry: 'functions/contacts/lambda.ts',
    bindings: contactBindings,
    routes: contactRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'fields',
    description:
      'Custom fields: the values an organization keeps on its contacts.',
    entry: 'functions/fields/lambda.ts',
    bindings: fieldBindings,
    routes: fieldRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'privacy',
    description:
      'A person’s data on request: the export of everything the organization holds about one address.',
    entry: 'functions/privacy/lambda.ts',
    bindings: privacyBindings,
    routes: privacyRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'suppressions',
    description:
      'The suppression list: the addresses the organization never mails, why, and their lifts.',
    entry: 'functions/suppressions/lambda.ts',
    bindings: suppressionBindings,
    routes: suppressionRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'tags',
    description: 'Tags of the organization, put on contacts by name.',
    entry: 'functions/tags/lambda.ts',
    bindings: tagBindings,
    routes: tagRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'templates',
    description: 'Email templates (Liquid), their rendering and test sends.',
    entry: 'functions/templates/lambda.ts',
    bindings: templateBindings,
    routes: templateRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'topics',
    description: 'Topics a contact can opt out of without leaving the list.',
    entry: 'functions/topics/lambda.ts',
    bindings: topicBindings,
    routes: topicRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'sequences',
    description:
      'Sequences (journeys per contact, on a trigger) and series (a calendar for an audience): versions, nodes and publishing.',
    entry: 'functions/sequences/lambda.ts',
    bindings: sequenceBindings,
    routes: sequenceRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'segments',
    description:
      'Segments: saved filters over one list’s contacts, which series narrow their list with.',
    entry: 'functions/segments/lambda.ts',
    bindings: segmentBindings,
    routes: segmentRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'signupPages',
    description:
      'Hosted sign-up pages: forms from a theme or pasted HTML, each feeding one list through double opt-in.',
    entry: 'functions/signup-pages/lambda.ts',
    bindings: signupPageBindings,
    routes: signupPageRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'campaigns',
    description:
      'Campaigns: drafts, the send (now or at a minute), test sends and stats.',
    entry: 'functions/campaigns/lambda.ts',
    bindings: campaignBindings,
    routes: campaignRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'settings',
    description:
      'Sender settings, the address book of sending identities, and the double opt-in email.',
    entry: 'functions/settings/lambda.ts',
    bindings: settingsBindings,
    routes: settingsRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'domains',
    description:
      'Sending domains: declaring one, its DNS records and their verification.',
    entry: 'functions/domains/lambda.ts',
    bindings: domainBindings,
    routes: domainRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'webhooks',
    description:
      'Webhooks: endpoints that receive the organization’s events as they happen, signed per Standard Webhooks, retried for 77 hours, with a delivery log, redeliveries and test calls.',
    entry: 'functions/webhooks/lambda.ts',
    bindings: webhookBindings,
    routes: webhookRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'keys',
    description:
      'API keys of the organization: listing them, creating one (its value shown once, optionally narrowed to scopes) and revoking them.',
    entry: 'functions/keys/lambda.ts',
    bindings: keyBindings,
    routes: keyRoutes,
    pipeline: createApiHandler,
  }),
  endpointGroup({
    name: 'public',
    description:
      'Pages reached from links in emails, without a key: confirmation, unsubscribe and topic opt-out.',
    entry: 'functions/public/lambda.ts',
    bindings: publicBindings,
    routes: publicRoutes,
    pipeline: createPublicHandler,
  }),
  endpointGroup({
    name: 'docs',
    description:
      'This reference: the OpenAPI document and its page, without a key.',
    entry: 'functions/docs/lambda.ts',
    bindings: docsBindings,
    routes: docsRoutes,
    pipeline: createPublicHandler,
    assets: [REDOC_BUNDLE],
  }),
];

/**
 * The groups served on the hosted pages' own origin (on AWS a REST API of
 * their own, locally the same gateway): customer HTML never shares an
 * origin with the API. Not part of the API reference.
 */
export const pageGroups: readonly EndpointGroup[] = [
  endpointGroup({
    name: 'pages',
    description:
      'The hosted sign-up pages, public: a published page and its form.',
    entry: 'functions/pages/lambda.ts',
    bindings: pageBindings,
    routes: pageRoutes,
    pipeline: createPublicHandler,
  }),
];
