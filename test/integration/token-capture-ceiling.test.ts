/**
 * A token's capture ceiling (`maxCapture`) on every path that reads events: a token capped at
 * `metadata` that asks for `full` gets `metadata` payloads from an SSE stream (replay and
 * live), a WebSocket subscription (replay and live), `/history`, the CLI's `export`, and the
 * sink it sets. The uncapped token reading the same events sees the redacted field, so each
 * check fails if the ceiling were not applied.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { cli } from '../support/cli-run.ts';
import { getPage } from '../support/history-client.ts';
import { startReceiver } from '../support/http-receiver.ts';
import type { HttpReceiver } from '../support/http-receiver.ts';
import { ndjson, postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';

/** A `redacted` event whose `error.message` a `metadata` ceiling removes (AEP-0001 §8.2). */
const secretEvent = (session: string, seq: number) =>
  sessionEvent(session, seq, { type: 'tool.failed', capture: 'redacted', data: { tool: { name: 'Bash' }, error: { type: 'ExecError', message: 'SECRET path' } } });

/** What a `metadata` ceiling leaves of `secretEvent`. */
function expectMetadata(event: Record<string, any>): void {
  expect(event.capture).toBe('metadata');
  expect(event.data).toEqual({ tool: { name: 'Bash' }, error: { type: 'ExecError' } });
}

async function post(token: string, events: readonly unknown[]): Promise<void> {
  expect((await postEvents(ndjson(events), { contentType: 'application/x-ndjson', token })).status).toBe(202);
}

const receivers: HttpReceiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

describe('token capture ceiling', () => {
  it('is set when issued, attenuated, inherited when left open, and listed', async () => {
    const { adminToken: root } = await tenantWithAdmin('cap-issue');
    const capped = await issue(root, { scopes: ['consume', 'admin'], maxCapture: 'metadata' });
    expect(capped.maxCapture).toBe('metadata');
    const wider = await admin('POST', '/tokens', { token: capped.token, body: { scopes: ['consume'], maxCapture: 'full' } });
    expect(wider.status).toBe(403);
    expect(await wider.json()).toMatchObject({ error: 'unauthorized', detail: expect.stringContaining('maxCapture full') });
    expect((await issue(capped.token, { scopes: ['consume'] })).maxCapture).toBe('metadata');
    expect((await issue(capped.token, { scopes: ['consume'], maxCapture: 'none' })).maxCapture).toBe('none');
    expect((await admin('POST', '/tokens', { token: root, body: { scopes: ['consume'], maxCapture: 'everything' } })).status).toBe(400);
    // The root reads at full; a token issued without one by it does too.
    expect((await issue(root, { scopes: ['consume'] })).maxCapture).toBe('full');
    const listed = ((await (await admin('GET', '/tokens', { token: root })).json()) as { tokens: Array<Record<string, unknown>> }).tokens;
    expect(listed.find((token) => token.tokenId === capped.tokenId)).toMatchObject({ maxCapture: 'metadata' });
  });

  it('caps SSE (replay and live), WebSocket (replay and live), history and export for a token asking for full', { timeout: 60_000 }, async () => {
    const { adminToken: root } = await tenantWithAdmin('cap-read');
    const reader = await issue(root, { scopes: ['consume'], maxCapture: 'metadata' });
    const session = uniqueName('cap');
    await post(root, [secretEvent(session, 0)]);

    // SSE: a live stream (sees seq 1) and a replay (sees both).
    const live = await openStream({ filter: JSON.stringify({ session }), capture: 'full' }, { token: reader.token });
    expect(live.status).toBe(200);
    // WebSocket: a subscription replaying from the start, then live.
    const socket = await helloSocket({}, { token: reader.token });
    socket.send({ type: 'subscribe', id: 'all', filter: { session }, capture: 'full', from: 'all' });
    await socket.next(isType('subscribed'));
    const replayedOnSocket = await socket.next((frame) => frame.session === session && frame.seq === 0);
    await post(root, [secretEvent(session, 1)]);
    await live.waitFor((items) => items.some((item) => item.kind === 'message' && item.json.seq === 1));
    const liveOnSocket = await socket.next((frame) => frame.session === session && frame.seq === 1);
    const replay = await openStream({ filter: JSON.stringify({ session }), capture: 'full', from: 'all', live: '0' }, { token: reader.token });
    await replay.ended;
    const ofSession = (messages: ReturnType<typeof live.messages>) => messages.filter((message) => message.json.session === session);
    expect(ofSession(replay.messages())).toHaveLength(2);
    const sse = [...ofSession(live.messages()), ...ofSession(replay.messages())];
    for (const message of sse) {
      expect(message.data).not.toContain('SECRET');
      expectMetadata(message.json);
    }
    for (const frame of [replayedOnSocket, liveOnSocket]) expectMetadata(frame);
    live.close();
    await socket.close();

    // History, and the CLI's export that pages through it.
    const page = await getPage('/history', reader.token, { session, capture: 'full' });
    expect(page.status).toBe(200);
    expect(page.lines).toHaveLength(2);
    for (const line of page.lines) expectMetadata(JSON.parse(line) as Record<string, any>);
    const exported = await cli(['export', '--session', session, '--capture', 'full'], { AEP_URL: inject('baseUrl'), AEP_TOKEN: reader.token });
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exported.stdout.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(2);
    for (const line of lines) expectMetadata(JSON.parse(line) as Record<string, any>);

    // The same reads by the uncapped root show the field: the ceiling above is the token's.
    const uncapped = await getPage('/history', root, { session, capture: 'full' });
    expect(uncapped.lines.every((line) => line.includes('SECRET path'))).toBe(true);
  });

  it("caps the sinks a token sets at its ceiling and its agents, and delivers only what they allow", { timeout: 60_000 }, async () => {
    const { adminToken: root } = await tenantWithAdmin('cap-sink');
    const receiver = await startReceiver();
    receivers.push(receiver);
    const setter = await issue(root, { scopes: ['consume', 'admin'], agents: ['alpha'], maxCapture: 'metadata' });
    const sink = { name: 'hook', kind: 'cloudevents-webhook', url: `${receiver.url}/hook` };
    const refused = await admin('PUT', '/bridges', { token: setter.token, body: { sinks: [{ ...sink, maxCapture: 'redacted' }] } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'unauthorized', detail: expect.stringContaining('maxCapture redacted') });
    const set = await admin('PUT', '/bridges', { token: setter.token, body: { sinks: [{ ...sink, maxCapture: 'metadata' }] } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { sinks: unknown[] }).sinks).toEqual([expect.objectContaining({ agents: ['alpha'], maxCapture: 'metadata' })]);
    const session = uniqueName('cap-sink');
    const full = (agent: string, seq: number) =>
      sessionEvent(`${session}-${agent}`, seq, { agent, source: `aep://h/agent/${agent}/session/${session}-${agent}`, type: 'tool.failed', capture: 'full', data: { tool: { name: 'Bash' }, error: { type: 'ExecError', message: 'FULL detail' } } });
    await post(root, [full('beta', 0), full('alpha', 0)]);
    await receiver.waitFor((requests) => requests.some((request) => request.body.includes(`${session}-alpha`)));
    const delivered = receiver.requests.flatMap((request) => JSON.parse(request.body) as Array<Record<string, any>>);
    expect(delivered.map((event) => event.aepsessionid)).toEqual([`${session}-alpha`]);
    expect(delivered[0]?.aepcapture).toBe('metadata');
    expect(receiver.requests.every((request) => !request.body.includes('FULL detail'))).toBe(true);
  });
});
