import { describe, expect, it } from 'vitest';
import { QuotaStore } from '../../src/store/quota-store.ts';
import type { TenantQuotas } from '../../src/relay/domain/tenant-quotas.ts';
import { dynamoClient, ndjson, postEvents, sessionEvent, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType, openSocket, waitForCount } from '../support/ws-client.ts';
import { openStream } from '../support/sse-client.ts';

/** A fresh tenant whose quotas are set before any request reads them. */
async function tenantWithQuotas(quotas: TenantQuotas): Promise<string> {
  const tenant = uniqueName('quota');
  const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
  const store = new QuotaStore(dynamoClient(), { tenantsTable: tableNames.tenants, connectionsTable: tableNames.connections, now: Date.now, cacheMs: 0 });
  expect(await store.setQuotas(tenant, quotas)).toBe(true);
  return token;
}

describe('tenant quotas', () => {
  it('refuses a connection over the tenant connection quota with 429 at the handshake, counting SSE streams too', async () => {
    const token = await tenantWithQuotas({ maxConnections: 2 });
    const first = await helloSocket({}, { token });
    const second = await helloSocket({}, { token });
    await expect(openSocket({ token })).rejects.toThrow(/429/);
    const stream = await openStream({}, { token });
    expect(stream.status).toBe(429);
    expect(stream.body).toMatchObject({ error: 'limit-exceeded' });
    await first.close();
    const deadline = Date.now() + 5000;
    let third;
    while (third === undefined) {
      third = await openSocket({ token }).catch(() => undefined);
      if (third === undefined && Date.now() > deadline) throw new Error('the released slot was not reusable');
      if (third === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await third.close();
    await second.close();
  });

  it('refuses a subscription over the per-connection quota in-band with limit-exceeded and keeps the others', async () => {
    const token = await tenantWithQuotas({ maxSubscriptionsPerConnection: 2 });
    const client = await helloSocket({}, { token });
    for (const id of ['one', 'two', 'three']) client.send({ type: 'subscribe', id, filter: { session: uniqueName(id) } });
    // The three run concurrently, so which one is refused is not fixed; exactly one is.
    await waitForCount(client, (frame) => ['one', 'two', 'three'].includes(frame.id), 3);
    expect(client.all(isType('subscribed'))).toHaveLength(2);
    expect(client.all(isType('error'))).toEqual([expect.objectContaining({ code: 'limit-exceeded' })]);
    client.send({ type: 'ping', t: 1 });
    await client.next(isType('pong'));
    await client.close();
  });

  it('refuses events over the events-per-second quota: 429 on HTTP, limit-exceeded in-band on the socket', async () => {
    const token = await tenantWithQuotas({ eventsPerSecond: 3 });
    const session = uniqueName('rate');
    const batch = await postEvents(ndjson(Array.from({ length: 4 }, (_, seq) => sessionEvent(session, seq))), { contentType: 'application/x-ndjson', token });
    expect(batch.status).toBe(429);
    expect(await batch.json()).toMatchObject({ error: 'limit-exceeded' });
    const emitter = await helloSocket({ role: 'emitter', identity: { agent: 'tester' } }, { token });
    for (let seq = 0; seq < 10; seq += 1) emitter.send(sessionEvent(session, 100 + seq));
    const refusals = await waitForCount(emitter, (frame) => frame.type === 'error' && frame.code === 'limit-exceeded', 4);
    expect(refusals.every((frame) => typeof frame.cause === 'string')).toBe(true);
    await emitter.close();
  });

  it('refuses a batch over the tenant batch quota with 413 too-many-events', async () => {
    const token = await tenantWithQuotas({ maxBatchEvents: 2 });
    const session = uniqueName('batchq');
    const response = await postEvents(ndjson(Array.from({ length: 3 }, (_, seq) => sessionEvent(session, seq))), { contentType: 'application/x-ndjson', token });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: 'too-many-events' });
  });
});
