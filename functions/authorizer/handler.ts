/**
 * `functions/authorizer`: the REQUEST authorizer on the WebSocket API's `$connect` route.
 * It resolves the bearer token (the `Authorization` header, or `access_token` in the query
 * for browsers, AEP-0003 §8.1) so no anonymous connection ever opens. Its context reaches
 * every later route of the connection as `requestContext.authorizer`.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { carriesOriginSecret } from '../../src/auth/origin-verify.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createRelayMetrics } from '../../src/observability/relay-metrics.ts';
import { authenticate } from '../../src/relay/connections/authenticate.ts';
import { withinDeadline } from '../../src/relay/ports/work-deadline.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const logger = createLogger({ service: 'aep-relay-authorizer' });

/** How long the token check may take: inside the authorizer's 10 s timeout, with time to answer. */
const AUTHORIZER_BUDGET_MS = 8_000;

/** The authorizer over a runtime (the local stack injects its own; Lambda uses `handler`). */
export function createHandler(runtime: RelayRuntime) {
  return async (event: APIGatewayRequestAuthorizerEvent) => {
    try {
      return await authorize(runtime, event);
    } finally {
      runtime.metrics.flush();
    }
  };
}

async function authorize(runtime: RelayRuntime, event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const headers = event.headers ?? {};
  // A handshake that went around the edge (the WebSocket API's own execute-api URL) is denied
  // before any token is read: API Gateway answers a Deny policy with 403.
  const { originSecrets } = runtime.config;
  if (originSecrets.length > 0 && !carriesOriginSecret(headers, originSecrets)) {
    logger.info('connection refused', { reason: 'not through the edge', connectionId: event.requestContext?.connectionId });
    return { principalId: 'edge-bypass', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: event.methodArn }] } };
  }
  const authorization = headers.authorization ?? headers.Authorization;
  let authentication;
  try {
    authentication = await withinDeadline(runtime.now() + AUTHORIZER_BUDGET_MS, runtime.now, () =>
      authenticate(runtime, { authorization, accessTokenQuery: event.queryStringParameters?.access_token, allowQueryToken: true }),
    );
  } catch (error) {
    // The token could not be checked in time: `$connect` refuses the handshake with 503 and
    // Retry-After (an authorizer's own failure would reach the client as a 500). No route but
    // `$connect` ever sees this context, since `$connect` never opens such a connection.
    logger.warn('token not checked: overloaded', { error, connectionId: event.requestContext?.connectionId });
    return { principalId: 'overloaded', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }] }, context: { overloaded: 'true' } };
  }
  if (authentication === undefined || 'disabledTenant' in authentication) {
    logger.info('connection refused', { reason: authentication === undefined ? 'unauthenticated' : 'tenant disabled', connectionId: event.requestContext?.connectionId });
    // API Gateway answers this exact message with 401 before the socket opens.
    throw new Error('Unauthorized');
  }
  const { principal } = authentication;
  return {
    principalId: principal.tokenId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
    },
    context: {
      tenant: principal.tenant,
      tokenId: principal.tokenId,
      scopes: principal.scopes.join(','),
      ...(principal.agents === undefined ? {} : { agents: JSON.stringify(principal.agents) }),
      ...(principal.expiresAtMs === undefined ? {} : { expiresAt: String(principal.expiresAtMs) }),
      ...(principal.maxCapture === undefined ? {} : { maxCapture: principal.maxCapture }),
      ...(principal.lineage === undefined ? {} : { lineage: principal.lineage }),
      ...(principal.operator === undefined ? {} : { operator: principal.operator }),
      ...(principal.person === undefined ? {} : { person: JSON.stringify(principal.person) }),
    },
  };
}

const config = readRelayConfig(process.env);
export const handler = createHandler(createRuntime({ config, metrics: createRelayMetrics({ service: 'aep-relay-authorizer', namespace: config.metricsNamespace }) }));
