/**
 * A small declarative router: routes are `{ method, path }` entries whose path segments are
 * literals or `:name` parameters. A path some route serves, asked with another method, is a
 * 405; a path no route serves is a 404.
 */
import { notFound, RelayError } from '../../src/errors/relay-error.ts';

export interface Route<Handler> {
  method: string;
  /** Segments joined by `/`, e.g. `tokens/:tokenId/rotate`. */
  path: string;
  handler: Handler;
}

export interface MatchedRoute<Handler> {
  handler: Handler;
  /** The `:name` segments of the path, percent-decoded. */
  params: Record<string, string>;
}

/** The route serving this method and path, or the 404/405 RelayError to answer. */
export function matchRoute<Handler>(routes: readonly Route<Handler>[], method: string, path: string): MatchedRoute<Handler> {
  const segments = splitPath(path);
  let pathServed = false;
  for (const route of routes) {
    const params = matchPath(route.path.split('/'), segments);
    if (params === undefined) continue;
    pathServed = true;
    if (route.method === method) return { handler: route.handler, params };
  }
  if (pathServed) throw new RelayError('method-not-allowed', 405, `${method} is not supported on ${path}`);
  throw notFound();
}

function splitPath(path: string): string[] {
  try {
    return path.split('/').filter((segment) => segment !== '').map(decodeURIComponent);
  } catch {
    // A malformed percent-escape names no route.
    throw notFound();
  }
}

function matchPath(pattern: readonly string[], segments: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of pattern.entries()) {
    const segment = segments[index] as string;
    if (part.startsWith(':')) params[part.slice(1)] = segment;
    else if (part !== segment) return undefined;
  }
  return params;
}
