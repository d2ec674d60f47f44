/**
 * The socket function's routes (`$connect`, `$default`, `$disconnect`, AEP-0003 §3.5) over a
 * runtime: what `handler.ts` runs for each API Gateway event, kept apart from the module that
 * builds the deployed runtime so the local stack and the delivery simulation run it unchanged.
 */
import { principalFromAuthorizer } from '../../src/gateway/principal-from-authorizer.ts';
import type { WebSocketRouteEvent, WebSocketRouteResult } from '../../src/gateway/websocket-event.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { openConnection } from '../../src/relay/connection-deadline.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';
import { dispatchMessage } from '../../src/relay/socket/dispatch.ts';

export async function routeSocketEvent(runtime: RelayRuntime, logger: Logger, event: WebSocketRouteEvent, requestId: string): Promise<WebSocketRouteResult> {
  const { routeKey, connectionId, requestTimeEpoch } = event.requestContext;
  const principal = principalFromAuthorizer(event.requestContext.authorizer);
  if (principal === undefined) {
    // Only reachable if the route were deployed without the authorizer: refuse, never open anonymously.
    logger.warn('route without authorizer context', { routeKey, connectionId });
    return { statusCode: 401 };
  }
  const log = logger.child({ tenant: principal.tenant, connectionId, requestId });
  switch (routeKey) {
    case '$connect': {
      // No frame can be sent before the socket opens, so a refusal is the handshake's status.
      const outcome = await openConnection(runtime, principal, connectionId);
      if (outcome !== 'open') {
        log.warn('connection refused', { reason: outcome });
        return { statusCode: outcome === 'limit-exceeded' ? 429 : 401 };
      }
      log.info('connected');
      return { statusCode: 200 };
    }
    case '$disconnect':
      await runtime.connections.removeConnection(principal.tenant, connectionId);
      runtime.frameBudgets.forget(connectionId);
      // Counted here, not in removeConnection: fan-out also removes connections it finds gone.
      runtime.metrics.count('SocketsClosed', principal.tenant);
      log.info('disconnected', { code: event.requestContext.disconnectStatusCode });
      return { statusCode: 200 };
    default: {
      const isBinary = event.isBase64Encoded;
      await dispatchMessage({ runtime, logger: log, principal, connectionId, receivedAtMs: requestTimeEpoch, requestId }, event.body ?? '', isBinary);
      return { statusCode: 200 };
    }
  }
}

