/**
 * The replay handoff's parking on DynamoDB Local: a subscription indexed under several entries
 * (two type segments here) flips to live in one transaction, and not at all when any entry had
 * more parked than the handoff delivered; parking answers why it refused (space, or live).
 */
import { describe, expect, it } from 'vitest';
import { connectionTableStores } from '../../src/store/connection-table.ts';
import type { NewSubscription } from '../../src/relay/domain/subscription.ts';
import { dynamoClient, sessionEvent, tableNames, uniqueName } from '../support/relay-fixtures.ts';

/** A consumer connection holding one recorded (replaying) subscription, on stores with this parking space. */
async function subscribedConnection(maxPendingBytes: number, subscription: NewSubscription) {
  const stores = connectionTableStores(dynamoClient(), { tableName: tableNames.connections, now: Date.now, connectionLifetimeSeconds: 600, maxPendingBytes });
  const tenant = uniqueName('park');
  const connection = uniqueName('c');
  await stores.connections.createConnection(tenant, connection, { tenant, tokenId: 't', scopes: ['consume'] });
  expect(await stores.subscriptions.addSubscription(tenant, connection, subscription, 10)).toBe(true);
  return { stores, tenant, connection };
}

describe('parking store', () => {
  it('flips every entry of a subscription together, only when none has more parked than was drained', async () => {
    // Room for one event: the second is refused for space.
    const { stores, tenant, connection } = await subscribedConnection(10, { subscriptionId: 's', filter: JSON.stringify({ type: ['tool.*', 'progress.*'] }), typeSegments: ['tool', 'progress'] });
    const entries = async () => stores.subscriptions.subscriptionEntries(tenant, connection, 's');
    const [first, second] = await entries();
    expect([first?.state, second?.state]).toEqual(['replaying', 'replaying']);
    const raw = JSON.stringify(sessionEvent('s', 1, { type: 'tool.call' }));
    expect(await stores.parking.parkPending(first!, { raw, late: true })).toBe('parked');
    expect(await stores.parking.parkPending(first!, { raw })).toBe('full');

    // The handoff saw nothing parked on either: refused, and neither entry flipped.
    expect(await stores.parking.goLive([{ subscription: first!, drained: 0 }, { subscription: second!, drained: 0 }])).toBe(false);
    expect((await entries()).map((entry) => entry.state)).toEqual(['replaying', 'replaying']);
    expect((await entries()).flatMap((entry) => entry.pending)).toEqual([{ raw, late: true }]);

    // Having delivered it: both flip, and the parked list is gone.
    expect(await stores.parking.goLive([{ subscription: first!, drained: 1 }, { subscription: second!, drained: 0 }])).toBe(true);
    expect((await entries()).map((entry) => [entry.state, entry.pending.length])).toEqual([
      ['live', 0],
      ['live', 0],
    ]);
    // Live now: fan-out delivers instead of parking.
    expect(await stores.parking.parkPending(second!, { raw, redelivery: true })).toBe('not-replaying');
  });
});

describe('parking store: a subscription whose connection went away meanwhile', () => {
  it('does not create its entries again when the handoff flips them', async () => {
    const { stores, tenant, connection } = await subscribedConnection(10_000, { subscriptionId: 's', filter: JSON.stringify({ session: 'x' }), sessions: ['x'] });
    const [entry] = await stores.subscriptions.subscriptionEntries(tenant, connection, 's');
    // `$disconnect` removes the connection and its index entries before the handoff flips.
    await stores.connections.removeConnection(tenant, connection);
    expect(await stores.parking.goLive([{ subscription: entry!, drained: 0 }])).toBe(false);
    expect(await stores.subscriptions.subscriptionsFor(tenant, ['x'])).toEqual([]);
  });
});
