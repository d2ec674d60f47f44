/**
 * Finds the bearer token of a request: an `Authorization: Bearer` header (AEP-0003 §8.1), or,
 * where the binding allows it (GET streams and the WebSocket handshake, for browsers that
 * cannot set headers), the `access_token` query parameter. The token is returned to the
 * caller only; nothing here logs it.
 *
 * Only a `Bearer` value is ever a token. Behind CloudFront with origin access control the
 * stream function's `Authorization` is CloudFront's SigV4 signature, not the viewer's: such a
 * header names no token and must not hide the others, so the search goes on to the viewer's
 * header as the edge forwards it (`x-aep-authorization`) and then to the query.
 */
/** The header the edge copies the viewer's Authorization into on `/stream`, before origin access control signs the request. */
export const FORWARDED_AUTHORIZATION_HEADER = 'x-aep-authorization';

export interface BearerSources {
  /** The viewer's Authorization header as the edge forwarded it past origin access control (stream only). */
  forwardedAuthorization?: string | undefined;
  authorization?: string | undefined;
  accessTokenQuery?: string | undefined;
  allowQueryToken: boolean;
}

const BEARER = /^Bearer\s+(\S+)$/i;

export function bearerToken(sources: BearerSources): string | undefined {
  for (const header of [sources.forwardedAuthorization, sources.authorization]) {
    const token = header === undefined ? undefined : BEARER.exec(header.trim())?.[1];
    if (token !== undefined) return token;
  }
  if (sources.allowQueryToken && sources.accessTokenQuery !== undefined && sources.accessTokenQuery !== '') {
    return sources.accessTokenQuery;
  }
  return undefined;
}
