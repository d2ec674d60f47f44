/**
 * Every DynamoDB key the relay writes, composed in one place. Tenant ids are restricted
 * to `[a-z0-9-]` (see `tenant-id.ts`), so a `#` after the tenant always ends it; session
 * and agent names are producer-controlled (AEP-0001 §12) and therefore only ever appear as
 * the last component of a key, where any character is safe.
 */
import { createHash } from 'node:crypto';

/** Fixed-length digest of a source URI, so `(source, id)` fits a sort key unambiguously. */
export function sourceDigest(source: string): string {
  return createHash('sha256').update(source).digest('hex').slice(0, 24);
}

/** Sort-key prefixes of a session partition's events: sequenced (`P#`) and seq-less (`E#`). */
export const POSITIONED_PREFIX = 'P#';
export const UNPOSITIONED_PREFIX = 'E#';
/** The first string above every `P#…` key (`$` follows `#`): the positioned range's upper bound. */
export const POSITIONED_END = 'P$';
/** Order states (`O#`) and late entries (`L#`) of a session partition. */
export const ORDER_PREFIX = 'O#';
/** How far each emitter's session is known delivered (`D#`, `session-order-store.ts`). */
export const DELIVERED_PREFIX = 'D#';
export const LATE_PREFIX = 'L#';
export const LATE_END = 'L$';

export const eventKeys = {
  /** Partition of one session's history within a tenant. */
  sessionPartition: (tenant: string, session: string) => `T#${tenant}#S#${session}`,
  /** Partition of one agent's agent-scoped events (live only, never replayed). */
  agentPartition: (tenant: string, agent: string) => `T#${tenant}#A#${agent}`,
  /**
   * A sequenced event's key in its session's partition: its position and emitter
   * (`position-key.ts` `emitterKey`), so the partition itself is the history in `(epoch, seq)`
   * order and admission is one conditional put per `(source, session, epoch, seq)`.
   */
  positionSort: (emitterKey: string) => `${POSITIONED_PREFIX}${emitterKey}`,
  /** One emitter's order state in the session's partition (`session-order-store.ts`). */
  orderSort: (source: string) => `${ORDER_PREFIX}${sourceDigest(source)}`,
  /** How far one emitter's released events are known delivered (`session-order-store.ts`). */
  deliveredSort: (source: string) => `${DELIVERED_PREFIX}${sourceDigest(source)}`,
  /** A late event's entry, keyed by the release point it came under (`session-order-store.ts`). */
  lateSort: (aboveKey: string, emitterKey: string) => `${LATE_PREFIX}${aboveKey}#${emitterKey}`,
  /**
   * The dedupe key of the events that have no position (seq-less session events, keyed in their
   * session's partition with their place in an attribute; agent-scoped ones, in their agent's).
   */
  eventSort: (source: string, id: string) => `${UNPOSITIONED_PREFIX}${sourceDigest(source)}#${id}`,
  /** Redelivery markers: one short-lived item per forwarded duplicate. */
  redeliveryPartition: (tenant: string) => `T#${tenant}#R`,
  /** The tenant's registry of sessions it holds history for. */
  sessionRegistryPartition: (tenant: string) => `T#${tenant}#SESSIONS`,
  /** The owning agent of each of the tenant's sessions, sort key = the session. */
  sessionOwnersPartition: (tenant: string) => `T#${tenant}#OWNERS`,
};

export const connectionKeys = {
  /** Everything one connection owns: its record, subscriptions and claims. */
  connectionPartition: (tenant: string, connectionId: string) => `T#${tenant}#C#${connectionId}`,
  connectionRecord: 'CONN',
  subscriptionRecord: (subscriptionId: string) => `SUB#${subscriptionId}`,
  /** The connection's entry in its token's index (so revocation finds it). */
  tokenLinkRecord: 'TOKEN',
  /** Open connections and streams of one token, closed when the token is revoked. */
  tokenConnections: (tenant: string, tokenId: string) => `T#${tenant}#TOKCONN#${tokenId}`,
  claimRecord: (session: string) => `CLAIM#${session}`,
  /** Subscriptions pinned to a session, found by fan-out without scanning the tenant. */
  sessionSubscriptions: (tenant: string, session: string) => `T#${tenant}#SUBS#S#${session}`,
  /** Subscriptions not pinned to a session (read once per fan-out batch per tenant). */
  tenantSubscriptions: (tenant: string) => `T#${tenant}#SUBS#ANY`,
  /**
   * Unpinned subscriptions whose filter names types, by each type's first segment (`tool`,
   * `x`): a batch reads only the segments its events carry, however many others a tenant has.
   */
  typeSubscriptions: (tenant: string, segment: string) => `T#${tenant}#SUBS#K#${segment}`,
  subscriptionIndexSort: (connectionId: string, subscriptionId: string) => `${connectionId}#${subscriptionId}`,
  /**
   * All live claims of a tenant: the roster (AEP-0003 §4.1) reads the whole partition, routing
   * reads one session's claimants (AEP-0004 §4.5: several claims are kept, never merged).
   */
  tenantClaims: (tenant: string) => `T#${tenant}#CLAIMS`,
  /** Length-prefixed, so a session name containing `#` can never prefix-match another session's claims. */
  claimSessionPrefix: (session: string) => `${session.length}:${session}#`,
  claimIndexSort: (session: string, connectionId: string) => `${session.length}:${session}#${connectionId}`,
};

export const tenantKeys = {
  tenantPartition: (tenant: string) => `T#${tenant}`,
  tenantRecord: 'TENANT',
  tokenRecord: (tokenId: string) => `TOKEN#${tokenId}`,
  /** Under the issuer's tenant: one item per token it issued, so revocation cascades. */
  issuedPrefix: (issuerTokenId: string) => `ISSUED#${issuerTokenId}#`,
  issuedRecord: (issuerTokenId: string, tenant: string, tokenId: string) => `ISSUED#${issuerTokenId}#${tenant}#${tokenId}`,
  /** Token lookup by hash: the one key not prefixed by a tenant, since the tenant is what it finds. */
  tokenHashPartition: (tokenHash: string) => `H#${tokenHash}`,
  tokenHashSort: 'TOKEN',
  /** Registry of all tenants, for the operator's listing. */
  tenantRegistryPartition: 'TENANTS',
  /** The tenant's bridge sinks (public settings and sealed secrets), beside its tenant record. */
  bridgesRecord: 'BRIDGES',
  /** The operators the tenant trusts to sign identity cards (AEP-0003 §8.3), one item each. */
  operatorPrefix: 'OPERATOR#',
  operatorRecord: (name: string) => `OPERATOR#${name}`,
  /** The tenant's OpenID Connect provider settings (team sign-in), beside its tenant record. */
  identityProviderRecord: 'IDP',
  /** A team sign-in in flight, by the SHA-256 of its state or device handle; expires by TTL. */
  pendingSignInRecord: (digest: string) => `SIGNIN#${digest}`,
  /** The tenant's bridge dead letters, sorted by a time-ordered id. */
  deadLetterPartition: (tenant: string) => `T#${tenant}#BRIDGEDLQ`,
  /** The tenant's Web Push subscriptions and the notes of who was sent which request. */
  pushPartition: (tenant: string) => `T#${tenant}#PUSH`,
  pushSubscriptionPrefix: 'SUB#',
  pushSubscriptionRecord: (id: string) => `SUB#${id}`,
  /** A request's notes share a prefix (a digest: session and id are producer-controlled). */
  pushNotifiedPrefix: (session: string, requestId: string) => `SENT#${sourceDigest(`${session.length}:${session}#${requestId}`)}#`,
  /** Deployment-wide secrets (not tenant data): the key that signs paged-read cursors. */
  relaySecretsPartition: 'RELAY',
  cursorKeyRecord: 'CURSOR-KEY',
};

/** The tenant a partition key belongs to: every tenant-scoped key starts `T#{tenant}#`. */
export function tenantOfPartition(partition: string): string | undefined {
  if (!partition.startsWith('T#')) return undefined;
  const end = partition.indexOf('#', 2);
  return end === -1 ? undefined : partition.slice(2, end);
}

/**
 * Pending connection deadlines (connections table, `deadline-store.ts`), by the minute they fall
 * in: the deadline sweep reads the minutes it covers for every tenant at once, so this is the one
 * connections-table key not prefixed by a tenant. Each item names only which connection of which
 * tenant closes when; the sort key orders a minute's deadlines by time.
 */
export const deadlineKeys = {
  minutePartition: (minute: number) => `DEADLINES#${minute}`,
  /** `atMs` fixed-width, so the sort key orders by time and `<= through` is a key condition. */
  sort: (atMs: number, tenant: string, connectionId: string) => `${timeKey(atMs)}#${tenant}#${connectionId}`,
  /** The first sort key after every deadline at or before `atMs`. */
  sortAfter: (atMs: number) => `${timeKey(atMs)}$`,
};

function timeKey(atMs: number): string {
  return String(Math.max(0, Math.floor(atMs))).padStart(15, '0');
}
