/**
 * A local stack of a test's own with the fault layer enabled (`AEP_FAULTS`, `local/faults/`),
 * and what reliability tests do with it: change the fault plan, read what was injected, stop
 * and start the stream poller, post with retries, and read the log straight from its DynamoDB.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { FaultPlan } from '../../../local/faults/fault-plan.ts';
import type { ConnectionStats } from '../../../local/faults/connection-faults.ts';
import type { DynamoFaultStats } from '../../../local/faults/dynamo-faults.ts';
import type { FanoutFaultStats } from '../../../local/faults/fanout-faults.ts';
import { localTableNames } from '../../../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../../../local/local-credentials.ts';
import { LOCAL_TENANT } from '../../../local/stack.ts';
import { createDynamoClient } from '../../../src/store/dynamo-client.ts';
import { connectionTableStores } from '../../../src/store/connection-table.ts';
import type { ConnectionTableStores } from '../../../src/store/connection-table.ts';
import { EventLog } from '../../../src/store/event-log.ts';
import { ulidFactory } from '../../../src/protocol/ulid.ts';
import { sessionEvent, storedTexts } from '../../support/relay-fixtures.ts';
import { startStackProcess } from '../../support/local-stack-process.ts';
import type { StackProcess } from '../../support/local-stack-process.ts';

export const mintId = ulidFactory(Date.now, (length) => randomBytes(length));
const tables = localTableNames('aep-local');

export interface FaultReport {
  plan: FaultPlan;
  dynamo: DynamoFaultStats;
  fanout: FanoutFaultStats;
  connections: Record<string, ConnectionStats>;
  poller: { running: boolean };
}

export interface OwnStack {
  process: StackProcess;
  baseUrl: string;
  token: string;
  /** Replaces the fault plan (counters start over). */
  setFaults(plan: FaultPlan): Promise<FaultReport>;
  faults(): Promise<FaultReport>;
  stopPoller(): Promise<void>;
  startPoller(): Promise<void>;
  /** Every stored event of a session in the `local` tenant, oldest first, read from the stack's DynamoDB. */
  stored(session: string): Promise<Array<Record<string, unknown>>>;
  connections(): ConnectionTableStores;
  stop(): Promise<void>;
}

export const TEST_TOKEN = `aep_reliability_${process.pid}_devtoken`;

/** Starts a stack of this test's own: in memory unless `args` says otherwise, fault layer on (`{}`: nothing broken yet). */
export async function startOwnStack(options: { env?: Record<string, string>; args?: string[] } = {}): Promise<OwnStack> {
  const stack = await startStackProcess({
    env: { AEP_FAULTS: '{}', AEP_DEV_TOKEN: TEST_TOKEN, AEP_REPLAY_BUFFER: '10000', AEP_LOCAL_POLL_MS: '50', ...options.env },
    ...(options.args === undefined ? {} : { args: options.args }),
  });
  return ownStackOf(stack);
}

export function ownStackOf(stack: StackProcess): OwnStack {
  const dynamo = createDynamoClient({ region: 'us-east-1', endpoint: stack.dynamoEndpoint, credentials: LOCAL_CREDENTIALS, maxAttempts: 3 });
  const log = new EventLog(dynamo, { tableName: tables.events, replayBuffer: 100_000, retentionDays: 1, liveOnlySeconds: 600, now: Date.now, mintId });
  const control = async (method: string, path: string, body?: unknown): Promise<FaultReport> => {
    const response = await fetch(`${stack.baseUrl}/__faults${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const report = (await response.json()) as FaultReport;
    expect(response.status, JSON.stringify(report)).toBe(200);
    return report;
  };
  return {
    process: stack,
    baseUrl: stack.baseUrl,
    token: stack.devToken,
    setFaults: (plan) => control('PUT', '', plan),
    faults: () => control('GET', ''),
    stopPoller: async () => void (await control('POST', '/poller/stop')),
    startPoller: async () => void (await control('POST', '/poller/start')),
    stored: async (session) => (await storedTexts(log, LOCAL_TENANT, session)).map((raw) => JSON.parse(raw) as Record<string, unknown>),
    connections: () => connectionTableStores(dynamo, { tableName: tables.connections, now: Date.now, connectionLifetimeSeconds: 3600, maxPendingBytes: 256 * 1024 }),
    stop: async () => {
      dynamo.destroy();
      await stack.stop();
    },
  };
}

/** A valid session-scoped event of agent `tester` (the shared fixture builder). */
export function eventOf(session: string, seq: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return sessionEvent(session, seq, overrides);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${mintId().slice(-10).toLowerCase()}`;
}

export function ndjson(events: readonly unknown[]): string {
  return events.map((event) => JSON.stringify(event)).join('\n') + '\n';
}

export async function post(baseUrl: string, token: string, events: readonly unknown[]): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
    body: ndjson(events),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Posts events to a stack and expects all of them admitted (202). */
export async function postAccepted(stack: Pick<OwnStack, 'baseUrl' | 'token'>, events: readonly unknown[]): Promise<void> {
  const { status, body } = await post(stack.baseUrl, stack.token, events);
  expect(status, JSON.stringify(body)).toBe(202);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` until it holds, or fails with `describe()` after `timeoutMs`. */
export async function eventually(condition: () => boolean | Promise<boolean>, describe: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${describe()}`);
    await sleep(25);
  }
}
