/**
 * Cross-origin access for browser dashboards served from another origin: which origins may
 * call the relay (a deployment setting, none by default), and what they may send and read.
 * Plain data with no CDK import: the stack configures API Gateway and the function URL with
 * it, and the local gateway emulates both with the same values (local/gateway/cors.ts).
 */

/** What a browser client sends beyond the CORS-safelisted headers. */
export const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'aep-version', 'last-event-id'] as const;

/** Response headers a browser script may read: a refusal's Retry-After (quota, stream cap). */
export const CORS_EXPOSED_HEADERS = ['retry-after'] as const;

/**
 * HTTP API methods a cross-origin dashboard uses: GET (discovery, history, sessions) and POST
 * (emit), with OPTIONS for the preflight. No PUT, PATCH or DELETE: those are admin verbs, and the
 * admin belongs to the console, which is same-origin (served by the relay's own distribution). API
 * Gateway applies one CORS configuration to the whole API, so the methods are the only narrowing
 * it offers; a browser refuses a cross-origin request whose method the preflight did not allow.
 */
export const HTTP_CORS_METHODS = ['GET', 'POST', 'OPTIONS'] as const;

/** The stream serves GET only. */
export const STREAM_CORS_METHODS = ['GET', 'HEAD'] as const;

/** How long a browser may reuse a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * Parses a comma-separated origin list: each entry `*` or `scheme://host[:port]` with no path,
 * as the Origin header carries it. Empty or absent means no cross-origin access.
 */
export function parseCorsOrigins(text: string | undefined, name: string): string[] {
  if (text === undefined || text.trim() === '') return [];
  const origins = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const origin of origins) {
    if (origin === '*') continue;
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      throw new Error(`${name}: ${JSON.stringify(origin)} is not an origin (scheme://host[:port])`);
    }
    if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.origin !== origin) {
      throw new Error(`${name}: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path or trailing slash)`);
    }
  }
  if (origins.includes('*') && origins.length > 1) throw new Error(`${name}: * allows every origin and stands alone`);
  return origins;
}
