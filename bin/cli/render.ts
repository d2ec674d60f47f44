/** The CLI's human-readable output: one fact per line, secrets only where they are issued. */
import type { IssuedToken, QuotasView, RotatedToken, TenantStateChange, TenantView, TokenRevocation, TokenView } from '../../src/admin/admin-operations.ts';
import type { ControlPolicy } from '../../src/relay/domain/control-policy.ts';

/** Printed (to stderr) with every issued secret. */
export const SECRET_WARNING = 'warning: this token is shown once and is not stored (only its SHA-256 digest is); keep it now';

export function tenantLines(tenants: readonly TenantView[]): string[] {
  if (tenants.length === 0) return ['no tenants'];
  const width = Math.max(...tenants.map((tenant) => tenant.tenant.length));
  return tenants.map(
    (tenant) => `${tenant.tenant.padEnd(width)}  ${tenant.disabled ? 'disabled' : 'enabled '}  created ${tenant.createdAt}${tenant.hasControlPolicy ? '  control policy set' : ''}`,
  );
}

export function tenantStateLines(change: TenantStateChange, unreachableHint: string): string[] {
  if (!change.disabled) return [change.changed ? `enabled tenant ${change.tenant}` : `tenant ${change.tenant} was already enabled; nothing to do`];
  return [
    change.changed ? `disabled tenant ${change.tenant}: its tokens are refused from now on` : `tenant ${change.tenant} was already disabled; its tokens stay refused`,
    ...endedLines(change.connectionsClosed, change.streamsEnded, unreachableHint),
  ];
}

export function tokenLines(tokens: readonly TokenView[]): string[] {
  if (tokens.length === 0) return ['no tokens'];
  const width = Math.max(...tokens.map((token) => token.tokenId.length));
  return tokens.map((token) =>
    [
      token.tokenId.padEnd(width),
      token.status.padEnd(7),
      token.scopes.join(','),
      ...(token.agents === undefined ? [] : [`agents=${token.agents.join(',')}`]),
      ...(token.expiresAt === undefined ? [] : [`expires=${token.expiresAt}`]),
      ...(token.maxCapture === undefined || token.maxCapture === 'full' ? [] : [`maxCapture=${token.maxCapture}`]),
      ...(token.lineage === undefined || token.lineage === token.tokenId ? [] : [`lineage=${token.lineage}`]),
      ...(token.revokedAt === undefined ? [] : [`revoked=${token.revokedAt}`]),
      ...(token.label === undefined ? [] : [`label=${JSON.stringify(token.label)}`]),
    ].join('  '),
  );
}

export function issuedLines(issued: IssuedToken): string[] {
  return [
    ...(issued.tenantCreated === true ? [`created tenant ${issued.tenant}`] : []),
    `issued ${issued.tokenId} for tenant ${issued.tenant}`,
    `  scopes:  ${issued.scopes.join(',')}`,
    ...(issued.agents === undefined ? [] : [`  agents:  ${issued.agents.join(',')}`]),
    ...(issued.expiresAt === undefined ? [] : [`  expires: ${issued.expiresAt}`]),
    `  capture: at most ${issued.maxCapture ?? 'full'}`,
    ...(issued.lineage === undefined || issued.lineage === issued.tokenId ? [] : [`  lineage: ${issued.lineage} (control policy rules name it so)`]),
    ...(issued.label === undefined ? [] : [`  label:   ${issued.label}`]),
    `token: ${issued.token}`,
  ];
}

export function rotatedLines(rotated: RotatedToken, unreachableHint: string): string[] {
  return [`rotated ${rotated.replaces} -> ${rotated.tokenId}; ${rotated.replaces} is revoked`, ...endedLines(rotated.connectionsClosed, rotated.streamsEnded, unreachableHint), ...issuedLines(rotated)];
}

export function revokedLines(revocation: TokenRevocation, unreachableHint: string): string[] {
  const name = `${revocation.tokenId}${revocation.tenant === '' ? '' : ` of tenant ${revocation.tenant}`}`;
  return [
    revocation.alreadyRevoked ? `${name} was already revoked; nothing to do` : `revoked ${name}`,
    ...endedLines(revocation.connectionsClosed, revocation.streamsEnded, unreachableHint, revocation.alreadyRevoked),
    ...revocation.alsoRevoked.map((other) => `also revoked ${other} (issued by it)`),
  ];
}

/** A revocation that found the token revoked and reached nothing more: exit 3 ("nothing to do"). */
export function revocationChangedNothing(revocation: TokenRevocation): boolean {
  return revocation.alreadyRevoked && !revocation.connectionsClosed && revocation.streamsEnded === 0 && revocation.alsoRevoked.length === 0;
}

export function policyLines(policy: ControlPolicy): string[] {
  return JSON.stringify(policy, null, 2).split('\n');
}

export function policySetLines(tenant: string, policy: ControlPolicy): string[] {
  const rules = policy.rules.length === 1 ? '1 rule' : `${policy.rules.length} rules`;
  return [`control policy${tenant === '' ? '' : ` of ${tenant}`} set: ${rules}, default ${policy.default}`];
}

/**
 * What happened to open connections, sockets and streams counted apart: a socket is closed by the
 * call; a stream is told and ends itself within one poll. Quiet about zeros when nothing changed.
 */
function endedLines(sockets: number | null, streams: number, unreachableHint: string, quietWhenNone = false): string[] {
  const lines: string[] = [];
  if (sockets === null) {
    if (!quietWhenNone) lines.push(`note: ${unreachableHint}`);
  }
  else if (sockets > 0 || !quietWhenNone) lines.push(`closed ${sockets} open WebSocket connection${sockets === 1 ? '' : 's'}`);
  if (streams > 0 || (!quietWhenNone && sockets !== null)) lines.push(`told ${streams} open SSE stream${streams === 1 ? '' : 's'} to end (within one poll)`);
  return lines;
}

/** One line per quota the operator set; the others are the deployment's limits. */
export function quotaLines(view: QuotasView): string[] {
  const set = Object.entries(view.quotas);
  if (set.length === 0) return [`tenant ${view.tenant} has no quotas set: the deployment's limits apply`];
  return [`quotas of tenant ${view.tenant} (others: the deployment's limits):`, ...set.map(([name, value]) => `  ${name}=${String(value)}`)];
}
