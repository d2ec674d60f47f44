/**
 * The operators a tenant trusts to sign identity cards (AEP-0003 §8.3), each with its key set
 * given inline (a public JWKS) or by an https URL fetched when needed (`jwks-source.ts`).
 */
export interface TrustedOperator {
  /** The name a card's `operator` claim names it by. */
  name: string;
  /** A public JWKS as JSON text (inline keys); absent when the keys are fetched from `jwksUrl`. */
  jwks?: string;
  /** Where the key set is fetched from; absent when the keys are inline. */
  jwksUrl?: string;
  updatedAtMs: number;
}

export interface OperatorsPort {
  /** The tenant's trusted operators, by name. */
  listOperators(tenant: string): Promise<TrustedOperator[]>;
  getOperator(tenant: string, name: string): Promise<TrustedOperator | undefined>;
  /** Adds or replaces one operator. */
  putOperator(tenant: string, operator: TrustedOperator): Promise<void>;
  /** Removes one operator; false when there was none of that name. */
  deleteOperator(tenant: string, name: string): Promise<boolean>;
}

/** What fetching a key set URL gave: the body and its `Cache-Control` max-age, or why it failed. */
export type JwksFetch = { ok: true; body: string; maxAgeSeconds?: number } | { ok: false; reason: string };

/** Fetches a JWKS URL under the deployment's address rules (`gateway/jwks-fetcher.ts`). */
export type JwksFetcher = (url: string) => Promise<JwksFetch>;
