/**
 * The distribution's routing table: which path patterns go to which origin, and which viewer
 * request function runs on them. Plain data with no CDK import, so the CloudFront construct
 * (edge.ts) and the local gateway's edge (local/gateway/edge.ts) route by the same table.
 */

/** Public paths of the two bindings that are not on the HTTP API. */
export const STREAM_PATH = '/stream';
export const SOCKET_PATH = '/socket';

/** The path prefixes CloudFront sends to the HTTP API (besides its default behaviour). */
export const HTTP_PATH_PATTERNS = ['/events', '/.well-known/aep', '/healthz', '/admin/*', '/signin/*'] as const;

/**
 * The socket's patterns. A CloudFront path pattern without a wildcard matches only that exact
 * path, so `/socket/` (trailing slash) needs its own behaviour or it falls to the HTTP API.
 */
export const SOCKET_PATH_PATTERNS = [SOCKET_PATH, `${SOCKET_PATH}/`] as const;

export type EdgeOrigin = 'http' | 'stream' | 'socket';

/** The viewer-request functions of edge-functions.ts, by name. */
export type ViewerRequestFunctionName = 'streamAuthorizationCopy' | 'socketPathRewrite';

export interface EdgeBehaviour {
  pathPattern: string;
  origin: EdgeOrigin;
  viewerRequest?: ViewerRequestFunctionName;
}

/** In precedence order, as the distribution lists them; anything else goes to the HTTP API (the default behaviour). */
export const EDGE_BEHAVIOURS: readonly EdgeBehaviour[] = [
  ...HTTP_PATH_PATTERNS.map((pathPattern): EdgeBehaviour => ({ pathPattern, origin: 'http' })),
  { pathPattern: STREAM_PATH, origin: 'stream', viewerRequest: 'streamAuthorizationCopy' },
  ...SOCKET_PATH_PATTERNS.map((pathPattern): EdgeBehaviour => ({ pathPattern, origin: 'socket', viewerRequest: 'socketPathRewrite' })),
];

export const DEFAULT_BEHAVIOUR: EdgeBehaviour = { pathPattern: '*', origin: 'http' };

/** The behaviour CloudFront picks for a path: the first pattern that matches, else the default. */
export function behaviourFor(path: string): EdgeBehaviour {
  return EDGE_BEHAVIOURS.find((behaviour) => pathPatternMatches(behaviour.pathPattern, path)) ?? DEFAULT_BEHAVIOUR;
}

/**
 * CloudFront path patterns: case-sensitive, `*` matches any run of characters (slashes
 * included), `?` exactly one; the pattern covers the whole path (CloudFront Developer Guide,
 * "Path pattern").
 */
export function pathPatternMatches(pattern: string, path: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(path);
}
