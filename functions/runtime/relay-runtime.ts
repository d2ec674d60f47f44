/**
 * What the composition root builds once per process (`create-runtime.ts`): every port, and the
 * per-process state some use cases keep. Entry points hand each use case only what it picks
 * from it; nothing under `src/relay` sees this type.
 */
import type { IdentityProvidersPort, ProviderClientPort } from '../../src/auth/oidc/sign-in-ports.ts';
import type { BridgeRuntime } from '../../src/relay/bridges/bridge-runtime.ts';
import type { PushRuntime } from './create-push.ts';
import type { KnownClaims } from '../../src/relay/control/known-claims.ts';
import type { KnownOwners } from '../../src/relay/control/session-ownership.ts';
import type { RefusedTokens } from '../../src/relay/connections/refused-tokens.ts';
import type { DeliveryLanesPort } from '../../src/relay/fanout/delivery-lanes-port.ts';
import type { IdentityRuntime } from '../../src/relay/identity/identity-runtime.ts';
import type { EventAllowance } from '../../src/relay/ingest/event-allowance.ts';
import type { RelayPorts } from '../../src/relay/ports/relay-ports.ts';
import type { FrameBudgets } from '../../src/relay/socket/frame-budget.ts';

export interface RelayRuntime extends RelayPorts {
  /** Session owners this process already settled. */
  knownOwners: KnownOwners;
  /** Runs a batch's extra delivery lanes (`fanout/delivery-lanes.ts`); absent, fan-out delivers every lane itself. */
  deliveryLanes?: DeliveryLanesPort;
  /** Claims this process already recorded (`fanout/session-claims.ts`). */
  knownClaims: KnownClaims;
  /** Each WebSocket connection's frame budget in this process (`socket/frame-budget.ts`). */
  frameBudgets: FrameBudgets;
  /** The tenants' events-per-second allowance this process claimed (`ingest/event-allowance.ts`). */
  eventAllowance: EventAllowance;
  /** Token digests this process found unknown, revoked or expired (`connections/refused-tokens.ts`). */
  refusedTokens: RefusedTokens;
  /** AEP-0005 bridges: the tenants' sinks, their dead letters, and how requests reach them. */
  bridges: BridgeRuntime;
  /** Web Push for attention requests: subscriptions, the VAPID-signing transport, the lane's circuits. */
  push: PushRuntime;
  /** Identity cards (AEP-0003 §8.3): the operators each tenant trusts, and their keys. */
  identity: IdentityRuntime;
  /** Team sign-in (OpenID Connect): the tenants' provider settings and sign-ins in flight, and the providers themselves. */
  teamSignIn: { providers: IdentityProvidersPort; client: ProviderClientPort };
}
