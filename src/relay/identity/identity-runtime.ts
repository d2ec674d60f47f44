/** What verifying identity cards needs at run time: the tenants' trusted operators, their keys, and whether a standing still holds. */
import type { AddressRule } from '../domain/outbound-address.ts';
import type { OperatorsPort } from '../ports/operators.ts';
import type { OperatorKeyCache } from './operator-keys.ts';
import type { StandingCheck } from './standing-check.ts';

export interface IdentityRuntime {
  operators: OperatorsPort;
  /** Inline keys as stored; fetched ones cached per process (`operator-keys.ts`). */
  keys: OperatorKeyCache;
  /** Whether a connection's verified standing still holds (its operator and key still trusted), briefly cached per process. */
  standings: StandingCheck;
  /** Which addresses a key set URL may name: the sinks' rule (loopback in the local stack only). */
  addresses: AddressRule;
}
