/**
 * Builders and clients shared by integration tests: unique events, HTTP posting, tenants and
 * tokens written straight into the stack's DynamoDB Local, and direct reads of the log.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { hashTokenSecret, mintTokenSecret } from '../../src/auth/token-secret.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import type { CaptureLevel } from '../../src/protocol/levels.ts';
import { ulidFactory } from '../../src/protocol/ulid.ts';
import { CapacityMeter } from '../../src/store/capacity-meter.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { EventLog } from '../../src/store/event-log.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { localTableNames } from '../../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';

export const mintId = ulidFactory(Date.now, (length) => randomBytes(length));
export const tableNames = localTableNames('aep-local');

/** A name no other test uses, for sessions, agents and tenants. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${mintId().slice(-10).toLowerCase()}`;
}

export interface EventOverrides {
  [attribute: string]: unknown;
}

/** A valid session-scoped event (seq 0 by default). */
export function sessionEvent(session: string, seq: number, overrides: EventOverrides = {}): Record<string, unknown> {
  return {
    aep: '0.1',
    id: mintId(),
    type: 'progress.status',
    time: new Date().toISOString(),
    source: `aep://test/agent/tester/session/${session}`,
    agent: 'tester',
    session,
    seq,
    ...overrides,
  };
}

export function dynamoClient(meter?: CapacityMeter) {
  return createDynamoClient({ region: 'us-east-1', endpoint: inject('dynamoEndpoint'), credentials: LOCAL_CREDENTIALS, ...(meter === undefined ? {} : { meter }) });
}

export function eventLog(options: { meter?: CapacityMeter; replayBuffer?: number; tableName?: string } = {}): EventLog {
  return new EventLog(dynamoClient(options.meter), {
    tableName: options.tableName ?? tableNames.events,
    replayBuffer: options.replayBuffer ?? inject('replayBuffer'),
    retentionDays: 1,
    liveOnlySeconds: 600,
    now: Date.now,
    mintId,
  });
}

/** Creates a tenant with a token of the given scopes; returns the token secret. */
export async function tenantWithToken(tenant: string, scopes: Scope[], extra: { agents?: string[]; expiresAtMs?: number; maxCapture?: CaptureLevel } = {}): Promise<string> {
  const { tenants, tokens } = tenantTableStores(dynamoClient(), tableNames.tenants, Date.now);
  await tenants.ensureTenant(tenant);
  const secret = mintTokenSecret();
  await tokens.putToken({ tenant, tokenId: `tok-${mintId().toLowerCase()}`, scopes, ...extra }, hashTokenSecret(secret));
  return secret;
}

export interface PostOptions {
  token?: string;
  contentType?: string;
  version?: string | null;
  /** Another stack than the shared one (tests that start their own). */
  baseUrl?: string;
}

export async function postEvents(body: string, options: PostOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  const token = options.token ?? inject('devToken');
  if (token !== '') headers.authorization = `Bearer ${token}`;
  if (options.version !== null) headers['aep-version'] = options.version ?? '0.1';
  return fetch(`${options.baseUrl ?? inject('baseUrl')}/events`, { method: 'POST', headers, body });
}

export function ndjson(events: readonly unknown[]): string {
  return events.map((event) => JSON.stringify(event)).join('\n') + '\n';
}

/** Every stored event of a session, oldest first, as parsed JSON. */
export async function storedEvents(tenant: string, session: string): Promise<Array<Record<string, unknown>>> {
  return (await storedTexts(eventLog(), tenant, session)).map((raw) => JSON.parse(raw) as Record<string, unknown>);
}

/**
 * Every stored event text of a session in `(epoch, seq)` order: what the log holds, read page by
 * page (replay would leave out what fan-out has not finished with yet).
 */
export async function storedTexts(log: Pick<EventLog, 'readAfter'>, tenant: string, session: string): Promise<string[]> {
  const texts: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await log.readAfter(tenant, session, undefined, 1000, cursor);
    texts.push(...page.items.map((item) => item.raw));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return texts;
}
