/**
 * The EventBridge sink through the real SDK client, injected at the boundary with its endpoint
 * on a local stand-in that speaks PutEvents (AWS JSON 1.1): CloudEvents-shaped `detail`, the
 * bus named by ARN, at most ten entries per call, and an entry the service failed resent alone.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createBridges } from '../../functions/runtime/create-bridges.ts';
import { BridgeAdmin } from '../../src/admin/bridge-admin.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { relayEnvironment } from '../../src/config/relay-environment.ts';
import type { AepEvent } from '../../src/protocol/event.ts';
import { deliverToBridges } from '../../src/relay/bridges/deliver-to-sinks.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { dynamoClient, mintId, sessionEvent, tableNames, uniqueName } from '../support/relay-fixtures.ts';

const BUS = 'arn:aws:events:eu-west-1:123456789012:event-bus/agents';

interface PutEventsCall {
  target: string;
  entries: Array<{ EventBusName: string; Source: string; DetailType: string; Detail: string }>;
}

const calls: PutEventsCall[] = [];
let throttleFirstEntryOnce = true;
const standIn = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Entries: PutEventsCall['entries'] };
    calls.push({ target: String(request.headers['x-amz-target']), entries: body.Entries });
    const throttle = throttleFirstEntryOnce && body.Entries.length > 1;
    if (throttle) throttleFirstEntryOnce = false;
    const entries = body.Entries.map((_, index) => (throttle && index === 0 ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' } : { EventId: `eb-${calls.length}-${index}` }));
    response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ FailedEntryCount: throttle ? 1 : 0, Entries: entries }));
  });
});
await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;

afterAll(() => new Promise<void>((resolve) => standIn.close(() => resolve())));

describe('EventBridge sink', () => {
  it('puts CloudEvents-shaped entries on the configured bus, ten per call, resending a throttled entry from the retry lane', async () => {
    const config = readRelayConfig({
      ...relayEnvironment({
        tables: tableNames,
        dynamoEndpoint: inject('dynamoEndpoint'),
        bridges: { sealKeyBase64: Buffer.alloc(32, 7).toString('base64'), eventBuses: [BUS], retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20 } },
      }),
    });
    const dynamo = dynamoClient();
    const eventBridge = new EventBridgeClient({ region: 'eu-west-1', endpoint, credentials: LOCAL_CREDENTIALS });
    const bridges = createBridges({ config, dynamo, now: Date.now, mintId, eventBridge });
    const tenant = uniqueName('eb');
    const { tenants } = tenantTableStores(dynamo, tableNames.tenants, Date.now);
    await tenants.ensureTenant(tenant);
    const admin = new BridgeAdmin(bridges, tenants);
    await expect(admin.setSinks(tenant, { sinks: [{ name: 'bus', kind: 'eventbridge', busArn: 'arn:aws:events:eu-west-1:999999999999:event-bus/x' }] })).rejects.toThrow('not one this deployment may put events on');
    await admin.setSinks(tenant, { sinks: [{ name: 'bus', kind: 'eventbridge', busArn: BUS, types: ['tool.*'] }] });

    const session = uniqueName('s');
    const events = Array.from({ length: 12 }, (_, seq) => sessionEvent(session, seq, { type: seq === 11 ? 'progress.status' : 'tool.requested', subject: 'Bash', data: { tool: { name: 'Bash', call_id: `t${seq}` } } }) as unknown as AepEvent);
    const reports = await deliverToBridges(
      bridges,
      events.map((event, index) => ({ recordId: String(index), tenant, raw: JSON.stringify(event), event, kind: 'event' as const })),
    );

    // The live lane: one attempt. The throttled entry, and the request after it (not tried once
    // the sink failed), go to the retry lane, which puts each on its own after its backoff.
    expect(reports).toEqual([{ tenant, sink: 'bus', kind: 'eventbridge', requests: 1, delivered: 9, retrying: 2, parked: 0 }]);
    const lettersLeft = () => bridges.deadLetters.listRedrivable(tenant, 10, Date.now() + 3_600_000);
    const deadline = Date.now() + 15_000;
    while ((calls.length < 3 || (await lettersLeft()).length > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lettersLeft()).toEqual([]);
    expect(calls.map((call) => call.target)).toEqual(['AWSEvents.PutEvents', 'AWSEvents.PutEvents', 'AWSEvents.PutEvents']);
    expect(calls.map((call) => call.entries.length)).toEqual([10, 1, 1]);
    const put = calls.flatMap((call, index) => (index === 0 ? call.entries.slice(1) : call.entries));
    expect(put.map((entry) => JSON.parse(entry.Detail).id).sort()).toEqual(events.slice(0, 11).map((event) => event.id).sort());
    const first = calls[0]?.entries[0];
    expect(first).toMatchObject({ EventBusName: BUS, Source: 'dev.aep', DetailType: 'dev.aep.tool.requested' });
    expect(JSON.parse(first?.Detail ?? '{}')).toMatchObject({ specversion: '1.0', type: 'dev.aep.tool.requested', aepsessionid: session, data: { tool: { name: 'Bash' } } });
    eventBridge.destroy();
  });
});
