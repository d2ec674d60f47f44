/**
 * `functions/authorizer`: the REQUEST authorizer on the WebSocket API's `$connect` route.
 * It resolves the bearer token (the `Authorization` header, or `access_token` in the query
 * for browsers, AEP-0003 §8.1) so no anonymous connection ever opens. Its context reaches
 * every later route of the connection as `requestContext.authorizer`.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { authenticate } from '../../src/relay/authenticate.ts';
import { createRuntime } from '../../src/relay/runtime.ts';

const runtime = createRuntime(readRelayConfig(process.env));
const logger = createLogger({ service: 'aep-relay-authorizer' });

export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const headers = event.headers ?? {};
  const authorization = headers.authorization ?? headers.Authorization;
  const principal = await authenticate(runtime.tenants, {
    authorization,
    accessTokenQuery: event.queryStringParameters?.access_token,
    allowQueryToken: true,
  });
  if (principal === undefined) {
    logger.info('connection refused', { reason: 'unauthenticated', connectionId: event.requestContext?.connectionId });
    // API Gateway answers this exact message with 401 before the socket opens.
    throw new Error('Unauthorized');
  }
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
    },
  };
}
