/**
 * Control policy rules name tokens by lineage (`TokenGrant.lineage`: the id a token was first
 * issued with, which rotation hands on), because the routing check matches the sender's
 * lineage (`route-command.ts`). A rule written with a rotated token's current id would then
 * never match: so, when a policy is set, each exact id of a rotated token is rewritten to its
 * lineage. Ids of tokens never rotated are their lineage already; prefix patterns (`tok_01J*`)
 * and unknown ids are kept as written.
 */
import type { ControlPolicy } from '../relay/domain/control-policy.ts';
import type { TokenRecord } from '../relay/domain/tenant.ts';

export function policyNamingLineages(policy: ControlPolicy, tokens: readonly Pick<TokenRecord, 'tokenId' | 'lineage'>[]): ControlPolicy {
  const lineageOf = new Map(tokens.flatMap((token) => (token.lineage === undefined || token.lineage === token.tokenId ? [] : [[token.tokenId, token.lineage] as const])));
  if (lineageOf.size === 0) return policy;
  return {
    ...policy,
    rules: policy.rules.map((rule) => (rule.tokens === undefined ? rule : { ...rule, tokens: [...new Set(rule.tokens.map((pattern) => lineageOf.get(pattern) ?? pattern))] })),
  };
}
