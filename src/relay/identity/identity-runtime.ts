/** What verifying identity cards needs at run time: the tenants' trusted operators and their keys. */
import type { AddressRule } from '../bridges/sink-address.ts';
import type { OperatorsPort } from '../ports/operators.ts';
import type { OperatorKeyCache } from './operator-keys.ts';

export interface IdentityRuntime {
  operators: OperatorsPort;
  /** Inline keys as stored; fetched ones cached per process (`operator-keys.ts`). */
  keys: OperatorKeyCache;
  /** Which addresses a key set URL may name: the sinks' rule (loopback in the local stack only). */
  addresses: AddressRule;
}
