import { describe, expect, inject, it } from 'vitest';
import { CapacityMeter } from '../../src/store/capacity-meter.ts';
import { LOCAL_TENANT } from '../../local/stack.ts';
import { eventLog, mintId, ndjson, postEvents, sessionEvent, storedEvents, storedTexts, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openSocket } from '../support/ws-client.ts';

describe('POST /events', () => {
  it('accepts a single event with 202 and stores it', async () => {
    const session = uniqueName('single');
    const event = sessionEvent(session, 0);
    const response = await postEvents(JSON.stringify(event));
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 1, stored: 1, duplicates: 0 });
    expect((await storedEvents(LOCAL_TENANT, session)).map((stored) => stored.id)).toEqual([event.id]);
  });

  it('keeps batch order and stores the exact text received', async () => {
    const session = uniqueName('batch');
    const events = Array.from({ length: 30 }, (_, seq) => sessionEvent(session, seq, { extattr: `n${seq}` }));
    const response = await postEvents(ndjson(events), { contentType: 'application/x-ndjson' });
    expect(response.status).toBe(202);
    const stored = await storedEvents(LOCAL_TENANT, session);
    expect(stored.map((event) => event.seq)).toEqual(events.map((event) => event.seq));
    const raw = await storedTexts(eventLog(), LOCAL_TENANT, session);
    expect(raw).toEqual(events.map((event) => JSON.stringify(event)));
  });

  it('refuses a batch with one invalid line with 400 naming the line index, storing nothing', async () => {
    const session = uniqueName('badline');
    const events: unknown[] = [sessionEvent(session, 0), sessionEvent(session, 1), { ...sessionEvent(session, 2), seq: -1 }, sessionEvent(session, 3)];
    const response = await postEvents(ndjson(events), { contentType: 'application/x-ndjson' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; line: number; detail: string };
    expect(body.error).toBe('invalid-event');
    expect(body.line).toBe(2);
    expect(body.detail).toContain('AEP-0001 §5.1 #11');
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([]);
  });

  it('refuses a line that is not JSON with invalid-event at its index', async () => {
    const session = uniqueName('notjson');
    const body = `${JSON.stringify(sessionEvent(session, 0))}\n{not json\n`;
    const response = await postEvents(body, { contentType: 'application/x-ndjson' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid-event', line: 1 });
  });

  it('stores an event posted twice once', async () => {
    const session = uniqueName('twice');
    const text = JSON.stringify(sessionEvent(session, 0));
    expect((await postEvents(text)).status).toBe(202);
    const second = await postEvents(text);
    expect(second.status).toBe(202);
    expect(await second.json()).toEqual({ accepted: 1, stored: 0, duplicates: 1 });
    expect(await storedEvents(LOCAL_TENANT, session)).toHaveLength(1);
  });

  it('stores an event posted 20 times concurrently once', async () => {
    const session = uniqueName('concurrent');
    const text = JSON.stringify(sessionEvent(session, 0));
    const responses = await Promise.all(Array.from({ length: 20 }, () => postEvents(text)));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(202));
    const bodies = (await Promise.all(responses.map((response) => response.json()))) as Array<{ stored: number; duplicates: number }>;
    expect(bodies.reduce((sum, body) => sum + body.stored, 0)).toBe(1);
    expect(bodies.reduce((sum, body) => sum + body.duplicates, 0)).toBe(19);
    expect(await storedEvents(LOCAL_TENANT, session)).toHaveLength(1);
  });

  it('answers 426 with the supported versions when AEP-Version is missing or unsupported', async () => {
    const text = JSON.stringify(sessionEvent(uniqueName('version'), 0));
    for (const version of [null, '9.0']) {
      const response = await postEvents(text, { version });
      expect(response.status).toBe(426);
      expect(await response.json()).toMatchObject({ versions: ['0.1'] });
    }
  });

  it('answers 413 for a body over the limit and for a batch over the event count', async () => {
    const oversized = await postEvents(JSON.stringify({ ...sessionEvent(uniqueName('big'), 0), data: { blob: 'x'.repeat(1024 * 1024 + 10) } }));
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toMatchObject({ error: 'payload-too-large' });
    const session = uniqueName('many');
    const many = await postEvents(ndjson(Array.from({ length: 1001 }, (_, seq) => sessionEvent(session, seq))), { contentType: 'application/x-ndjson' });
    expect(many.status).toBe(413);
    expect(await many.json()).toMatchObject({ error: 'too-many-events' });
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([]);
  });

  it('answers 413 for one event over the per-event limit', async () => {
    const response = await postEvents(JSON.stringify({ ...sessionEvent(uniqueName('fat'), 0), data: { blob: 'x'.repeat(130 * 1024) } }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: 'event-too-large' });
  });

  it('answers 415 for other content types', async () => {
    const response = await postEvents(JSON.stringify(sessionEvent(uniqueName('type'), 0)), { contentType: 'text/plain' });
    expect(response.status).toBe(415);
  });

  it('answers 401 without a token or with an unknown one', async () => {
    const text = JSON.stringify(sessionEvent(uniqueName('anon'), 0));
    expect((await postEvents(text, { token: '' })).status).toBe(401);
    expect((await postEvents(text, { token: 'aep_not_a_real_token' })).status).toBe(401);
  });

  it('answers 403 to a token without the emit scope', async () => {
    const token = await tenantWithToken(uniqueName('ro'), ['consume']);
    const response = await postEvents(JSON.stringify(sessionEvent(uniqueName('ro'), 0)), { token });
    expect(response.status).toBe(403);
  });

  it('refuses a control command over HTTP and stores nothing (AEP-0004 §4.1)', async () => {
    const session = uniqueName('cmd');
    const command = { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: 'aep://test/agent/phone', agent: 'phone', session, data: { scope: 'session' } };
    const response = await postEvents(JSON.stringify(command));
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: 'unauthorized' });
    expect(await storedEvents(LOCAL_TENANT, session)).toEqual([]);
  });
});

describe('discovery', () => {
  it('serves the discovery document on GET /events and /.well-known/aep', async () => {
    for (const path of ['/events', '/.well-known/aep']) {
      const response = await fetch(`${inject('baseUrl')}${path}`, { headers: { authorization: `Bearer ${inject('devToken')}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/json');
      const document = (await response.json()) as Record<string, any>;
      expect(document.aep).toEqual(['0.1']);
      expect(document.endpoints.events).toBe('/events');
      expect(document.capabilities.filters).toEqual(['attr-match']);
      expect(document.capabilities.replay).toEqual({ buffer: inject('replayBuffer'), all: true });
    }
  });

  it('serves the discovery document without a token, or with an unknown one (AEP-0003 §3.4)', async () => {
    const authenticated = await (await fetch(`${inject('baseUrl')}/events`, { headers: { authorization: `Bearer ${inject('devToken')}` } })).json();
    for (const path of ['/events', '/.well-known/aep']) {
      for (const headers of [{}, { authorization: 'Bearer aep_not_a_real_token' }] as Array<Record<string, string>>) {
        const response = await fetch(`${inject('baseUrl')}${path}`, { headers });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toContain('application/json');
        // One document for every caller: nothing in it depends on (or names) a tenant.
        expect(await response.json()).toEqual(authenticated);
      }
    }
  });

  it('keeps everything but discovery and health behind a token: POST, SSE and WebSocket answer 401', async () => {
    const response = await postEvents(JSON.stringify(sessionEvent(uniqueName('open-discovery'), 0)), { token: '' });
    expect(response.status).toBe(401);
    const stream = await fetch(`${inject('baseUrl')}/stream?live=0`, { headers: { accept: 'text/event-stream' } });
    expect(stream.status).toBe(401);
    await stream.body?.cancel();
    await expect(openSocket({ token: '' })).rejects.toThrow(/401/);
  });

  it('answers /healthz without a token and reveals nothing else', async () => {
    const response = await fetch(`${inject('baseUrl')}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});

describe('tenant isolation in the log', () => {
  it('keeps tenant A events invisible to a read as tenant B, with the same session name', async () => {
    const tenantB = uniqueName('tenant-b');
    const tokenB = await tenantWithToken(tenantB, ['emit', 'consume']);
    const session = uniqueName('shared');
    const eventA = sessionEvent(session, 0);
    expect((await postEvents(JSON.stringify(eventA))).status).toBe(202);
    expect(await storedEvents(tenantB, session)).toEqual([]);
    // The same (source, id) in tenant B is B's own event, not a duplicate of A's.
    const asB = await postEvents(JSON.stringify(eventA), { token: tokenB });
    expect(await asB.json()).toEqual({ accepted: 1, stored: 1, duplicates: 0 });
    expect((await eventLog().listSessions(tenantB, 100)).items).toEqual([session]);
  });
});

describe('cost of ingest', () => {
  it('records the write units of each admitted event', async () => {
    const meter = new CapacityMeter();
    const log = eventLog({ meter });
    const session = uniqueName('cost');
    const count = 20;
    for (let seq = 0; seq < count; seq += 1) {
      const event = sessionEvent(session, seq, { data: { message: 'about a kilobyte or less of content' } });
      await log.append(LOCAL_TENANT, { event: event as never, raw: JSON.stringify(event) });
    }
    const { writeUnits, calls } = meter.snapshot();
    const perEvent = writeUnits / count;
    console.log(`[cost] ${perEvent.toFixed(2)} write units per event (${calls} DynamoDB calls for ${count} events)`);
    // One conditional put of the item (no index), and one registry write per session.
    expect(writeUnits).toBe(count + 1);
    expect(perEvent).toBeLessThanOrEqual(1.05);
  });
});
