/**
 * Tenant quotas set and listed through the CLI (HTTP mode, the operator's token) against the
 * running local stack, then enforced: the connection quota refuses the next WebSocket
 * handshake and SSE stream with 429, the batch quota refuses a larger batch. A tenant's own
 * admin token can read its quotas and is refused setting them.
 */
import { describe, expect, inject, it } from 'vitest';
import { tenantWithAdmin } from '../support/admin-client.ts';
import { cli } from '../support/cli-run.ts';
import { ndjson, postEvents, sessionEvent, tableNames, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, openSocket } from '../support/ws-client.ts';

describe('tenant quotas through the CLI', () => {
  it('sets, merges and shows quotas as the operator, refuses the tenant admin, and enforces them', { timeout: 90_000 }, async () => {
    // A fresh tenant: no process has read (and cached, for 30 s) its quotas before they are set.
    const { tenant, adminToken } = await tenantWithAdmin('quota-cli');
    const operator = { AEP_URL: inject('baseUrl'), AEP_ADMIN_TOKEN: inject('devToken') };
    const own = { AEP_URL: inject('baseUrl'), AEP_ADMIN_TOKEN: adminToken };

    const raise = await cli(['quotas', 'set', 'maxConnections=100000'], own);
    expect(raise.code).toBe(1);
    expect(raise.stderr).toContain('error: unauthorized');

    expect((await cli(['quotas', 'set', '--tenant', tenant, 'maxConnections=1'], operator)).code).toBe(0);
    const merged = await cli(['quotas', 'set', '--tenant', tenant, 'maxBatchEvents=2', 'retentionDays=9', '--json'], operator);
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout)).toEqual({ tenant, quotas: { maxConnections: 1, maxBatchEvents: 2, retentionDays: 9 } });
    const cleared = await cli(['quotas', 'set', '--tenant', tenant, 'retentionDays=default'], operator);
    expect(cleared.code).toBe(0);
    const shown = await cli(['quotas', 'show'], own);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('maxConnections=1');
    expect(shown.stdout).toContain('maxBatchEvents=2');
    expect(shown.stdout).not.toContain('retentionDays');
    const unknown = await cli(['quotas', 'set', '--tenant', tenant, 'maxWidgets=3'], operator);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('invalid-request');
    expect((await cli(['quotas', 'set', '--tenant', tenant, 'maxConnections=-1'], operator)).code).toBe(2);

    // Enforced: one connection, then 429 at the handshake and for a stream; batches of 2 at most.
    const first = await helloSocket({}, { token: adminToken });
    await expect(openSocket({ token: adminToken })).rejects.toThrow(/429/);
    const stream = await openStream({}, { token: adminToken });
    expect(stream.status).toBe(429);
    expect(stream.body).toMatchObject({ error: 'limit-exceeded' });
    await first.close();
    const session = uniqueName('quota-cli');
    const over = await postEvents(ndjson([0, 1, 2].map((seq) => sessionEvent(session, seq))), { contentType: 'application/x-ndjson', token: adminToken });
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: 'too-many-events' });
    expect((await postEvents(ndjson([0, 1].map((seq) => sessionEvent(session, seq))), { contentType: 'application/x-ndjson', token: adminToken })).status).toBe(202);
  });

  it('sets and shows quotas in direct mode with AWS credentials (no token), as the operator bootstraps a stack', { timeout: 60_000 }, async () => {
    const { tenant } = await tenantWithAdmin('quota-direct');
    const direct = { AEP_TENANTS_TABLE: tableNames.tenants, AEP_DYNAMODB_ENDPOINT: inject('dynamoEndpoint') };
    const set = await cli(['quotas', 'set', '--tenant', tenant, 'eventsPerSecond=50', '--json'], direct);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ tenant, quotas: { eventsPerSecond: 50 } });
    const shown = await cli(['quotas', 'show', '--tenant', tenant], direct);
    expect(shown.stdout).toContain('eventsPerSecond=50');
    expect((await cli(['quotas', 'show'], direct)).code).toBe(2);
  });
});
