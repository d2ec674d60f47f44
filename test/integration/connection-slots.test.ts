/**
 * Connection slots are leases (src/relay/connection-slots.ts): a slot whose release never
 * came (a lost `$disconnect`, a stream killed before its cleanup) is freed once the tenant
 * needs it, while slots that are still held, renewed or open, are not.
 */
import { describe, expect, it } from 'vitest';
import { RECOUNT_INTERVAL_MS, SOCKET_CHECK_MIN_AGE_MS } from '../../src/relay/connections/connection-slots.ts';
import { QuotaStore } from '../../src/store/quota-store.ts';
import { TEST_SSE_SLOT_LEASE_MS } from '../support/global-setup.ts';
import { dynamoClient, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, openSocket } from '../support/ws-client.ts';

const quotaStore = () => new QuotaStore(dynamoClient(), { tenantsTable: tableNames.tenants, connectionsTable: tableNames.connections, now: Date.now, cacheMs: 0 });

async function tenantWithOneSlot(): Promise<{ tenant: string; token: string }> {
  const tenant = uniqueName('slots');
  const token = await tenantWithToken(tenant, ['emit', 'consume']);
  expect(await quotaStore().setQuotas(tenant, { maxConnections: 1 })).toBe(true);
  return { tenant, token };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('connection slots as leases', () => {
  it('frees the slot of a stream killed before its cleanup once its lease ends', async () => {
    const { tenant, token } = await tenantWithOneSlot();
    // What a killed stream leaves: its slot taken, its lease no longer renewed.
    const now = Date.now();
    expect(await quotaStore().acquireConnection(tenant, 1, { connectionId: 'sse-killed', kind: 'stream', acquiredAtMs: now, leaseUntilMs: now + 1000 })).toBe(true);
    await expect(openSocket({ token })).rejects.toThrow(/429/);
    await sleep(Math.max(1000, RECOUNT_INTERVAL_MS) + 200);
    const socket = await helloSocket({}, { token });
    await socket.close();
  }, 20_000);

  it('frees the slot of a socket whose $disconnect was lost, as soon as the tenant needs it', async () => {
    const { tenant, token } = await tenantWithOneSlot();
    // What a lost $disconnect leaves: the slot of a connection the gateway no longer has.
    const longAgo = Date.now() - SOCKET_CHECK_MIN_AGE_MS - 1000;
    expect(await quotaStore().acquireConnection(tenant, 1, { connectionId: 'Gone0000000=', kind: 'socket', acquiredAtMs: longAgo, leaseUntilMs: longAgo + 2 * 3600_000 })).toBe(true);
    const socket = await helloSocket({}, { token });
    const leases = await quotaStore().connectionLeases(tenant);
    expect(leases.map((lease) => lease.connectionId)).not.toContain('Gone0000000=');
    expect(await quotaStore().slotCount(tenant)).toMatchObject({ count: 1 });
    await socket.close();
  });

  it('keeps the slot of a live stream past its lease: the stream renews it', async () => {
    const { tenant, token } = await tenantWithOneSlot();
    const stream = await openStream({}, { token });
    expect(stream.status).toBe(200);
    await sleep(TEST_SSE_SLOT_LEASE_MS * 2);
    await expect(openSocket({ token })).rejects.toThrow(/429/);
    expect((await quotaStore().connectionLeases(tenant)).map((lease) => lease.kind)).toEqual(['stream']);
    stream.close();
    await stream.ended.catch(() => undefined);
  }, 20_000);

  it('releases a slot once however often its connection is removed', async () => {
    const { tenant } = await tenantWithOneSlot();
    const store = quotaStore();
    const now = Date.now();
    expect(await store.acquireConnection(tenant, 1, { connectionId: 'twice', kind: 'socket', acquiredAtMs: now, leaseUntilMs: now + 60_000 })).toBe(true);
    await store.releaseConnection(tenant, 'twice');
    await store.releaseConnection(tenant, 'twice');
    expect(await store.slotCount(tenant)).toMatchObject({ count: 0 });
    expect(await store.acquireConnection(tenant, 1, { connectionId: 'next', kind: 'socket', acquiredAtMs: now, leaseUntilMs: now + 60_000 })).toBe(true);
    expect(await store.acquireConnection(tenant, 1, { connectionId: 'over', kind: 'socket', acquiredAtMs: now, leaseUntilMs: now + 60_000 })).toBe(false);
    expect((await store.connectionLeases(tenant)).map((lease) => lease.connectionId)).toEqual(['next']);
  });
});
