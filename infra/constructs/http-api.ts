/**
 * The HTTP binding (AEP-0003 §3.2 emit, §3.4 discovery), the health probe and the admin
 * routes: an API Gateway HTTP API whose routes all go to the http function. POST ingest
 * lives here, not on the function URL, because origin access control on a function URL
 * needs a signed body for POST (DESIGN.md, "AWS facts").
 */
import { Fn } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import type { HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** The routes the http function serves, method and path, as API Gateway matches them. */
export const HTTP_ROUTES: ReadonlyArray<{ method: HttpMethod; path: string }> = [
  { method: HttpMethod.POST, path: '/events' },
  { method: HttpMethod.GET, path: '/events' },
  { method: HttpMethod.GET, path: '/.well-known/aep' },
  { method: HttpMethod.GET, path: '/healthz' },
  { method: HttpMethod.GET, path: '/history' },
  { method: HttpMethod.GET, path: '/sessions' },
  { method: HttpMethod.ANY, path: '/admin/{proxy+}' },
];

/** The path prefixes CloudFront sends to this API (besides its default behaviour). */
export const HTTP_PATH_PATTERNS = ['/events', '/.well-known/aep', '/healthz', '/admin/*'] as const;

export interface RelayHttpApiProps {
  /** functions/http. */
  handler: IFunction;
  /** Access logs (HTTP APIs write them with a service-linked role; no account setup). */
  accessLogGroup: ILogGroup;
}

export class RelayHttpApi extends Construct {
  public readonly api: HttpApi;
  public readonly stage: HttpStage;
  public readonly routes: readonly HttpRoute[];

  constructor(scope: Construct, id: string, props: RelayHttpApiProps) {
    super(scope, id);
    // The stage is declared rather than created by HttpApi so it can carry access logs.
    this.api = new HttpApi(this, 'Api', { description: 'AEP relay HTTP binding', createDefaultStage: false });
    this.stage = new HttpStage(this, 'Stage', {
      httpApi: this.api,
      // `$default`: served at the root, so /events on CloudFront is /events on the API.
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new LogGroupLogDestination(props.accessLogGroup) },
    });
    const integration = new HttpLambdaIntegration('Http', props.handler);
    this.routes = HTTP_ROUTES.flatMap(({ method, path }) => this.api.addRoutes({ path, methods: [method], integration }));
  }

  /** The execute-api host, as a CloudFront origin takes it. */
  get domainName(): string {
    return Fn.parseDomainName(this.api.apiEndpoint);
  }
}
