/**
 * Schemas of API keys as the API takes and shows them: a new key's name
 * and scopes, and the view of a key (never its value or its hash, except
 * the value once, in the answer that creates it).
 */
import * as v from 'valibot';
import { inJsonSchema } from '../schema-notes.ts';
import { eachOnce, requiredName, Timestamp, ViewId } from '../validation.ts';
import { type ListedApiKey, ROLES } from './model.ts';
import { orderedScopes, SCOPES, type Scope } from './scopes.ts';

/** Characters of a key's name. */
export const MAX_KEY_NAME_CHARS = 100;

/** What a key is for, as its creator names it. */
export const KeyName = requiredName(MAX_KEY_NAME_CHARS);

/** The scopes of a new key: at least one, each once, shown in their order. */
export const ScopeList = v.pipe(
  v.array(
    v.picklist(SCOPES, `must be one of ${SCOPES.join(', ')}`),
    'must be a list of scopes',
  ),
  v.minLength(
    1,
    'must name at least one scope; leave scopes out for a key with full access',
  ),
  eachOnce('a scope'),
  inJsonSchema({ uniqueItems: true }),
  v.transform((scopes: Scope[]) => orderedScopes(scopes)),
);

/** The name and scopes of a new key (the operator's and the API's). */
export const KeyOptions = v.object({
  name: v.optional(KeyName),
  scopes: v.optional(ScopeList),
});
export type KeyOptions = v.InferOutput<typeof KeyOptions>;

/** The body of `POST /api-keys`. */
export const CreateApiKeyBody = v.object({
  name: v.pipe(
    KeyName,
    v.description(
      `What the key is for, shown in the listing: 1 to ${MAX_KEY_NAME_CHARS} characters`,
    ),
  ),
  scopes: v.optional(
    v.pipe(
      ScopeList,
      v.description(
        'The scopes the key is narrowed to; leave it out for full access (a key that is itself scoped must name scopes, each one it holds)',
      ),
    ),
  ),
});

const ScopesView = v.pipe(
  v.nullable(v.array(v.picklist(SCOPES))),
  v.description(
    'The scopes the key is narrowed to, or null: full access (every route its role allows)',
  ),
);

/** The view of a key. */
export const ApiKeyView = v.pipe(
  v.object({
    id: ViewId,
    name: v.pipe(
      v.nullable(v.string()),
      v.description(
        'What the key is for; null for a key made without a name (older keys, the admin CLI without --name)',
      ),
    ),
    createdBy: v.pipe(
      v.object({
        userId: ViewId,
        email: v.pipe(
          v.nullable(v.string()),
          v.description(
            'The creator’s email when the key was made; null for an older key not yet indexed',
          ),
        ),
      }),
      v.description('The member who created the key: it acts with its role'),
    ),
    role: v.pipe(
      v.picklist(ROLES),
      v.description(
        'The role the key acts with: its creator’s role in the organization (for a revoked key, the role it had then)',
      ),
    ),
    scopes: ScopesView,
    createdAt: Timestamp,
    lastUsedAt: v.pipe(
      v.nullable(Timestamp),
      v.description(
        'When the key was last used, to the hour: a request the key authenticated at this instant, and none more than an hour after it. Null: not used since last-use recording began',
      ),
    ),
    revokedAt: v.pipe(
      v.nullable(Timestamp),
      v.description(
        'When the key was revoked (by the API, the admin CLI, or its creator leaving the organization); null while it is live',
      ),
    ),
  }),
  v.title('ApiKey'),
);
export type ApiKeyView = v.InferOutput<typeof ApiKeyView>;

/** A new key: its view and, this once, its value. */
export const CreatedApiKey = v.pipe(
  v.object({
    ...ApiKeyView.pipe[0].entries,
    apiKey: v.pipe(
      v.string(),
      v.description(
        'The key’s value, shown here and never again (only its hash is stored): send it in the x-api-key header',
      ),
    ),
  }),
  v.title('CreatedApiKey'),
);
export type CreatedApiKey = v.InferOutput<typeof CreatedApiKey>;

/** The view of a stored key. */
export const apiKeyView = (key: ListedApiKey): ApiKeyView => ({
  id: key.keyId,
  name: key.name ?? null,
  createdBy: { userId: key.userId, email: key.email ?? null },
  role: key.role,
  scopes: key.scopes ? [...key.scopes] : null,
  createdAt: key.createdAt,
  lastUsedAt: key.lastUsedAt ?? null,
  revokedAt: key.revokedAt ?? null,
});
