/**
 * The SSE binding (AEP-0003 §3.3): the stream function behind a Lambda function URL in
 * response-streaming mode. HTTP APIs cannot stream responses; a function URL can, for as
 * long as the invocation lives (15 minutes at most, the function's timeout).
 *
 * The URL only accepts IAM-signed requests: CloudFront signs them through origin access
 * control (infra/constructs/edge.ts), so the public way in is the distribution, and the
 * relay's bearer token is checked by the handler on top.
 */
import { FunctionUrlAuthType, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import type { FunctionUrl, IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface RelayStreamEndpointProps {
  /** functions/stream (exported with `awslambda.streamifyResponse`). */
  handler: IFunction;
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
    });
  }
}
