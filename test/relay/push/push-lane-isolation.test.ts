/**
 * The push lane's promise, on the real parts (subscriptions and letters in DynamoDB Local, the
 * `web-push` sender, the push service stand-in that verifies and decrypts): within a stream
 * batch every tenant's messages are sent at the same moment, so a push endpoint of tenant A that
 * never answers holds tenant B back by nothing, and A's own message leaves the batch for the retry
 * lane when the live budget (the sinks' `AEP_BRIDGE_LIVE_BUDGET_MS`) runs out; in the next batch
 * A's circuit is open and A is not even tried. Asserted by the order the stand-in saw things in
 * and by the lane's reports, never by a stopwatch. The clock the lane reads is moved by hand to
 * make a retry letter due.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpSinkPoster } from '../../../src/gateway/http-sink-poster.ts';
import { vapidKeysFromSeed } from '../../../src/gateway/vapid-keys.ts';
import { webPushSender } from '../../../src/gateway/web-push-sender.ts';
import { SinkCircuits } from '../../../src/relay/bridges/sink-circuit.ts';
import type { Deliverable } from '../../../src/relay/domain/deliverable.ts';
import { noMetrics } from '../../../src/relay/ports/metrics.ts';
import type { SinkRetryWakeUp } from '../../../src/relay/ports/sink-retry-queue.ts';
import type { AepEvent } from '../../../src/protocol/event.ts';
import { deliverPushes } from '../../../src/relay/push/deliver-pushes.ts';
import type { PushDeps } from '../../../src/relay/push/deliver-pushes.ts';
import { retryPushLetter } from '../../../src/relay/push/push-retry.ts';
import { registerPush } from '../../../src/relay/push/push-subscribers.ts';
import { DeadLetterStore } from '../../../src/store/dead-letter-store.ts';
import { PushSubscriptionStore } from '../../../src/store/push-subscription-store.ts';
import { startPushServiceStandIn } from '../../support/push-service-stand-in.ts';
import type { PushServiceStandIn } from '../../support/push-service-stand-in.ts';
import { dynamoClient, mintId, sessionEvent, tableNames, uniqueName } from '../../support/relay-fixtures.ts';

/** The sinks lane's live budget, as the lane is configured with it (a timeout, not an assertion). */
const LIVE_BUDGET_MS = 300;

let standIn: PushServiceStandIn;
let offsetMs = 0;
const now = () => Date.now() + offsetMs;
const wakeUps: Array<{ wakeUp: SinkRetryWakeUp; delaySeconds: number }> = [];
let deps: PushDeps & Parameters<typeof registerPush>[0];

beforeAll(async () => {
  standIn = await startPushServiceStandIn();
  const dynamo = dynamoClient();
  const addresses = { allowLoopback: true };
  deps = {
    subscriptions: new PushSubscriptionStore(dynamo, tableNames.tenants, now),
    transport: webPushSender({ keys: [vapidKeysFromSeed(uniqueName('seed'))], subject: 'mailto:relay@example.invalid', post: httpSinkPoster({ addresses }) }),
    metrics: noMetrics,
    now,
    consoleUrl: '/console/',
    deadLetters: new DeadLetterStore(dynamo, tableNames.tenants, now, mintId),
    retryQueue: { wake: async (batch, delaySeconds) => void wakeUps.push(...batch.map((wakeUp) => ({ wakeUp, delaySeconds }))) },
    circuits: new SinkCircuits(60_000, now),
    retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 200 },
    liveBudgetMs: LIVE_BUDGET_MS,
    requestTimeoutMs: 2_000,
    leaseMs: 10_000,
    notifiedLifetimeMs: 60_000,
    addresses,
  };
});
afterAll(async () => {
  await standIn?.close();
});

function requestOf(tenant: string, session: string, seq: number): Deliverable {
  const event = sessionEvent(session, seq, { type: 'attention.requested', data: { kind: 'input', prompt: 'p' } }) as unknown as AepEvent;
  return { recordId: mintId(), tenant, raw: JSON.stringify(event), event, kind: 'event' };
}

const principal = (tenant: string) => ({ tenant, tokenId: `tok-${tenant}`, scopes: ['consume'] as const });

describe('the push lane across tenants', () => {
  it('sends tenant B at once while tenant A\'s push service never answers, moves A to the retry lane at the budget, then skips A live', async () => {
    const tenantA = uniqueName('pa');
    const tenantB = uniqueName('pb');
    const deadName = uniqueName('never');
    const liveName = uniqueName('live');
    const dead = standIn.subscribe(deadName, 'never');
    const live = standIn.subscribe(liveName);
    const vapidKey = deps.transport.vapidKeys()[0] as string;
    const a = await registerPush(deps, principal(tenantA), { ...dead, vapidKey });
    await registerPush(deps, principal(tenantB), { ...live, vapidKey });
    const whatHappened = (name: string) => standIn.log.filter((entry) => entry.endpoint.endsWith(`/push/${name}`)).map((entry) => entry.what);
    const order = () => standIn.log.filter((entry) => entry.endpoint.endsWith(`/push/${deadName}`) || entry.endpoint.endsWith(`/push/${liveName}`)).map((entry) => `${entry.endpoint.endsWith(deadName) ? 'A' : 'B'} ${entry.what}`);

    // One batch holding A's request first, then B's.
    const first = await deliverPushes(deps, [requestOf(tenantA, uniqueName('s'), 0), requestOf(tenantB, uniqueName('s'), 0)]);
    expect(first).toEqual(
      expect.arrayContaining([
        { tenant: tenantA, subscription: a.id, sent: 0, retrying: 1, dropped: 0, gone: false },
        { tenant: tenantB, subscription: expect.any(String), sent: 1, retrying: 0, dropped: 0, gone: false },
      ]),
    );
    // B was received before A's attempt was given up: B never waited behind A.
    await standIn.waitFor(() => whatHappened(deadName).includes('abandoned'), "A's attempt abandoned");
    expect(order().indexOf('B received')).toBeGreaterThanOrEqual(0);
    expect(order().indexOf('B received')).toBeLessThan(order().indexOf('A abandoned'));
    expect(wakeUps.map(({ wakeUp }) => wakeUp)).toEqual([{ tenant: tenantA, letter: expect.any(String), lane: 'push' }]);

    // The next batch: A's circuit is open, so A is not tried live at all, and B goes out.
    const second = await deliverPushes(deps, [requestOf(tenantA, uniqueName('s'), 0), requestOf(tenantB, uniqueName('s'), 0)]);
    expect(second).toEqual(expect.arrayContaining([expect.objectContaining({ tenant: tenantA, sent: 0, retrying: 1 }), expect.objectContaining({ tenant: tenantB, sent: 1 })]));
    expect(whatHappened(deadName)).toEqual(['held', 'abandoned']);
    expect(whatHappened(liveName)).toEqual(['received', 'received']);

    // A's push service recovers; the retry worker sends both of A's letters once they are due.
    standIn.setBehaviour(deadName, 'accept');
    offsetMs += 60_000;
    const retried = await Promise.all(wakeUps.map(({ wakeUp }) => retryPushLetter(deps, wakeUp)));
    expect(retried.map((report) => report.result)).toEqual(['sent', 'sent']);
    expect(whatHappened(deadName)).toEqual(['held', 'abandoned', 'received', 'received']);
    expect(standIn.refusals).toEqual([]);
  });
});
