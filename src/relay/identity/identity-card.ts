/**
 * Verifying a hello's identity card (AEP-0003 §8.3): a JWS over a JSON document in the A2A
 * AgentCard shape with the claims `agent`, `operator`, `endpoints`, `accepts`, `valid_until`,
 * signed by the operator's key. §8.3 leaves the schema to a multi-tenant relay; this is what
 * this relay takes (docs/security-and-isolation.md "Identity cards"):
 *
 * - `identity.card` is a compact JWS (`header.payload.signature`), or a detached one:
 *   `{ "jws": "header..signature", "payload": "<the card's JSON text>" }` (RFC 7515 Appendix F:
 *   the payload travels beside the signature, byte for byte as signed).
 * - The protected header's `typ` is the card's media type, `aep-card+jws` (RFC 7515 §4.1.9:
 *   compared as a media type, so case-insensitively and with `application/` implied), so no
 *   other JWS an operator key signs (an ID token, say) passes for a card.
 * - The payload is a JSON object: `agent` (string), `operator` (string), `accepts` (array of
 *   control types), `valid_until` (RFC 3339 time), `aud` (a string or an array of strings, RFC
 *   7519 §4.1.3), `endpoints` (any, not checked); other members are ignored.
 * - The signature verifies under a key of the operator the payload names, registered with the
 *   tenant; `agent` equals the hello's `identity.agent`; `accepts` covers every type the hello
 *   declares in `capabilities.control.accepts`; `aud` names the tenant (a card is for one
 *   tenant, and a copy shown to another does not verify); `valid_until` is in the future and
 *   no further than the tenant's bound (a card is not a credential for ever).
 *
 * Signature checking is `jose`'s; nothing here touches key material itself.
 */
import { base64url, calculateJwkThumbprint, compactVerify, createLocalJWKSet, errors, exportJWK } from 'jose';
import type { JsonObject, JsonValue } from '../../protocol/event.ts';
import type { OperatorKeys } from './operator-keys.ts';
import type { TrustedOperator } from '../ports/operators.ts';
import type { VerifiedStanding } from '../domain/verified-standing.ts';

/** Signature algorithms a card may use (asymmetric only: a card is verified with public keys). */
export const CARD_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'RS256', 'PS256'];

/** The card's media type, as its protected header's `typ` names it (`npm run card` writes it). */
export const CARD_TYPE = 'aep-card+jws';

export type CardOutcome = { ok: true; verification: VerifiedStanding } | { ok: false; reason: string };

export interface CardContext {
  /** The hello's `identity.agent`. */
  agent: unknown;
  /** The hello's `capabilities.control.accepts`, as declared. */
  declaredAccepts: unknown;
  nowMs: number;
  /** The tenant's operator of this name, if registered. */
  operatorNamed: (name: string) => Promise<TrustedOperator | undefined>;
  keysOf: (operator: TrustedOperator) => Promise<OperatorKeys>;
  /** Set for a token bound to an operator: a card of any other operator is refused. */
  boundOperator?: string;
  /** The tenant the hello is for: the card's `aud` must name it. */
  tenant: string;
  /** How far past `nowMs` the card's `valid_until` may lie (the tenant's `cardMaxLifetimeSeconds`). */
  maxLifetimeMs: number;
}

/** Whether the hello carries a card at all (`null`, as in AEP-0003 §4's example, is none). */
export function hasCard(identity: JsonObject): boolean {
  return identity.card !== undefined && identity.card !== null;
}

export async function verifyCard(card: JsonValue, context: CardContext): Promise<CardOutcome> {
  const compact = compactFormOf(card);
  if (typeof compact !== 'string') return fail(compact.reason);
  const claims = unverifiedClaims(compact);
  if (typeof claims === 'string') return fail(claims);
  const operatorName = claims.operator;
  if (typeof operatorName !== 'string' || operatorName === '') return fail('its payload has no "operator" claim');
  if (context.boundOperator !== undefined && operatorName !== context.boundOperator) {
    return fail(`this token is bound to operator ${JSON.stringify(context.boundOperator)}; the card is ${JSON.stringify(operatorName)}'s`);
  }
  const operator = await context.operatorNamed(operatorName);
  if (operator === undefined) return fail(`operator ${JSON.stringify(operatorName)} is not one this tenant trusts`);
  const keys = await context.keysOf(operator);
  if (!keys.ok) return fail(`operator ${JSON.stringify(operatorName)}: ${keys.reason}`);
  let verified;
  try {
    verified = await compactVerify(compact, createLocalJWKSet(keys.keySet), { algorithms: CARD_ALGORITHMS });
  } catch (error) {
    return fail(`its signature does not verify under operator ${JSON.stringify(operatorName)}'s keys (${joseReason(error)})`);
  }
  if (!isCardType(verified.protectedHeader.typ)) return fail(`its protected header's "typ" is ${JSON.stringify(verified.protectedHeader.typ ?? null)}, not "${CARD_TYPE}"`);
  // The claims were read before verifying only to pick the operator; they are the signed ones now.
  if (typeof claims.agent !== 'string' || claims.agent !== context.agent) {
    return fail(`its "agent" ${JSON.stringify(claims.agent)} is not the hello's identity.agent ${JSON.stringify(context.agent)}`);
  }
  const accepts = claims.accepts ?? [];
  if (!Array.isArray(accepts) || !accepts.every((type) => typeof type === 'string')) return fail('its "accepts" is not an array of control types');
  const declared = Array.isArray(context.declaredAccepts) ? context.declaredAccepts : [];
  const uncovered = declared.find((type) => !accepts.includes(type as string));
  if (uncovered !== undefined) return fail(`the hello declares control.accepts ${JSON.stringify(uncovered)}, which the card's "accepts" does not cover`);
  const untilMs = typeof claims.valid_until === 'string' && RFC3339.test(claims.valid_until) ? Date.parse(claims.valid_until) : Number.NaN;
  if (!Number.isFinite(untilMs)) return fail('its "valid_until" is not an RFC 3339 time');
  if (untilMs <= context.nowMs) return fail(`it expired at ${claims.valid_until as string}`);
  if (untilMs > context.nowMs + context.maxLifetimeMs) {
    return fail(`its "valid_until" ${claims.valid_until as string} is further off than this tenant takes: cards valid for at most ${context.maxLifetimeMs / 1000} s`);
  }
  const audience = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (!Array.isArray(audience) || !audience.every((member) => typeof member === 'string')) return fail(`it has no "aud" (a string or an array of strings) naming this tenant ${JSON.stringify(context.tenant)}`);
  if (!audience.includes(context.tenant)) return fail(`its "aud" ${JSON.stringify(claims.aud)} does not name this tenant ${JSON.stringify(context.tenant)}`);
  // Which key verified it, so the standing ends when the operator no longer holds that key.
  const key = await calculateJwkThumbprint(await exportJWK(verified.key));
  return { ok: true, verification: { operator: operatorName, key, untilMs } };
}

/** RFC 7515 §4.1.9: `typ` is a media type (case-insensitive), `application/` implied when it has no `/`. */
function isCardType(typ: unknown): boolean {
  if (typeof typ !== 'string') return false;
  const type = typ.toLowerCase();
  return (type.includes('/') ? type : `application/${type}`) === `application/${CARD_TYPE}`;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The card as one compact JWS: a detached card has its payload put back in (base64url of the text as sent). */
function compactFormOf(card: JsonValue): string | { reason: string } {
  if (typeof card === 'string') {
    if (card.split('.').length !== 3) return { reason: 'it is not a compact JWS (header.payload.signature)' };
    if (card.split('.')[1] === '') return { reason: 'its payload is detached: send { "jws": "header..signature", "payload": "<card JSON text>" }' };
    return card;
  }
  if (typeof card === 'object' && card !== null && !Array.isArray(card)) {
    const { jws, payload } = card as JsonObject;
    if (typeof jws !== 'string' || typeof payload !== 'string') return { reason: 'a detached card is { "jws": "header..signature", "payload": "<card JSON text>" }' };
    const parts = jws.split('.');
    if (parts.length !== 3 || parts[1] !== '') return { reason: 'a detached card\'s "jws" is "header..signature" (an empty payload segment)' };
    return `${parts[0]}.${base64url.encode(payload)}.${parts[2]}`;
  }
  return { reason: 'identity.card is a compact JWS string or a detached { "jws", "payload" } object' };
}

function unverifiedClaims(compact: string): JsonObject | string {
  try {
    const payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(compact.split('.')[1] as string))) as unknown;
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'its payload is not a JSON object';
    return payload as JsonObject;
  } catch {
    return 'its payload is not base64url-encoded JSON';
  }
}

function joseReason(error: unknown): string {
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature mismatch';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key of the set matches its header';
  if (error instanceof errors.JOSEAlgNotAllowed) return `algorithm not accepted; use one of ${CARD_ALGORITHMS.join(', ')}`;
  if (error instanceof errors.JOSEError) return error.code;
  return 'malformed';
}

function fail(reason: string): CardOutcome {
  return { ok: false, reason };
}
