/**
 * The WebSocket binding (AEP-0003 §3.5): an API Gateway WebSocket API whose `$connect`
 * runs the token authorizer, and whose three routes all go to the socket function.
 */
import { Fn, Stack } from 'aws-cdk-lib';
import { CfnStage, LogGroupLogDestination, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { ThrottleLimit } from '../relay-settings.ts';
import { WebSocketLambdaAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface RelayWebSocketApiProps {
  /** Stage name; the path clients connect to is `/{stageName}` (the only path the API serves). */
  stageName: string;
  /** Resolves the bearer token on `$connect` (functions/authorizer). */
  authorizer: IFunction;
  /** Handles `$connect`, `$default` and `$disconnect` (functions/socket). */
  handler: IFunction;
  /** Principals that post to, look up or close connections through the Management API, each with the verbs it calls. */
  connectionManagers: ReadonlyArray<ConnectionManager>;
  /**
   * Access log destination, when wanted. WebSocket stages log through the account's API
   * Gateway CloudWatch role, which must exist before such a stage deploys (see RelaySettings).
   */
  accessLogGroup?: ILogGroup;
  /** Stage throttling of messages (`$default`, `$disconnect`) and, separately, of handshakes (`$connect`). */
  throttle: { messages: ThrottleLimit; connects: ThrottleLimit };
}

/**
 * The Management API's verbs (API Gateway Developer Guide, "Use @connections commands"):
 * POST sends a message (PostToConnection), GET reads a connection (GetConnection, the relay's
 * `isOpen`), DELETE closes it (DeleteConnection). src/gateway/connection-poster.ts.
 */
export type ManagementVerb = 'POST' | 'GET' | 'DELETE';

export interface ConnectionManager {
  grantee: IGrantable;
  verbs: readonly ManagementVerb[];
}

export class RelayWebSocketApi extends Construct {
  public readonly api: WebSocketApi;
  public readonly stage: WebSocketStage;

  constructor(scope: Construct, id: string, props: RelayWebSocketApiProps) {
    super(scope, id);
    // No identity sources. API Gateway invokes a REQUEST authorizer only when *every* listed
    // source is present and non-empty, answering 401 itself otherwise (API Gateway v2 API
    // reference, Authorizer.identitySource: "For a REQUEST authorizer, this is optional").
    // The relay takes the token from the Authorization header OR, for browsers that cannot
    // set headers, the access_token query (AEP-0003 §8.1), so listing either would refuse
    // the other; with none listed the authorizer always runs and refuses by itself.
    // Authorizer caching, for which identity sources are the cache key, is not supported
    // on WebSocket APIs anyway.
    const authorizer = new WebSocketLambdaAuthorizer('TokenAuthorizer', props.authorizer, { identitySource: [] });
    const integration = new WebSocketLambdaIntegration('Socket', props.handler);
    this.api = new WebSocketApi(this, 'Api', {
      description: 'AEP relay WebSocket binding',
      // An authorizer can only be attached to $connect; its context reaches every later
      // route of the connection as requestContext.authorizer.
      connectRouteOptions: { integration, authorizer },
      defaultRouteOptions: { integration },
      disconnectRouteOptions: { integration },
    });
    this.stage = new WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: props.stageName,
      autoDeploy: true,
      ...(props.accessLogGroup === undefined ? {} : { accessLogSettings: { destination: new LogGroupLogDestination(props.accessLogGroup) } }),
      throttle: props.throttle.messages,
    });
    // `$connect` gets a limit of its own: each handshake runs the authorizer and reads a token,
    // so an unauthenticated flood is cut at API Gateway (429) before it costs either. The L2
    // stage sets only the default route's throttling; route settings go on the CloudFormation stage.
    const connects = props.throttle.connects;
    (this.stage.node.defaultChild as CfnStage).addPropertyOverride('RouteSettings', { $connect: { ThrottlingRateLimit: connects.rateLimit, ThrottlingBurstLimit: connects.burstLimit } });
    // execute-api:ManageConnections on this stage's @connections/* only, and per verb
    // (`arn:…:{apiId}/{stage}/{verb}/@connections/*`): a function that only looks connections up
    // cannot post to or close them (WebSocketStage.grantManagementApiAccess would grant `*`).
    for (const manager of props.connectionManagers) {
      manager.grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['execute-api:ManageConnections'], resources: manager.verbs.map((verb) => this.connectionsArn(verb)) }));
    }
  }

  /** `arn:{partition}:execute-api:{region}:{account}:{apiId}/{stage}/{verb}/@connections/*`. */
  connectionsArn(verb: ManagementVerb): string {
    return `${Stack.of(this).formatArn({ service: 'execute-api', resource: this.api.apiId })}/${this.stage.stageName}/${verb}/@connections/*`;
  }

  /** `https://{apiId}.execute-api.{region}.amazonaws.com/{stage}`: where PostToConnection goes. */
  get managementEndpoint(): string {
    return this.stage.callbackUrl;
  }

  /** The execute-api host, as a CloudFront origin takes it. */
  get domainName(): string {
    return Fn.parseDomainName(this.api.apiEndpoint);
  }
}
