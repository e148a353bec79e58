/**
 * Routes of the `keys` group: an organization's API keys, managed by its
 * owners and admins through the API (the operator's CLI does the same for
 * any organization).
 */

import {
  ApiKeyView,
  CreateApiKeyBody,
  CreatedApiKey,
} from '../../shared/access/api-key.schema.ts';
import {
  createApiKeyAs,
  getApiKey,
  listApiKeys,
  revokeApiKeyAs,
} from '../../shared/access/api-keys.ts';
import { LAST_USE_PRECISION_MS } from '../../shared/access/last-use.ts';
import { MAX_KEYS_PER_MEMBER } from '../../shared/access/model.ts';
import { SCOPES } from '../../shared/access/scopes.ts';
import {
  type DepsOf,
  gatewayKeys,
  PIPELINE_ACTIONS,
  PIPELINE_STORES,
  table,
} from '../../shared/bindings.ts';
import { created, ok, paginated } from '../../shared/http/responses.ts';
import { json, page, routeFor } from '../../shared/http/route.ts';
import { idParams, PageQuery } from '../../shared/validation.ts';

/**
 * What the `keys` group's function may use: the access store (a key, its
 * entry in the organization and its member's key set are written in one
 * transaction), and the edge's key registry, which no other function of
 * the API may touch.
 */
export const keyBindings = [
  table({
    stores: [...PIPELINE_STORES],
    actions: [...PIPELINE_ACTIONS, 'dynamodb:Query', 'dynamodb:PutItem'],
  }),
  gatewayKeys,
] as const;

/** The deps of the `keys` group's function. */
export type KeyDeps = DepsOf<typeof keyBindings>;

// Managing keys is a setting of the organization.
const route = routeFor<KeyDeps>({ scope: 'settings' });

const KeyParams = idParams('keyId');

/** Paragraphs of Markdown, one a string. */
const md = (...paragraphs: string[]) => paragraphs.join('\n\n');

const HOURS = LAST_USE_PRECISION_MS / 3_600_000;

/** What a key is, as these routes show it (our design: the spec leaves keys to the application). */
const KEYS = `An API key acts for its organization with the role its creator (a member) holds there, as every key does. Its value is shown once, in the answer that creates it, and never again: only its hash is stored. A key view shows its id, name, creator (user id and email), the role it acts with, its scopes, when it was created, last used (to the ${HOURS === 1 ? 'hour' : `${HOURS} hours`}: a request it authenticated then, and none ${HOURS === 1 ? 'an hour' : `${HOURS} hours`} after it) and revoked. Owners and admins only: a member's key answers 403.`;

const SCOPE_RULES = `**Scopes.** A key may be narrowed to scopes (${SCOPES.map((s) => `\`${s}\``).join(', ')}); without them it has full access, as every key made before scopes. \`read\` covers every GET; \`audience\` the lists, contacts, tags, fields, topics, segments, suppressions, sign-up pages and a person's data; \`campaigns\` the templates, campaigns, sequences and series; \`settings\` the settings, sender identities, domains and these key routes. Each operation of this reference names its scope; a scoped key calling outside its scopes answers 403 \`auth.scopeMissing\` and nothing is done. \`GET /me\` answers any key, with its scopes.`;

/** Every route of the keys group. */
export const keyRoutes = [
  route({
    method: 'GET',
    path: '/api-keys',
    role: 'admin',
    summary: 'The organization’s API keys, live and revoked, newest first',
    description: md(
      KEYS,
      'Lists every key made through the API or the admin CLI, revoked ones included (`revokedAt`), never a value or a hash. Keys made before this listing existed appear once the operator indexed them (`admin key index`).',
    ),
    query: PageQuery,
    responses: { 200: page(ApiKeyView, 'A page of keys') },
    errors: [],
    handle: async (deps, { caller, query }) =>
      paginated(await listApiKeys(deps, caller.orgId, query), query),
  }),
  route({
    method: 'POST',
    path: '/api-keys',
    role: 'admin',
    summary: 'Create a key for yourself; its value is in this answer only',
    description: md(
      KEYS,
      'The new key belongs to the calling key’s creator and acts with that member’s role (a role change reaches it at once, and it is revoked when the member leaves). `name` says what it is for; `scopes` narrows it (leave it out for full access). The answer carries the value in `apiKey`, this once: store it now.',
      'A key that is itself scoped may only create keys narrowed to scopes it holds (each one of them): asking for full access or another scope answers 403 `apiKey.scopeEscalation`, and nothing is created.',
      `A member holds at most ${MAX_KEYS_PER_MEMBER} live keys: past that, 409 \`apiKey.limit\`; revoke one first.`,
      SCOPE_RULES,
    ),
    body: CreateApiKeyBody,
    responses: {
      201: json(CreatedApiKey, 'The key, and its value (shown only here)'),
    },
    errors: ['apiKey.scopeEscalation', 'apiKey.limit', 'member.changed'],
    handle: async (deps, { caller, body }) =>
      created(await createApiKeyAs(deps, caller, body)),
  }),
  route({
    method: 'GET',
    path: '/api-keys/{keyId}',
    role: 'admin',
    summary: 'One API key of the organization',
    description: md(
      KEYS,
      'Another organization’s key answers 404, as an unknown one.',
    ),
    params: KeyParams,
    responses: { 200: json(ApiKeyView, 'The key') },
    errors: ['apiKey.notFound'],
    handle: async (deps, { caller, params }) =>
      ok(await getApiKey(deps, caller.orgId, params.keyId)),
  }),
  route({
    method: 'DELETE',
    path: '/api-keys/{keyId}',
    role: 'admin',
    summary: 'Revoke an API key; it answers 401 from then on',
    description: md(
      'Revokes the key for good and answers its view, `revokedAt` set. Revoking a revoked key changes nothing and answers the same view. Any key of the organization may be revoked, **the calling key included**: a key can retire itself once its successor works.',
      'A revoked key answers 401 exactly like a key that never existed, at once on a new container and **within 10 seconds** on one that served it in the last 10 seconds (`API_KEY_CACHE_TTL_SECONDS`). It stays in the listing. Another organization’s key answers 404, as an unknown one.',
    ),
    params: KeyParams,
    responses: { 200: json(ApiKeyView, 'The key, revoked') },
    errors: ['apiKey.notFound', 'member.changed'],
    handle: async (deps, { caller, params }) =>
      ok(await revokeApiKeyAs(deps, caller.orgId, params.keyId)),
  }),
];
