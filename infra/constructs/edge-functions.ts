/**
 * Source of the CloudFront Functions (viewer request, JavaScript runtime 2.0) the
 * distribution runs. Kept as plain strings built here so the infra tests can run the very
 * code that is deployed against sample events.
 */

import { FORWARDED_AUTHORIZATION_HEADER } from '../../src/auth/bearer.ts';

/** Header the stream handler reads the viewer's bearer credentials from when they arrive through CloudFront. */
export { FORWARDED_AUTHORIZATION_HEADER };

/**
 * `/socket` → `/{stage}`. An API Gateway WebSocket endpoint serves exactly one path, the
 * stage, and refuses a handshake with anything after it (403), so the public path is
 * rewritten before CloudFront forwards the upgrade request. The query string (access_token)
 * is a separate field of the request and is left as it is.
 */
export function socketPathRewriteCode(stageName: string): string {
  return [
    'function handler(event) {',
    '  var request = event.request;',
    `  request.uri = ${JSON.stringify(`/${stageName}`)};`,
    '  return request;',
    '}',
  ].join('\n');
}

/**
 * `/stream`: origin access control signs every request to the function URL with SigV4
 * in the Authorization header, replacing the viewer's (signing behaviour `always`:
 * "CloudFront signs all origin requests, overwriting the Authorization header from the
 * viewer request if one exists", CloudFront API reference, OriginAccessControlConfig).
 * The viewer's header is copied to x-aep-authorization first, so a client that
 * authenticates with a header (rather than the access_token query) still reaches the
 * handler with its token. A viewer-supplied x-aep-authorization without an Authorization
 * header is dropped, so the only way to set it is through Authorization.
 */
export const STREAM_AUTHORIZATION_COPY_CODE = [
  'function handler(event) {',
  '  var request = event.request;',
  '  var authorization = request.headers.authorization;',
  '  if (authorization) {',
  `    request.headers[${JSON.stringify(FORWARDED_AUTHORIZATION_HEADER)}] = { value: authorization.value };`,
  '  } else {',
  `    delete request.headers[${JSON.stringify(FORWARDED_AUTHORIZATION_HEADER)}];`,
  '  }',
  '  return request;',
  '}',
].join('\n');
