/**
 * Runs the `$connect` REQUEST authorizer the way API Gateway does and turns its outcome into
 * either the context every route event of the connection carries, or the HTTP status that
 * refuses the handshake: a thrown `Unauthorized` answers 401, a policy that does not allow
 * `execute-api:Invoke` on the method ARN answers 403, any other failure (including a context
 * value that is not a string, number or boolean) answers 500.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Statement } from 'aws-lambda';
import type { RelayAuthorizerContext } from '../../src/gateway/websocket-event.ts';
import type { WebSocketAuthorizerEvent } from './websocket-events.ts';

/** The relay's authorizer handler (`functions/authorizer`). */
export type WebSocketAuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

/** Allowed, with the flattened context; or refused, with the handshake's HTTP status. */
export type AuthorizerVerdict =
  | { allowed: true; authorizer: RelayAuthorizerContext }
  | { allowed: false; statusCode: 401 | 403 | 500; message: string };

export async function runAuthorizer(handler: WebSocketAuthorizerHandler, event: WebSocketAuthorizerEvent): Promise<AuthorizerVerdict> {
  let result: APIGatewayAuthorizerResult;
  try {
    // @types/aws-lambda models the REST API authorizer input; the WebSocket one lacks its path fields.
    result = await handler(event as unknown as APIGatewayRequestAuthorizerEvent);
  } catch (error) {
    // API Gateway answers 401 only for the exact `Unauthorized` error; anything else is an authorizer failure (500).
    if (error instanceof Error && error.message === 'Unauthorized') return { allowed: false, statusCode: 401, message: 'Unauthorized' };
    return { allowed: false, statusCode: 500, message: 'Internal Server Error' };
  }
  if (result === null || typeof result !== 'object' || typeof result.principalId !== 'string' || !policyAllows(result.policyDocument?.Statement ?? [], event.methodArn)) {
    return { allowed: false, statusCode: 403, message: 'Forbidden' };
  }
  const authorizer: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(result.context ?? {})) {
    // API Gateway rejects non-scalar context values (AuthorizerConfigurationException, 500).
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      return { allowed: false, statusCode: 500, message: 'Internal Server Error' };
    }
    authorizer[key] = value;
  }
  authorizer.principalId = result.principalId;
  return { allowed: true, authorizer: authorizer as RelayAuthorizerContext };
}

/** IAM-style evaluation: an explicit Deny wins, otherwise some Allow must match action and resource. */
export function policyAllows(statements: Statement[], methodArn: string): boolean {
  let allowed = false;
  for (const statement of statements) {
    if (!actionMatches(statement) || !resourceMatches(statement, methodArn)) continue;
    if (statement.Effect === 'Deny') return false;
    if (statement.Effect === 'Allow') allowed = true;
  }
  return allowed;
}

function actionMatches(statement: Statement): boolean {
  if (!('Action' in statement)) return false;
  return asList(statement.Action).some((action) => globMatches(action.toLowerCase(), 'execute-api:invoke'));
}

function resourceMatches(statement: Statement, methodArn: string): boolean {
  if (!('Resource' in statement) || statement.Resource === undefined) return false;
  return asList(statement.Resource).some((resource) => globMatches(resource, methodArn));
}

function asList(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}

/** IAM wildcards: `*` any run of characters, `?` one character. */
function globMatches(pattern: string, value: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(value);
}
