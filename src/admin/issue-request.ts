/**
 * The rules a new token's grant must meet, shared by the admin routes and the CLI: known
 * scopes, a non-empty agent binding when one is given, a bounded lifetime and label.
 */
import { isScope, parseScopes } from '../auth/scopes.ts';
import type { Scope } from '../auth/scopes.ts';
import type { CaptureLevel } from '../protocol/levels.ts';
import { CAPTURE_LEVELS, isCaptureLevel } from '../protocol/levels.ts';
import type { TokenGrant } from '../relay/domain/tenant.ts';
import { isOperatorName } from '../relay/identity/operator-settings.ts';
import { invalidAdminRequest } from './admin-errors.ts';
import type { IssueTokenRequest } from './admin-operations.ts';

/** Ten years: long enough for any service token, short enough to catch a unit mistake. */
export const MAX_TOKEN_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;
const MAX_AGENTS = 100;
const MAX_NAME_LENGTH = 256;

/** Checks a request and computes its grant (all but the token id); throws 400 on the first fault. */
export function grantOf(request: IssueTokenRequest, nowMs: number): Omit<TokenGrant, 'tokenId'> {
  if (request.scopes.length === 0 || !request.scopes.every(isScope)) throw invalidAdminRequest('scopes must name at least one of emit, consume, control, admin');
  const grant: Omit<TokenGrant, 'tokenId'> = { tenant: request.tenant, scopes: [...new Set(request.scopes)] };
  if (request.agents !== undefined) {
    const agents = [...new Set(request.agents)];
    if (agents.length === 0 || agents.length > MAX_AGENTS || !agents.every((agent) => typeof agent === 'string' && agent !== '' && agent.length <= MAX_NAME_LENGTH)) {
      // An empty list would read as "bound to nothing" but store as "unbound": refuse it.
      throw invalidAdminRequest(`agents must list 1 to ${MAX_AGENTS} non-empty agent names`);
    }
    grant.agents = agents;
  }
  if (request.operator !== undefined) {
    if (typeof request.operator !== 'string' || !isOperatorName(request.operator)) throw invalidAdminRequest('operator must be an operator name: 1 to 128 of letters, digits and . _ : @ -');
    grant.operator = request.operator;
  }
  if (request.expiresInSeconds !== undefined && request.expiresAtMs !== undefined) throw invalidAdminRequest('give expiresInSeconds or expiresAt, not both');
  if (request.expiresInSeconds !== undefined) {
    const seconds = request.expiresInSeconds;
    if (!Number.isSafeInteger(seconds) || seconds <= 0 || seconds > MAX_TOKEN_LIFETIME_SECONDS) {
      throw invalidAdminRequest(`expiresInSeconds must be a whole number of seconds from 1 to ${MAX_TOKEN_LIFETIME_SECONDS}`);
    }
    grant.expiresAtMs = nowMs + seconds * 1000;
  }
  if (request.expiresAtMs !== undefined) {
    if (!Number.isSafeInteger(request.expiresAtMs) || request.expiresAtMs <= nowMs) throw invalidAdminRequest('expiresAt must be in the future');
    grant.expiresAtMs = request.expiresAtMs;
  }
  if (request.maxCapture !== undefined) {
    if (!isCaptureLevel(request.maxCapture)) throw invalidAdminRequest(`maxCapture must be one of ${CAPTURE_LEVELS.join(', ')}`);
    grant.maxCapture = request.maxCapture;
  }
  if (request.label !== undefined) {
    if (typeof request.label !== 'string' || request.label.length > MAX_NAME_LENGTH) throw invalidAdminRequest(`label must be a string of at most ${MAX_NAME_LENGTH} characters`);
    if (request.label !== '') grant.label = request.label;
  }
  return grant;
}

/**
 * Reads the JSON body of `POST /admin/tokens`: `{ scopes, agents?, expiresInSeconds?, maxCapture?,
 * label?, tenant? }`, scopes as an array or a comma-separated string. The tenant is returned as
 * written; who may name which tenant is the caller's decision.
 */
export function issueRequestFromBody(body: unknown): Omit<IssueTokenRequest, 'tenant'> & { tenant?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidAdminRequest('the body is a JSON object { scopes, agents?, expiresInSeconds?, maxCapture?, label? }');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !['tenant', 'scopes', 'agents', 'operator', 'expiresInSeconds', 'maxCapture', 'label'].includes(key));
  if (unknown.length > 0) throw invalidAdminRequest(`unknown member ${unknown[0]}`);
  const scopes = scopesOf(fields.scopes);
  if (fields.agents !== undefined && (!Array.isArray(fields.agents) || !fields.agents.every((agent) => typeof agent === 'string'))) {
    throw invalidAdminRequest('agents must be an array of agent names');
  }
  if (fields.expiresInSeconds !== undefined && typeof fields.expiresInSeconds !== 'number') throw invalidAdminRequest('expiresInSeconds must be a number');
  if (fields.maxCapture !== undefined && !isCaptureLevel(fields.maxCapture)) throw invalidAdminRequest(`maxCapture must be one of ${CAPTURE_LEVELS.join(', ')}`);
  if (fields.label !== undefined && typeof fields.label !== 'string') throw invalidAdminRequest('label must be a string');
  if (fields.tenant !== undefined && typeof fields.tenant !== 'string') throw invalidAdminRequest('tenant must be a string');
  return {
    scopes,
    ...(fields.agents === undefined ? {} : { agents: fields.agents as string[] }),
    ...(fields.operator === undefined ? {} : { operator: fields.operator as string }),
    ...(fields.expiresInSeconds === undefined ? {} : { expiresInSeconds: fields.expiresInSeconds }),
    ...(fields.maxCapture === undefined ? {} : { maxCapture: fields.maxCapture as CaptureLevel }),
    ...(fields.label === undefined ? {} : { label: fields.label }),
    ...(fields.tenant === undefined ? {} : { tenant: fields.tenant }),
  };
}

function scopesOf(value: unknown): Scope[] {
  const text = typeof value === 'string' ? value : Array.isArray(value) && value.every((scope) => typeof scope === 'string') ? value.join(',') : undefined;
  const scopes = text === undefined ? undefined : parseScopes(text);
  if (scopes === undefined) throw invalidAdminRequest('scopes must name at least one of emit, consume, control, admin');
  return scopes;
}
