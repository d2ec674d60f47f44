/**
 * What an agent-bound token may say about identity. AEP 0.1 takes `agent` and
 * `source` as asserted names (AEP-0001 §12, AEP-0003 §8.2); a tenant that hands each agent its
 * own bound token wants those names to hold, so for a bound principal the relay checks them
 * against the token's agents. Pure: no reads, the token's agents travel with the principal.
 *
 * Source rule: a bound token's `source` must be an `aep://` URI in the recommended form
 * (AEP-0001 §5.1 #6, `aep://{host}/agent/{agent}/...`) whose agent segment, percent-decoded,
 * is one of the token's agents. Without it a bound token could write under another agent's
 * `(source, id)` dedupe key and have that agent's real event dropped as a duplicate.
 */
import type { Principal } from '../../auth/principal.ts';

/** The agent segment of an `aep://{host}/agent/{agent}[/...]` source, or undefined when it has none. */
export function sourceAgentOf(source: string): string | undefined {
  const match = /^aep:\/\/[^/?#]*\/agent\/([^/?#]+)(?:[/?#]|$)/i.exec(source);
  if (match === null) return undefined;
  try {
    return decodeURIComponent(match[1] as string);
  } catch {
    return undefined;
  }
}

/** Why a bound principal may not emit under this `agent` and `source`, or undefined when it may. */
export function emitIdentityRefusal(principal: Principal, identity: { agent: string; source: string }): string | undefined {
  const agents = principal.agents;
  if (agents === undefined) return undefined;
  if (!agents.includes(identity.agent)) return `this token may not emit as agent ${JSON.stringify(identity.agent)}`;
  const sourceAgent = sourceAgentOf(identity.source);
  if (sourceAgent === undefined || !agents.includes(sourceAgent)) {
    return `this token is bound to agents ${JSON.stringify(agents)}: its source must be aep://{host}/agent/{one of them}/... (got ${JSON.stringify(identity.source)})`;
  }
  return undefined;
}

/**
 * Why a bound principal's hello may not declare this identity, or undefined when it may
 * (AEP-0003 §4 rule 3: `identity.agent` names the agent of the events the connection sends).
 * A bound emitter must name one of its agents; a bound consumer may omit it, but may not name
 * another agent (the roster would advertise it).
 */
export function helloIdentityRefusal(principal: Principal, role: string, identityAgent: unknown): string | undefined {
  const agents = principal.agents;
  if (agents === undefined) return undefined;
  if (identityAgent === undefined && role === 'consumer') return undefined;
  if (typeof identityAgent !== 'string' || !agents.includes(identityAgent)) {
    return `this token is bound to agents ${JSON.stringify(agents)}; hello identity.agent must be one of them`;
  }
  return undefined;
}
