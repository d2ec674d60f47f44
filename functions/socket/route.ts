/**
 * The socket function's routes (`$connect`, `$default`, `$disconnect`, AEP-0003 §3.5) over a
 * runtime: what `handler.ts` runs for each API Gateway event, kept apart from the module that
 * builds the deployed runtime so the local stack and the delivery simulation run it unchanged.
 */
import { principalFromAuthorizer } from '../../src/gateway/principal-from-authorizer.ts';
import type { WebSocketRouteEvent, WebSocketRouteResult } from '../../src/gateway/websocket-event.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { openConnection } from '../../src/relay/connections/connection-deadline.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';
import { dispatchMessage } from '../../src/relay/socket/dispatch.ts';
import { withinDeadline } from '../../src/relay/ports/work-deadline.ts';

/** How long `$connect` may take from the upgrade's receipt: well inside the function's timeout. */
export const CONNECT_BUDGET_MS = 15_000;
/** What a refused upgrade is told to wait before trying again. */
const CONNECT_RETRY_AFTER_SECONDS = 2;

export async function routeSocketEvent(runtime: RelayRuntime, logger: Logger, event: WebSocketRouteEvent, requestId: string): Promise<WebSocketRouteResult> {
  const { routeKey, connectionId, requestTimeEpoch } = event.requestContext;
  if (routeKey === '$connect' && event.requestContext.authorizer?.overloaded === 'true') {
    logger.warn('connection refused: the token could not be checked in time', { connectionId });
    return overloadedConnect();
  }
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
      let outcome;
      try {
        outcome = await withinDeadline(requestTimeEpoch + CONNECT_BUDGET_MS, runtime.now, () => openConnection(runtime, principal, connectionId));
      } catch (error) {
        // Overload (or a store failure) is 503 with Retry-After, never a 500 or API Gateway's
        // integration timeout; whatever the attempt wrote, its slot included, is taken back.
        log.warn('connection refused: overloaded', { error });
        await runtime.connections.removeConnection(principal.tenant, connectionId).catch((cleanup: unknown) => log.warn('could not take back a refused connection', { error: cleanup }));
        return overloadedConnect();
      }
      if (outcome !== 'open') {
        log.warn('connection refused', { reason: outcome });
        return outcome === 'limit-exceeded' ? { statusCode: 429, headers: { 'Retry-After': String(CONNECT_RETRY_AFTER_SECONDS) } } : { statusCode: 401 };
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


/** The answer to an upgrade the relay cannot take now. */
function overloadedConnect(): WebSocketRouteResult {
  return { statusCode: 503, headers: { 'Retry-After': String(CONNECT_RETRY_AFTER_SECONDS) } };
}
