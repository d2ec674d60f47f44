/**
 * A stack configured as deployed for sink addresses (`AEP_BRIDGE_ALLOW_LOOPBACK_SINKS=off`):
 * a literal loopback sink is refused when set (400), and a sink named by a hostname that
 * resolves to 127.0.0.1 (`localhost`) passes the set-time check but is refused at connect
 * time: its events are dead-lettered at once with that reason and the receiver gets nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../support/http-receiver.ts';
import type { HttpReceiver } from '../support/http-receiver.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { ndjson, postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';

let stack: StackProcess;
let receiver: HttpReceiver;

beforeAll(async () => {
  [stack, receiver] = await Promise.all([startStackProcess({ env: { AEP_BRIDGE_ALLOW_LOOPBACK_SINKS: 'off' } }), startReceiver()]);
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.baseUrl}/admin${path}`, { method, headers: { authorization: `Bearer ${stack.devToken}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

describe('sink addresses where loopback is not allowed', () => {
  it('refuses a literal loopback sink when it is set', async () => {
    for (const url of [`https://127.0.0.1:${new URL(receiver.url).port}/hook`, 'https://[::1]/hook', `http://localhost:${new URL(receiver.url).port}/hook`]) {
      const response = await admin('PUT', '/bridges', { sinks: [{ name: 'loop', kind: 'cloudevents-webhook', url }] });
      expect(response.status, url).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid-request' });
    }
  });

  it('refuses at connect time a sink whose name resolves to 127.0.0.1, and dead-letters its events with that reason', async () => {
    const set = await admin('PUT', '/bridges', { sinks: [{ name: 'named', kind: 'cloudevents-webhook', url: `https://localhost:${new URL(receiver.url).port}/hook` }] });
    expect(set.status).toBe(200);
    const event = sessionEvent(uniqueName('s'), 0, { type: 'tool.requested', data: { tool: { name: 'Bash' } } });
    expect((await postEvents(ndjson([event]), { contentType: 'application/x-ndjson', token: stack.devToken, baseUrl: stack.baseUrl })).status).toBe(202);
    let letters: Array<{ sink: string; reason: string; eventIds: string[] }> = [];
    const deadline = Date.now() + 20_000;
    while (!letters.some((letter) => letter.eventIds.includes(String(event.id))) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      letters = ((await (await admin('GET', '/bridges/dead-letters')).json()) as { deadLetters: typeof letters }).deadLetters;
    }
    const letter = letters.find((candidate) => candidate.eventIds.includes(String(event.id)));
    expect(letter).toMatchObject({ sink: 'named', reason: "the sink's name resolves to a loopback address, which sinks may not reach" });
    expect(receiver.requests).toHaveLength(0);
    await admin('DELETE', '/bridges');
  });
});
