/**
 * The SSE binding (AEP-0003 §3.3): the stream function behind a Lambda function URL in
 * response-streaming mode. HTTP APIs cannot stream responses; a function URL can, for as
 * long as the invocation lives (15 minutes at most, the function's timeout).
 *
 * The URL only accepts IAM-signed requests: CloudFront signs them through origin access
 * control (infra/constructs/edge.ts), so the public way in is the distribution, and the
 * relay's bearer token is checked by the handler on top.
 */
import { Duration } from 'aws-cdk-lib';
import { FunctionUrlAuthType, HttpMethod, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import type { FunctionUrl, IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from './cors-rules.ts';

export interface RelayStreamEndpointProps {
  /** functions/stream (exported with `awslambda.streamifyResponse`). */
  handler: IFunction;
  /**
   * Origins a browser may open the stream from. Lambda then answers preflights and puts the
   * CORS headers on every response through the URL, over any the function sets (Lambda
   * Developer Guide, "Cross-origin resource sharing (CORS)").
   * @default none: no CORS configuration
   */
  corsOrigins?: readonly string[];
}

export class RelayStreamEndpoint extends Construct {
  public readonly url: FunctionUrl;

  constructor(scope: Construct, id: string, props: RelayStreamEndpointProps) {
    super(scope, id);
    this.url = props.handler.addFunctionUrl({
      // Origin access control requires AWS_IAM on the URL (CloudFront Developer Guide,
      // "Restrict access to an AWS Lambda function URL origin").
      authType: FunctionUrlAuthType.AWS_IAM,
      // Bytes reach the client as the handler writes them, instead of after it returns.
      invokeMode: InvokeMode.RESPONSE_STREAM,
      ...(props.corsOrigins === undefined || props.corsOrigins.length === 0
        ? {}
        : {
            cors: {
              allowedOrigins: [...props.corsOrigins],
              allowedMethods: [HttpMethod.GET, HttpMethod.HEAD],
              allowedHeaders: [...CORS_ALLOWED_HEADERS],
              exposedHeaders: [...CORS_EXPOSED_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }),
    });
  }
}
