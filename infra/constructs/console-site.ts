/**
 * Facts about the console's static site shared by the CDK stack and the local gateway (no CDK
 * import here): the path it is served under, where the build puts it, and the response
 * headers both attach. The CSP allows only the relay's own origin (scripts, styles, fetch,
 * WebSocket): the console talks to the relay it is served by and nothing else.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The console's path on the relay's base URL (no trailing slash). */
export const CONSOLE_PATH = '/console';

/** `npm run build` writes the console here (git-ignored). */
export const CONSOLE_BUILD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'dist');

/**
 * The console's content security policy. `connect-src` names the relay's own origin only: the
 * page talks to the relay it is served by (same distribution, same host: fetches, `GET /stream`
 * and the `/socket` WebSocket) and to nothing else. `'self'` covers the fetches, and in CSP
 * Level 3 browsers the WebSocket too (`wss:` of the page's own host); `socketOrigins` names the
 * socket's origin explicitly for browsers that match `'self'` to http(s) only (older Safari), as
 * `wss://{domainName}` when deployed with a custom domain, and `ws://{host}` locally (never
 * `ws: wss:` to any host: an injected script could send the token off over a socket).
 * `frame-ancestors 'none'` keeps the console out of other sites' frames (clickjacking an answer button).
 */
export function consoleContentSecurityPolicy(socketOrigins: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    ["connect-src 'self'", ...socketOrigins].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * The socket origin a page served from this `Host` connects to, for the policy; undefined when
 * the value is not a plain host[:port] (it is copied into a header, where `;` or a quote would
 * add directives, so anything else is left to `'self'`).
 */
export function socketOriginOf(scheme: 'ws' | 'wss', host: string | undefined): string | undefined {
  if (host === undefined || !/^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host)) return undefined;
  return `${scheme}://${host.toLowerCase()}`;
}

/**
 * CloudFront Function (viewer request, JS 2.0) on the console's behaviours: S3 has no folder
 * index, so `/console/` (and any path ending in `/`) is asked for as `.../index.html`, and
 * `/console` is redirected to `/console/` so the page's relative URLs resolve under it.
 */
export const CONSOLE_INDEX_REWRITE_CODE = [
  'function handler(event) {',
  '  var request = event.request;',
  `  if (request.uri === ${JSON.stringify(CONSOLE_PATH)}) {`,
  `    return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: ${JSON.stringify(`${CONSOLE_PATH}/`)} } } };`,
  '  }',
  "  if (request.uri.endsWith('/')) request.uri = request.uri + 'index.html';",
  '  return request;',
  '}',
].join('\n');
