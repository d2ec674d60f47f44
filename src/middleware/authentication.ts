/**
 * Authenticates an HTTP request once, before its route runs, and leaves the result on the
 * request's context (`context.authentication`) for the route to require. A request without
 * credentials passes through unauthenticated: routes that need a principal refuse it (401),
 * and routes that do not (health, discovery) serve it.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { BearerSources } from '../auth/bearer.ts';
import type { Principal } from '../auth/principal.ts';
import { authenticate, requireAuthentication } from '../relay/connections/authenticate.ts';
import type { Authentication, DisabledTenantCredentials, TokenAuthority } from '../relay/connections/authenticate.ts';

/** The Lambda context of an authenticated HTTP route. */
export interface AuthenticatedContext extends Context {
  authentication?: Authentication | DisabledTenantCredentials;
}

export interface AuthenticationOptions {
  authority: TokenAuthority;
  /** Where this request's credentials may come from (whether the query token is allowed, which header). */
  credentialsOf: (event: APIGatewayProxyEventV2) => BearerSources;
}

export function authentication(options: AuthenticationOptions): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, AuthenticatedContext> {
  return {
    before: async (request) => {
      const found = await authenticate(options.authority, options.credentialsOf(request.event));
      if (found !== undefined) request.context.authentication = found;
    },
  };
}

/** The request's principal, or the 401 the binding answers when it has none (AEP-0003 §8.1). */
export function requirePrincipal(context: AuthenticatedContext): Principal {
  return requireAuthentication(context.authentication).principal;
}
