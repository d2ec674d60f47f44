/**
 * The HTTP binding (AEP-0003 §3.2 emit, §3.4 discovery), the health probe and the admin
 * routes: an API Gateway HTTP API whose routes all go to the http function. POST ingest
 * lives here, not on the function URL, because origin access control on a function URL
 * needs a signed body for POST (DESIGN.md, "AWS facts").
 */
import type { ThrottleLimit } from '../relay-settings.ts';
import { Duration, Fn } from 'aws-cdk-lib';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import type { HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS, HTTP_CORS_METHODS } from './cors-rules.ts';

/** The routes the http function serves, method and path, as API Gateway matches them. */
export const HTTP_ROUTES: ReadonlyArray<{ method: HttpMethod; path: string }> = [
  { method: HttpMethod.POST, path: '/events' },
  { method: HttpMethod.GET, path: '/events' },
  { method: HttpMethod.GET, path: '/.well-known/aep' },
  { method: HttpMethod.GET, path: '/healthz' },
  { method: HttpMethod.GET, path: '/history' },
  { method: HttpMethod.GET, path: '/sessions' },
  { method: HttpMethod.GET, path: '/token' },
  { method: HttpMethod.ANY, path: '/admin/{proxy+}' },
  { method: HttpMethod.ANY, path: '/signin/{proxy+}' },
  { method: HttpMethod.ANY, path: '/push/{proxy+}' },
];

/** The path prefixes CloudFront sends to this API (besides its default behaviour). */
export { HTTP_PATH_PATTERNS } from './edge-behaviours.ts';

export interface RelayHttpApiProps {
  /** functions/http. */
  handler: IFunction;
  /** Access logs (HTTP APIs write them with a service-linked role; no account setup). */
  accessLogGroup: ILogGroup;
  /**
   * Origins a browser may call the API from (emit, discovery, admin). API Gateway then answers
   * preflights itself and ignores CORS headers from the function ("Configure CORS for HTTP
   * APIs in API Gateway").
   * @default none: no CORS configuration
   */
  corsOrigins?: readonly string[];
  /** Stage throttling for every route (requests per second, burst). */
  throttle: ThrottleLimit;
}

export class RelayHttpApi extends Construct {
  public readonly api: HttpApi;
  public readonly stage: HttpStage;
  public readonly routes: readonly HttpRoute[];

  constructor(scope: Construct, id: string, props: RelayHttpApiProps) {
    super(scope, id);
    // The stage is declared rather than created by HttpApi so it can carry access logs.
    const corsOrigins = props.corsOrigins ?? [];
    this.api = new HttpApi(this, 'Api', {
      description: 'AEP relay HTTP binding',
      createDefaultStage: false,
      ...(corsOrigins.length === 0
        ? {}
        : {
            corsPreflight: {
              allowOrigins: [...corsOrigins],
              allowMethods: HTTP_CORS_METHODS.map((method) => CorsHttpMethod[method]),
              allowHeaders: [...CORS_ALLOWED_HEADERS],
              exposeHeaders: [...CORS_EXPOSED_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }),
    });
    this.stage = new HttpStage(this, 'Stage', {
      httpApi: this.api,
      // `$default`: served at the root, so /events on CloudFront is /events on the API.
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new LogGroupLogDestination(props.accessLogGroup) },
      // Past it API Gateway answers 429 itself: no invocation, no token read.
      throttle: props.throttle,
    });
    const integration = new HttpLambdaIntegration('Http', props.handler);
    this.routes = HTTP_ROUTES.flatMap(({ method, path }) => this.api.addRoutes({ path, methods: [method], integration }));
  }

  /** The execute-api host, as a CloudFront origin takes it. */
  get domainName(): string {
    return Fn.parseDomainName(this.api.apiEndpoint);
  }
}
