/**
 * The local CloudFront: routes each viewer request by the distribution's behaviour table
 * (infra/constructs/edge-behaviours.ts), runs the viewer-request function the stack deploys
 * on it (infra/constructs/edge-functions.ts, the same source), and, on its way to the stream
 * function URL, signs it the way origin access control does: the `Authorization` the handler
 * sees is a SigV4 signature, never the viewer's header (signing behaviour `always`).
 *
 * The signature only looks like SigV4 (nothing local verifies it); what matters is that the
 * handler is handed what it is handed in the cloud. On its way to the HTTP API and the WebSocket
 * API it adds the origin secret header, as the distribution's origin custom header does
 * (src/auth/origin-verify.ts), replacing any a viewer sent.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { behaviourFor } from '../../infra/constructs/edge-behaviours.ts';
import type { EdgeOrigin, ViewerRequestFunctionName } from '../../infra/constructs/edge-behaviours.ts';
import { STREAM_AUTHORIZATION_COPY_CODE, socketPathRewriteCode } from '../../infra/constructs/edge-functions.ts';
import { ORIGIN_VERIFY_HEADER } from '../../src/auth/origin-verify.ts';
import { applyRequest, compileViewerRequestFunction, isResponse, viewerRequestEvent } from './cloudfront-function.ts';
import type { CloudFrontResponse, ViewerRequestHandler } from './cloudfront-function.ts';

/** Where a viewer request goes after the edge: an origin and the URL it asks that origin for, or the function's own answer. */
export type EdgeDecision = { origin: EdgeOrigin; url: URL } | { response: CloudFrontResponse };

export interface LocalEdge {
  /** Applies the edge to the request in place (URL, headers) and says where it goes. */
  route(request: IncomingMessage, url: URL): EdgeDecision;
}

/** The SHA-256 of an empty body, which CloudFront sends as x-amz-content-sha256 for a GET. */
const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export interface LocalEdgeOptions {
  stageName: string;
  region: string;
  /** The origin secret added to requests for the HTTP and WebSocket APIs; none, no header. */
  originSecret?: string;
}

export function createLocalEdge(options: LocalEdgeOptions): LocalEdge {
  const functions: Record<ViewerRequestFunctionName, ViewerRequestHandler> = {
    streamAuthorizationCopy: compileViewerRequestFunction(STREAM_AUTHORIZATION_COPY_CODE),
    socketPathRewrite: compileViewerRequestFunction(socketPathRewriteCode(options.stageName)),
  };
  // A key of the local "CloudFront", so signatures differ per request as real ones do.
  const signingKey = randomBytes(32);
  return {
    route(request, url) {
      const behaviour = behaviourFor(url.pathname);
      let routed = url;
      if (behaviour.viewerRequest !== undefined) {
        const result = functions[behaviour.viewerRequest](viewerRequestEvent(request, url));
        if (isResponse(result)) return { response: result };
        routed = applyRequest(request, result);
      }
      if (behaviour.origin === 'stream') signLikeOriginAccessControl(request, routed, signingKey, options.region);
      else if (options.originSecret !== undefined) setHeader(request, ORIGIN_VERIFY_HEADER, options.originSecret);
      return { origin: behaviour.origin, url: routed };
    },
  };
}

/** Overwrites Authorization with a SigV4-shaped signature for service `lambda`, as OAC does on every origin request. */
function signLikeOriginAccessControl(request: IncomingMessage, url: URL, key: Buffer, region: string): void {
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const scope = `${amzDate.slice(0, 8)}/${region}/lambda/aws4_request`;
  const signature = createHmac('sha256', key).update(`${request.method ?? 'GET'}\n${url.pathname}\n${url.search}\n${amzDate}`).digest('hex');
  const signed: Record<string, string> = {
    authorization: `AWS4-HMAC-SHA256 Credential=ASIALOCALCLOUDFRONT/${scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${signature}`,
    'x-amz-date': amzDate,
    'x-amz-content-sha256': EMPTY_BODY_SHA256,
  };
  for (const [name, value] of Object.entries(signed)) setHeader(request, name, value);
}

/** Sets a header in both of Node's views of the request, replacing every viewer header of the same name (any case). */
function setHeader(request: IncomingMessage, name: string, value: string): void {
  request.headers[name] = value;
  const kept: string[] = [];
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const header = request.rawHeaders[index] as string;
    if (header.toLowerCase() !== name) kept.push(header, request.rawHeaders[index + 1] as string);
  }
  kept.push(name, value);
  request.rawHeaders.splice(0, request.rawHeaders.length, ...kept);
}
