/**
 * Per-tenant quotas, set by the operator. Absent members fall back to the deployment's limits
 * (`RelayLimits`); `eventsPerSecond` is unlimited unless set.
 *
 * Refusals use the spec's words: `limit-exceeded` in-band on the socket, 429 on HTTP (and a
 * 429 handshake refusal for a connection over the tenant's connection quota, since no frame
 * can be sent before the socket opens).
 */
export interface TenantQuotas {
  /** Open WebSocket connections plus live SSE streams. */
  maxConnections?: number;
  maxSubscriptionsPerConnection?: number;
  /** Events in one NDJSON batch. */
  maxBatchEvents?: number;
  /** Events admitted per second across the tenant (HTTP and WebSocket). */
  eventsPerSecond?: number;
  /**
   * Days the tenant's new events are kept (and shown by history) before they expire; the
   * deployment's `AEP_RETENTION_DAYS` when absent. Events already stored keep their expiry.
   */
  retentionDays?: number;
}

export const DEFAULT_MAX_CONNECTIONS = 1000;

const MEMBERS = ['maxConnections', 'maxSubscriptionsPerConnection', 'maxBatchEvents', 'eventsPerSecond', 'retentionDays'] as const;

export function parseTenantQuotas(value: unknown): { ok: true; quotas: TenantQuotas } | { ok: false; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'quotas are an object' };
  const record = value as Record<string, unknown>;
  const quotas: TenantQuotas = {};
  for (const [key, member] of Object.entries(record)) {
    if (!(MEMBERS as readonly string[]).includes(key)) return { ok: false, reason: `unknown quota ${key}` };
    if (!Number.isSafeInteger(member) || (member as number) <= 0) return { ok: false, reason: `${key} must be a positive integer` };
    quotas[key as (typeof MEMBERS)[number]] = member as number;
  }
  return { ok: true, quotas };
}
