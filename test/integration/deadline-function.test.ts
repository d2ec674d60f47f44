import { describe, expect, inject, it } from 'vitest';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { relayEnvironment } from '../../src/config/relay-environment.ts';
import type { ConnectionDeadline } from '../../src/relay/ports/index.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { managementApiPoster } from '../../src/gateway/connection-poster.ts';
import { dynamoClient, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType } from '../support/ws-client.ts';
import type { TestSocket } from '../support/ws-client.ts';

/**
 * The deployed `deadline` function (AWS runs it from a minute rule and from the deadline queue,
 * which delivers near deadlines at their time; the local stack from an interval and timers), run
 * here against the local stack's DynamoDB and `@connections` endpoint, with its deadline index.
 */
function deadlineEnvironment() {
  return relayEnvironment({ tables: tableNames, dynamoEndpoint: inject('dynamoEndpoint'), managementEndpoint: inject('managementEndpoint') });
}

function deadlineRuntime() {
  const config = readRelayConfig(deadlineEnvironment());
  const poster = managementApiPoster({ endpoint: inject('managementEndpoint'), region: config.region, credentials: inject('managementCredentials') });
  return createRuntime({ config, dynamo: dynamoClient(), poster });
}

/** The handler module builds its default handler from the environment at load, as in Lambda. */
async function deadlineHandler(runtime: ReturnType<typeof deadlineRuntime>) {
  Object.assign(process.env, deadlineEnvironment());
  return (await import('../../functions/deadline/handler.ts')).createHandler(runtime);
}

/** What the deadline queue's event source mapping delivers: one SQS record per queued deadline. */
const queueEvent = (...deadlines: ConnectionDeadline[]) => ({
  Records: deadlines.map((deadline, index) => ({ messageId: `m${index}`, receiptHandle: `r${index}`, body: JSON.stringify(deadline), attributes: {}, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:111111111111:deadlines', awsRegion: 'us-east-1' })),
});

/** What EventBridge's minute rule delivers. */
const SCHEDULED_EVENT = { version: '0', id: 'sweep', 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date().toISOString(), resources: [], detail: {} };

/**
 * A sweep whose invocation has `budgetMs` to wait (the handler keeps 15 s of its time back): the
 * budget caps the horizon, so the sweep does not wait for other tests' deadlines.
 */
const sweepContext = (budgetMs: number) => lambdaContext('aep-deadline', 15_000 + budgetMs);

async function openConnection(name: string): Promise<{ tenant: string; socket: TestSocket; connectionId: string; runtime: ReturnType<typeof deadlineRuntime> }> {
  const tenant = uniqueName(name);
  const token = await tenantWithToken(tenant, ['consume']);
  const socket = await helloSocket({}, { token });
  const runtime = deadlineRuntime();
  const tokenId = (await runtime.tokens.listTokens(tenant))[0]!.tokenId;
  const [connectionId] = await runtime.connections.connectionsOfToken(tenant, tokenId);
  expect(connectionId).toBeDefined();
  return { tenant, socket, connectionId: connectionId!, runtime };
}

const deadlineAt = (tenant: string, connectionId: string, atMs: number): ConnectionDeadline => ({ tenant, connectionId, atMs, reason: 'token-expired' });

/** Whether the index still holds this deadline (a query around its time). */
async function indexed(runtime: ReturnType<typeof deadlineRuntime>, deadline: ConnectionDeadline): Promise<boolean> {
  return (await runtime.deadlineIndex.due(deadline.atMs, deadline.atMs)).some((found) => found.connectionId === deadline.connectionId);
}

describe('deadline function', () => {
  it('closes a queued deadline on time (waiting out the second its message may come early) with a token-expired closing frame, taking it out of the index', async () => {
    const { tenant, socket, connectionId, runtime } = await openConnection('deadline');
    const deadline = deadlineAt(tenant, connectionId, Date.now() + 700);
    await runtime.deadlineIndex.add(deadline);
    const handler = await deadlineHandler(runtime);
    await handler(queueEvent(deadline), lambdaContext('aep-deadline', 180_000));
    expect(Date.now()).toBeGreaterThanOrEqual(deadline.atMs);
    expect(await socket.next(isType('closing'))).toMatchObject({ reason: 'token-expired' });
    await socket.closed;
    expect(await runtime.connections.getConnection(tenant, connectionId)).toBeUndefined();
    expect(await indexed(runtime, deadline)).toBe(false);
  });

  it('leaves a queued deadline farther than it may wait to the sweep, closing nothing and handing nothing on', async () => {
    const { tenant, socket, connectionId, runtime } = await openConnection('deadline-far');
    const deadline = deadlineAt(tenant, connectionId, Date.now() + 3_600_000);
    await runtime.deadlineIndex.add(deadline);
    const handler = await deadlineHandler(runtime);
    await handler(queueEvent(deadline), lambdaContext('aep-deadline', 15_200));
    expect(socket.all(isType('closing'))).toEqual([]);
    expect(await runtime.connections.getConnection(tenant, connectionId)).toBeDefined();
    expect(await indexed(runtime, deadline)).toBe(true);
    await socket.close();
  });

  it('sweeps: closes each connection whose deadline falls within its horizon on time (an overdue one at once), and leaves later ones in the index', async () => {
    const overdue = await openConnection('sweep-overdue');
    const soon = await openConnection('sweep-soon');
    const later = await openConnection('sweep-later');
    const runtime = deadlineRuntime();
    // Overdue: a sweep that failed left it a minute ago. Soon: within this sweep's 3 s. Later: past it.
    const overdueDeadline = deadlineAt(overdue.tenant, overdue.connectionId, Date.now() - 60_000);
    const soonDeadline = deadlineAt(soon.tenant, soon.connectionId, Date.now() + 1_500);
    const laterDeadline = deadlineAt(later.tenant, later.connectionId, Date.now() + 600_000);
    for (const deadline of [overdueDeadline, soonDeadline, laterDeadline]) await runtime.deadlineIndex.add(deadline);
    const handler = await deadlineHandler(runtime);
    await handler(SCHEDULED_EVENT, sweepContext(3_000));
    expect(Date.now()).toBeGreaterThanOrEqual(soonDeadline.atMs);
    for (const closed of [overdue, soon]) {
      expect(await closed.socket.next(isType('closing'))).toMatchObject({ reason: 'token-expired' });
      await closed.socket.closed;
      expect(await runtime.connections.getConnection(closed.tenant, closed.connectionId)).toBeUndefined();
    }
    expect(await indexed(runtime, overdueDeadline)).toBe(false);
    expect(await indexed(runtime, soonDeadline)).toBe(false);
    expect(later.socket.all(isType('closing'))).toEqual([]);
    expect(await indexed(runtime, laterDeadline)).toBe(true);
    await later.socket.close();
  });

  it('closes a deadline once when two overlapping sweeps and its queued message all see it', async () => {
    const { tenant, socket, connectionId, runtime } = await openConnection('deadline-once');
    const deadline = deadlineAt(tenant, connectionId, Date.now() + 1_000);
    await runtime.deadlineIndex.add(deadline);
    const handler = await deadlineHandler(runtime);
    await Promise.all([handler(SCHEDULED_EVENT, sweepContext(3_000)), handler(SCHEDULED_EVENT, sweepContext(3_000)), handler(queueEvent(deadline), lambdaContext('aep-deadline', 180_000))]);
    await socket.closed;
    expect(socket.all(isType('closing'))).toHaveLength(1);
    expect(await indexed(runtime, deadline)).toBe(false);
  });

  it('takes the deadline of a connection that closed before it and closes nothing', async () => {
    const { tenant, socket, connectionId, runtime } = await openConnection('deadline-gone');
    await socket.close();
    await expect.poll(() => runtime.connections.getConnection(tenant, connectionId), { timeout: 10_000 }).toBeUndefined();
    const deadline = deadlineAt(tenant, connectionId, Date.now() + 200);
    await runtime.deadlineIndex.add(deadline);
    const handler = await deadlineHandler(runtime);
    await handler(SCHEDULED_EVENT, sweepContext(2_000));
    expect(await indexed(runtime, deadline)).toBe(false);
  });

  it('reads the index across minute partitions, earliest first, and only the range asked for', async () => {
    const runtime = deadlineRuntime();
    const tenant = uniqueName('deadline-range');
    // Deadlines four to five minutes from now (beyond any sweep's horizon while this runs), across a minute boundary.
    const minute = Math.floor(Date.now() / 60_000) + 5;
    const times = [minute * 60_000 - 1, minute * 60_000, minute * 60_000 + 30_000, minute * 60_000 + 59_999];
    const deadlines = times.map((atMs, index) => deadlineAt(tenant, `c${index}`, atMs));
    for (const deadline of [...deadlines].reverse()) await runtime.deadlineIndex.add(deadline);
    const ofTenant = (found: ConnectionDeadline[]) => found.filter((deadline) => deadline.tenant === tenant).map((deadline) => deadline.atMs);
    expect(ofTenant(await runtime.deadlineIndex.due(times[0]!, times[3]!))).toEqual(times);
    expect(ofTenant(await runtime.deadlineIndex.due(times[1]!, times[2]!))).toEqual([times[1], times[2]]);
    expect(await runtime.deadlineIndex.claim(deadlines[0]!)).toBe(true);
    expect(await runtime.deadlineIndex.claim(deadlines[0]!)).toBe(false);
    expect(ofTenant(await runtime.deadlineIndex.due(times[0]!, times[3]!))).toEqual(times.slice(1));
    for (const deadline of deadlines.slice(1)) expect(await runtime.deadlineIndex.claim(deadline)).toBe(true);
  });
});
