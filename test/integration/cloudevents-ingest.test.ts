import { describe, expect, it } from 'vitest';
import { LOCAL_TENANT } from '../../local/stack.ts';
import { toCloudEvent } from '../../src/protocol/bridges/cloudevents.ts';
import type { AepEvent } from '../../src/protocol/event.ts';
import { postEvents, sessionEvent, storedEvents, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';

const CE = 'application/cloudevents+json';
const CE_BATCH = 'application/cloudevents-batch+json';

const cloudEventOf = (event: Record<string, unknown>) => toCloudEvent(event as unknown as AepEvent);

describe('POST /events with CloudEvents (AEP-0005 §2)', () => {
  it('stores a structured-mode CloudEvent as the AEP event it carries', async () => {
    const session = uniqueName('ce-single');
    const event = sessionEvent(session, 0, { type: 'tool.requested', subject: 'Bash', severity: 'notice', acmeregion: 'eu-1', data: { tool: { name: 'Bash', call_id: 't1' } } });
    const response = await postEvents(JSON.stringify(cloudEventOf(event)), { contentType: CE });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 1, stored: 1, duplicates: 0 });
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([event]);
  });

  it('stores a CloudEvents batch in order and fans it out like native events', async () => {
    const session = uniqueName('ce-batch');
    const stream = await openStream({ filter: JSON.stringify({ session }) });
    await stream.waitFor((items) => items.some((item) => item.kind === 'comment'));
    const events = Array.from({ length: 12 }, (_, seq) => sessionEvent(session, seq));
    const response = await postEvents(JSON.stringify(events.map(cloudEventOf)), { contentType: `${CE_BATCH}; charset=utf-8` });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 12, stored: 12, duplicates: 0 });
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual(events);
    await stream.waitFor((items) => items.filter((item) => item.kind === 'message').length === 12);
    expect(stream.messages().map((item) => item.json)).toEqual(events);
    stream.close();
  });

  it('dedupes a CloudEvent posted again on (source, id)', async () => {
    const session = uniqueName('ce-dupe');
    const body = JSON.stringify(cloudEventOf(sessionEvent(session, 0)));
    expect((await postEvents(body, { contentType: CE })).status).toBe(202);
    const again = await postEvents(body, { contentType: CE });
    expect(await again.json()).toEqual({ accepted: 1, stored: 0, duplicates: 1 });
    expect(await storedEvents(LOCAL_TENANT, session)).toHaveLength(1);
  });

  it('refuses a batch holding a foreign CloudEvent type at its index, storing nothing', async () => {
    const session = uniqueName('ce-foreign');
    const batch = [cloudEventOf(sessionEvent(session, 0)), { specversion: '1.0', id: 'f1', source: '/elsewhere', type: 'com.example.thing' }, cloudEventOf(sessionEvent(session, 2))];
    const response = await postEvents(JSON.stringify(batch), { contentType: CE_BATCH });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; line: number; detail: string };
    expect(body).toMatchObject({ error: 'invalid-event', line: 1 });
    expect(body.detail).toContain('AEP-0005 §2.3');
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([]);
  });

  it('refuses an earlier invalid envelope before a later unmappable CloudEvent (first failing index)', async () => {
    const session = uniqueName('ce-order');
    const batch = [cloudEventOf({ ...sessionEvent(session, 0), seq: -1 }), { specversion: '1.0', id: 'f1', source: '/x', type: 'com.example.thing' }];
    const response = await postEvents(JSON.stringify(batch), { contentType: CE_BATCH });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid-event', line: 0 });
  });

  it.each([
    ['a batch that is not an array', CE_BATCH, '{"specversion":"1.0"}'],
    ['a body that is not JSON', CE, '{not json'],
    ['another CloudEvents version', CE, JSON.stringify({ ...cloudEventOf(sessionEvent('x', 0)), specversion: '0.3' })],
    ['an empty batch', CE_BATCH, '[]'],
  ])('refuses %s with invalid-event', async (_label, contentType, body) => {
    const response = await postEvents(body, { contentType });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid-event' });
  });

  it('refuses a control command carried in a CloudEvent like a native one (AEP-0004 §4.1)', async () => {
    const session = uniqueName('ce-command');
    const command = sessionEvent(session, 0, { type: 'control.cancel', agent: 'tester' });
    delete command.seq;
    const response = await postEvents(JSON.stringify(cloudEventOf(command)), { contentType: CE });
    expect(response.status).toBe(403);
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([]);
  });

  it('holds the token to its agent binding for CloudEvents too', async () => {
    const tenant = uniqueName('ce-bound');
    const token = await tenantWithToken(tenant, ['emit'], { agents: ['allowed'] });
    const session = uniqueName('ce-bound');
    const response = await postEvents(JSON.stringify(cloudEventOf(sessionEvent(session, 0, { agent: 'someone-else' }))), { contentType: CE, token });
    expect(response.status).toBe(403);
    expect(await storedEvents(tenant, session)).toEqual([]);
  });

  it('drops an extension name AEP cannot carry and reports it', async () => {
    const session = uniqueName('ce-ext');
    const event = sessionEvent(session, 0);
    const response = await postEvents(JSON.stringify({ ...cloudEventOf(event), aep_bad: 'x', vendorext: 'kept' }), { contentType: CE });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 1, stored: 1, duplicates: 0, dropped: [{ line: 0, attributes: ['aep_bad'] }] });
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([{ ...event, vendorext: 'kept' }]);
  });

  it('still requires the AEP-Version header', async () => {
    const response = await postEvents(JSON.stringify(cloudEventOf(sessionEvent(uniqueName('ce-version'), 0))), { contentType: CE, version: null });
    expect(response.status).toBe(426);
  });
});
