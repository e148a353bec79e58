/**
 * Key scopes: what a key narrowed to some scopes may still call. A key
 * without scopes has full access (every key made before scopes existed,
 * and any key made without them); a scoped key takes a route only when
 * one of its scopes covers the route. Each route names the one scope it
 * belongs to (its group's), and `read` covers every GET besides.
 */

/** The scopes a key may be narrowed to. */
export const SCOPES = [
  'read',
  'audience',
  'campaigns',
  'settings',
  'webhooks',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The scope a route belongs to, or `none`: a route every key may call
 * whatever its scopes (`GET /me`, where a key learns its own scopes), and
 * the public routes, which take no key at all.
 */
export type RouteScope = Scope | 'none';

/**
 * What the scope check knows of a route: its method and scope. A route
 * that declares no scope is open to full-access keys only (fail closed).
 */
export interface ScopedRoute {
  method: string;
  scope?: RouteScope | undefined;
}

/**
 * The scopes any one of which lets a key take the route: its own scope,
 * and `read` for a GET. Empty for a route that needs none, or that
 * declares none.
 */
export const scopesCovering = (route: ScopedRoute): Scope[] => {
  if (route.scope === undefined || route.scope === 'none') return [];
  return route.method === 'GET' && route.scope !== 'read'
    ? [route.scope, 'read']
    : [route.scope];
};

/**
 * Whether a key with `scopes` may take the route: a key without scopes
 * may take any; a scoped key one that needs no scope or that one of its
 * scopes covers.
 */
export const scopesAllow = (
  scopes: readonly Scope[] | undefined,
  route: ScopedRoute,
): boolean => {
  if (scopes === undefined || route.scope === 'none') return true;
  return scopesCovering(route).some((scope) => scopes.includes(scope));
};

/**
 * Why a key with `scopes` may not take the route, naming the scope it
 * needs; undefined when it may.
 */
export const scopeRefusal = (
  scopes: readonly Scope[] | undefined,
  route: ScopedRoute,
): string | undefined => {
  if (scopesAllow(scopes, route)) return undefined;
  const held = `your key is narrowed to ${scopes?.join(', ')}`;
  const [own, read] = scopesCovering(route);
  if (!own) {
    return `This operation is open to keys with full access only; ${held}`;
  }
  return read
    ? `This operation needs the ${own} scope (or read, as a GET); ${held}`
    : `This operation needs the ${own} scope; ${held}`;
};

/**
 * Whether a key with `requested` scopes could take no route a key with
 * `held` cannot: no escalation. Full access (undefined) is within full
 * access only; scopes are within held scopes when each is one of them
 * (`read` is not within `audience`: it reads the campaigns too).
 */
export const scopesWithin = (
  requested: readonly Scope[] | undefined,
  held: readonly Scope[] | undefined,
): boolean => {
  if (held === undefined) return true;
  if (requested === undefined) return false;
  return requested.every((scope) => held.includes(scope));
};

/** The scopes in their declared order, each once (how they are shown). */
export const orderedScopes = (scopes: Iterable<Scope>): Scope[] => {
  const held = new Set(scopes);
  return SCOPES.filter((scope) => held.has(scope));
};
