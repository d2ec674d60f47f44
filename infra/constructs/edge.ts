/**
 * One base URL for every binding. API Gateway cannot put a WebSocket API and an HTTP API on
 * one custom domain, and the SSE stream lives on a function URL, so a CloudFront
 * distribution fronts all three origins and routes by path (DESIGN.md, "Shape"):
 *
 *   /events, /.well-known/aep, /healthz, /admin/*, default  -> HTTP API
 *   /stream                                                  -> function URL (origin access control)
 *   /socket, /socket/                                        -> WebSocket API, path rewritten to /{stage}
 *
 * Nothing is cached: every response is per tenant and per token. Every viewer header but
 * Host and every query string reach the origins (API Gateway and Lambda URLs route by
 * their own Host): Authorization, access_token, AEP-Version, Content-Type and the
 * WebSocket handshake headers (Sec-WebSocket-Key/Version/Extensions/Protocol).
 *
 * The HTTP API and WebSocket API origins get the origin secret as a custom header
 * (`x-aep-origin-verify`, src/auth/origin-verify.ts), which their handlers require: the
 * execute-api endpoints are public, and without it a caller could go around the distribution
 * and any web ACL on it. The stream origin needs none: its URL takes only requests this
 * distribution signed (origin access control).
 */
import { Duration } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  FunctionUrlOriginAccessControl,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  SecurityPolicyProtocol,
  Signing,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { BehaviorOptions, IOrigin } from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin, HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { CLOUDFRONT_NAME_LENGTHS, accountUniqueName } from './account-unique-name.ts';
import { EDGE_BEHAVIOURS, SOCKET_PATH } from './edge-behaviours.ts';
import type { EdgeOrigin, ViewerRequestFunctionName } from './edge-behaviours.ts';
import { STREAM_AUTHORIZATION_COPY_CODE, socketPathRewriteCode } from './edge-functions.ts';
import { ORIGIN_VERIFY_HEADER } from '../../src/auth/origin-verify.ts';

export { SOCKET_PATH, STREAM_PATH } from './edge-behaviours.ts';

/**
 * CloudFront drops an origin connection that sends nothing for this long, so the SSE
 * stream must send a heartbeat more often. 60 s is within the default quota for origin
 * response timeouts (CloudFront Developer Guide, "Response timeout"; higher needs an
 * increase).
 */
export const STREAM_ORIGIN_READ_TIMEOUT = Duration.seconds(60);

export interface RelayEdgeProps {
  /** The HTTP API host (`{apiId}.execute-api.{region}.amazonaws.com`), served at its `$default` stage. */
  httpApiDomainName: string;
  /** The WebSocket API host. */
  webSocketDomainName: string;
  /** The WebSocket stage name, the one path the WebSocket endpoint accepts. */
  webSocketStageName: string;
  /** The stream function's URL (AWS_IAM, RESPONSE_STREAM). */
  streamUrl: IFunctionUrl;
  /** The origin secret (a dynamic reference, infra/constructs/origin-secret.ts) sent to the HTTP and WebSocket APIs. */
  originSecretValue: string;
  /** Custom domain and its certificate (ACM, us-east-1); the cloudfront.net name otherwise. */
  domainName?: string;
  certificate?: ICertificate;
  /** A WAFv2 web ACL ARN (scope CLOUDFRONT). */
  webAclArn?: string;
  comment?: string;
}

export class RelayEdge extends Construct {
  public readonly distribution: Distribution;
  /** The host clients use: the custom domain, or the distribution's cloudfront.net name. */
  public readonly domainName: string;
  /** Rewrites `/socket` to the WebSocket stage path. */
  public readonly socketPathRewrite: EdgeFunction;
  /** Copies the viewer's Authorization to x-aep-authorization before OAC signs `/stream`. */
  public readonly streamAuthorizationCopy: EdgeFunction;

  constructor(scope: Construct, id: string, props: RelayEdgeProps) {
    super(scope, id);
    if ((props.domainName === undefined) !== (props.certificate === undefined)) {
      throw new Error('RelayEdge: domainName and certificate go together');
    }
    const customHeaders = { [ORIGIN_VERIFY_HEADER]: props.originSecretValue };
    const httpOrigin = new HttpOrigin(props.httpApiDomainName, { protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY, customHeaders });
    const webSocketOrigin = new HttpOrigin(props.webSocketDomainName, { protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY, customHeaders });
    // `always`: the URL accepts only signed requests, and `no-override` would leave every
    // request that carries the viewer's bearer token unsigned (refused). `always-amz-auth`,
    // which signs in another header, is only for Lambda web function origins
    // (aws-cdk-lib SigningBehavior.ALWAYS_AMZ_AUTH). Hence the Authorization copy below.
    const originAccessControl = new FunctionUrlOriginAccessControl(this, 'StreamAccessControl', {
      originAccessControlName: accountUniqueName(this, 'StreamAccessControl', CLOUDFRONT_NAME_LENGTHS.originAccessControl),
      description: 'Signs CloudFront requests to the AEP relay stream function URL',
      signing: Signing.SIGV4_ALWAYS,
    });
    // Adds the resource policy statements CloudFront needs on the function, scoped to this
    // distribution: lambda:InvokeFunctionUrl and, since the October 2025 dual-auth change
    // (Lambda Developer Guide, "Control access to function URLs"), lambda:InvokeFunction
    // with lambda:InvokedViaFunctionUrl. aws-cdk-lib 2.276 adds both (aws/aws-cdk#35872).
    const streamOrigin = FunctionUrlOrigin.withOriginAccessControl(props.streamUrl, {
      originAccessControl,
      readTimeout: STREAM_ORIGIN_READ_TIMEOUT,
    });

    this.socketPathRewrite = new EdgeFunction(this, 'SocketPathRewrite', {
      comment: `AEP relay: ${SOCKET_PATH} to the WebSocket stage /${props.webSocketStageName}`,
      code: FunctionCode.fromInline(socketPathRewriteCode(props.webSocketStageName)),
      runtime: FunctionRuntime.JS_2_0,
    });
    this.streamAuthorizationCopy = new EdgeFunction(this, 'StreamAuthorizationCopy', {
      comment: 'AEP relay: keep the viewer Authorization header past origin access control signing',
      code: FunctionCode.fromInline(STREAM_AUTHORIZATION_COPY_CODE),
      runtime: FunctionRuntime.JS_2_0,
    });

    const origins: Record<EdgeOrigin, { origin: IOrigin; methods: AllowedMethods }> = {
      http: { origin: httpOrigin, methods: AllowedMethods.ALLOW_ALL },
      // GET only (and OPTIONS, for CORS preflights the function URL answers): POST through
      // OAC to a function URL needs a body hash the client would have to compute
      // (CloudFront Developer Guide, "Restrict access to an AWS Lambda function URL
      // origin"); ingest is on the HTTP API.
      stream: { origin: streamOrigin, methods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS },
      socket: { origin: webSocketOrigin, methods: AllowedMethods.ALLOW_GET_HEAD },
    };
    const viewerRequestFunctions: Record<ViewerRequestFunctionName, EdgeFunction> = {
      streamAuthorizationCopy: this.streamAuthorizationCopy,
      socketPathRewrite: this.socketPathRewrite,
    };
    // The routing table is shared with the local gateway's edge (edge-behaviours.ts).
    const behaviourOf = (origin: EdgeOrigin, viewerRequest?: ViewerRequestFunctionName): BehaviorOptions =>
      behaviour(
        origins[origin].origin,
        origins[origin].methods,
        viewerRequest === undefined ? undefined : [{ function: viewerRequestFunctions[viewerRequest], eventType: FunctionEventType.VIEWER_REQUEST }],
      );
    this.distribution = new Distribution(this, 'Distribution', {
      comment: props.comment ?? 'AEP relay',
      defaultBehavior: behaviourOf('http'),
      additionalBehaviors: Object.fromEntries(EDGE_BEHAVIOURS.map((entry) => [entry.pathPattern, behaviourOf(entry.origin, entry.viewerRequest)])),
      ...(props.domainName === undefined || props.certificate === undefined
        ? {}
        : { domainNames: [props.domainName], certificate: props.certificate, minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021 }),
      ...(props.webAclArn === undefined ? {} : { webAclId: props.webAclArn }),
    });
    this.domainName = props.domainName ?? this.distribution.domainName;
  }
}

function behaviour(origin: IOrigin, allowedMethods: AllowedMethods, functionAssociations?: BehaviorOptions['functionAssociations']): BehaviorOptions {
  return {
    origin,
    allowedMethods,
    // HTTPS only, no redirect: a client configured with http:// fails at once instead of
    // having sent its token in clear before being redirected.
    viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
    cachePolicy: CachePolicy.CACHING_DISABLED,
    // With caching disabled this policy also forwards Authorization (AWS re:Post Knowledge
    // Center, "cloudfront-authorization-header": "if caching is disabled, you can use the
    // AllViewer and AllViewerExceptHostHeader origin request policies to forward an
    // Authorization header"). Host is left out because API Gateway and Lambda URLs route by it.
    originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
    // SSE must not be held back for compression; JSON answers are small.
    compress: false,
    ...(functionAssociations === undefined ? {} : { functionAssociations }),
  };
}
