/**
 * Finds the bearer token of a request: the `Authorization: Bearer` header, or, where the
 * binding allows it (GET streams and the WebSocket handshake, for browsers that cannot set
 * headers: AEP-0003 §8.1), the `access_token` query parameter. The token is returned to the
 * caller only; nothing here logs it.
 */
export interface BearerSources {
  authorization?: string | undefined;
  accessTokenQuery?: string | undefined;
  allowQueryToken: boolean;
}

export function bearerToken(sources: BearerSources): string | undefined {
  const header = sources.authorization?.trim();
  if (header !== undefined && header !== '') {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    return match?.[1];
  }
  if (sources.allowQueryToken && sources.accessTokenQuery !== undefined && sources.accessTokenQuery !== '') {
    return sources.accessTokenQuery;
  }
  return undefined;
}
