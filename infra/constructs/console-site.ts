/**
 * Facts about the console's static site shared by the CDK stack and the local gateway (no CDK
 * import here): the path it is served under, where the build puts it, and the response
 * headers both attach. The CSP allows only this origin (scripts, styles, fetch, WebSocket):
 * the console talks to the relay it is served by and nothing else.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The console's path on the relay's base URL (no trailing slash). */
export const CONSOLE_PATH = '/console';

/** `npm run build` writes the console here (git-ignored). */
export const CONSOLE_BUILD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'dist');

/**
 * `'self'` covers same-origin fetches; `connect-src` names ws:/wss: too because CSP Level 3
 * matches a WebSocket to 'self' only in newer browsers. `frame-ancestors 'none'` keeps the
 * console out of other sites' frames (clickjacking an answer button).
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

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
