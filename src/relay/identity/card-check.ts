/**
 * The hello's identity card checked against the tenant's trusted operators: what the hello
 * handler records (a verified standing) or answers (why it failed), and what the tenant's
 * policy says a failure costs (`cardFailure`). A token bound to an operator must be verified:
 * its hello without a card is refused as a failing card is.
 */
import type { Principal } from '../../auth/principal.ts';
import type { HelloFrame } from '../../protocol/client-message.ts';
import { DEFAULT_CARD_MAX_LIFETIME_SECONDS } from '../domain/control-policy.ts';
import type { CardFailure } from '../domain/control-policy.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import type { IdentityRuntime } from './identity-runtime.ts';

/** What a hello's card check reads: the tenant's policy, its trusted operators and their keys. */
export type CardCheckDeps = Pick<RelayPorts, 'controlPolicies' | 'now'> & { identity: IdentityRuntime };
import { controlPolicyOf } from '../control/tenant-control-policy.ts';
import { hasCard, verifyCard } from './identity-card.ts';
import type { VerifiedStanding } from '../domain/verified-standing.ts';

export type CardCheck = { kind: 'none' } | { kind: 'verified'; standing: VerifiedStanding; onExpiry: CardFailure } | { kind: 'failed'; reason: string; onFailure: CardFailure };

export async function checkHelloCard(runtime: CardCheckDeps, principal: Principal, hello: HelloFrame): Promise<CardCheck> {
  if (!hasCard(hello.rawIdentity)) {
    if (principal.operator === undefined) return { kind: 'none' };
    return { kind: 'failed', reason: `this token is bound to operator ${JSON.stringify(principal.operator)}, so its hello must carry that operator's card`, onFailure: 'close' };
  }
  const { tenant } = principal;
  // Read first: the tenant's bound on a card's lifetime is part of verifying it.
  const policy = await controlPolicyOf(runtime.controlPolicies, tenant);
  const outcome = await verifyCard(hello.rawIdentity.card ?? null, {
    agent: hello.rawIdentity.agent,
    declaredAccepts: declaredAcceptsOf(hello),
    nowMs: runtime.now(),
    operatorNamed: (name) => runtime.identity.operators.getOperator(tenant, name),
    keysOf: (operator) => runtime.identity.keys.keysOf(operator),
    ...(principal.operator === undefined ? {} : { boundOperator: principal.operator }),
    tenant,
    maxLifetimeMs: (policy.cardMaxLifetimeSeconds ?? DEFAULT_CARD_MAX_LIFETIME_SECONDS) * 1000,
  });
  const policyOnFailure = policy.cardFailure ?? 'continue';
  if (outcome.ok) return { kind: 'verified', standing: outcome.verification, onExpiry: policyOnFailure };
  // A token bound to an operator speaks only with that operator's card: a failing one is refused.
  return { kind: 'failed', reason: outcome.reason, onFailure: principal.operator === undefined ? policyOnFailure : 'close' };
}

function declaredAcceptsOf(hello: HelloFrame): unknown {
  const control = hello.capabilities.control;
  return typeof control === 'object' && control !== null && !Array.isArray(control) ? control.accepts : undefined;
}
