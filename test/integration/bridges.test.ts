/**
 * The AEP-0005 bridges end to end on a stack of their own (short retry budget): sinks set over
 * the admin API, events POSTed, and what local receivers get (signed CloudEvents batches, OTLP/
 * HTTP JSON logs, OCSF NDJSON), filtered and capped per sink, isolated per tenant; a receiver
 * that recovers gets everything (through the retry lane), one that never does fills the
 * dead-letter store, which a redrive schedules for the retry worker to empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/relay/bridges/webhook-signature.ts';
import { startReceiver } from '../support/http-receiver.ts';
import type { HttpReceiver, ReceivedRequest } from '../support/http-receiver.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { postEvents, sessionEvent, ndjson, uniqueName } from '../support/relay-fixtures.ts';

let stack: StackProcess;
const receivers: HttpReceiver[] = [];

beforeAll(async () => {
  stack = await startStackProcess({ env: { AEP_BRIDGE_RETRY_ATTEMPTS: '3', AEP_BRIDGE_RETRY_BASE_MS: '100', AEP_BRIDGE_RETRY_MAX_MS: '200' } });
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await stack?.stop();
});

async function receiver(): Promise<HttpReceiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

async function admin(method: string, path: string, body?: unknown, token = stack.devToken): Promise<Response> {
  return fetch(`${stack.baseUrl}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A new tenant with an emit+consume+admin token of its own (setting a sink needs consume: it receives the events). */
async function tenant(): Promise<{ name: string; token: string }> {
  const name = uniqueName('br');
  expect((await admin('POST', '/tenants', { tenant: name })).status).toBe(201);
  const issued = await admin('POST', `/tokens?tenant=${name}`, { tenant: name, scopes: ['emit', 'consume', 'admin'] });
  expect(issued.status).toBe(201);
  return { name, token: ((await issued.json()) as { token: string }).token };
}

async function setSinks(owner: { token: string }, sinks: unknown[]): Promise<{ sinks: unknown[]; signingSecrets: Record<string, string> }> {
  const response = await admin('PUT', '/bridges', { sinks }, owner.token);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { sinks: unknown[]; signingSecrets: Record<string, string> };
}

async function post(owner: { token: string }, events: readonly unknown[]): Promise<void> {
  const response = await postEvents(ndjson(events), { contentType: 'application/x-ndjson', token: owner.token, baseUrl: stack.baseUrl });
  expect(response.status).toBe(202);
}

const cloudEventsOf = (requests: readonly ReceivedRequest[]) => requests.flatMap((request) => JSON.parse(request.body) as Array<Record<string, any>>);
const ocsfRecordsOf = (requests: readonly ReceivedRequest[]) => requests.flatMap((request) => request.body.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>));
/** Ids as a sorted copy, for sets whose order the relay does not promise. */
const inAnyOrder = (ids: readonly unknown[]) => ids.map(String).sort();
const logRecordsOf = (requests: readonly ReceivedRequest[]) =>
  requests.flatMap((request) => (JSON.parse(request.body) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Array<Record<string, any>> }> }> }).resourceLogs.flatMap((resource) => resource.scopeLogs.flatMap((scope) => scope.logRecords)));

/** One short session covering the three sinks' interests, with a redacted payload above the default ceiling. */
function sessionOf(session: string) {
  const tool = { name: 'Bash', call_id: 't_1' };
  return [
    sessionEvent(session, 0, { type: 'session.started', data: { client: { name: 'cli' } } }),
    sessionEvent(session, 1, { type: 'progress.status', data: {} }),
    sessionEvent(session, 2, { type: 'tool.requested', subject: 'Bash', data: { tool } }),
    sessionEvent(session, 3, { type: 'tool.denied', subject: 'Bash', severity: 'warning', data: { tool, by: 'policy' } }),
    sessionEvent(session, 4, { type: 'tool.failed', subject: 'Bash', severity: 'error', capture: 'redacted', data: { tool, error: { type: 'ExecError', message: 'SECRET path /home/me' } } }),
  ];
}

describe('bridges (AEP-0005) on the local stack', () => {
  it('delivers a tenant’s events to its webhook (signed), OTLP and OCSF sinks, filtered and capped, and nothing to another tenant’s sinks', async () => {
    const [hook, otlp, ocsf, otherHook] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    const owner = await tenant();
    const other = await tenant();
    const { signingSecrets } = await setSinks(owner, [
      { name: 'hook', kind: 'cloudevents-webhook', url: `${hook.url}/aep`, types: ['tool.*', 'session.*'] },
      { name: 'otel', kind: 'otlp', endpoint: `${otlp.url}/v1/logs`, headers: { 'x-api-key': 'otlp-key-do-not-leak' } },
      { name: 'siem', kind: 'ocsf-webhook', url: `${ocsf.url}/ocsf` },
    ]);
    expect(Object.keys(signingSecrets).sort()).toEqual(['hook', 'siem']);
    await setSinks(other, [{ name: 'hook', kind: 'cloudevents-webhook', url: otherHook.url }]);

    const events = sessionOf(uniqueName('s'));
    await post(owner, events);

    // CloudEvents webhook: structured batch mode, signed, type-filtered, capped at metadata.
    await hook.waitFor(() => cloudEventsOf(hook.accepted()).length === 4);
    for (const request of hook.accepted()) {
      expect(request.headers['content-type']).toBe('application/cloudevents-batch+json');
      expect(verifySignature(signingSecrets.hook as string, request.body, String(request.headers['aep-signature']), Date.now())).toBe(true);
    }
    const cloudEvents = cloudEventsOf(hook.accepted());
    expect(cloudEvents.map((event) => event.id)).toEqual([events[0], events[2], events[3], events[4]].map((event) => event?.id));
    const failed = cloudEvents.find((event) => event.type === 'dev.aep.tool.failed');
    expect(failed).toMatchObject({ specversion: '1.0', aepcapture: 'metadata', data: { tool: { name: 'Bash', call_id: 't_1' }, error: { type: 'ExecError' } } });
    expect(JSON.stringify(cloudEvents)).not.toContain('SECRET');

    // OTLP/HTTP JSON logs: the tenant's header, every event, §3.4 severity numbers, no body above the ceiling.
    await otlp.waitFor(() => logRecordsOf(otlp.accepted()).length === 5);
    expect(otlp.accepted().every((request) => request.path === '/v1/logs' && request.headers['x-api-key'] === 'otlp-key-do-not-leak' && request.headers['content-type'] === 'application/json')).toBe(true);
    const records = logRecordsOf(otlp.accepted());
    expect(records.map((record) => [record.eventName, record.severityNumber, record.severityText])).toEqual([
      ['dev.aep.session.started', 9, 'INFO'],
      ['dev.aep.progress.status', 9, 'INFO'],
      ['dev.aep.tool.requested', 9, 'INFO'],
      ['dev.aep.tool.denied', 13, 'WARN'],
      ['dev.aep.tool.failed', 17, 'ERROR'],
    ]);
    expect(records[4]).not.toHaveProperty('body');
    expect(records[3]?.body).toBeDefined();
    expect(JSON.stringify(records)).not.toContain('SECRET');

    // OCSF NDJSON: only the security families, the denial as Blocked, the redacted payload held back.
    await ocsf.waitFor(() => ocsfRecordsOf(ocsf.accepted()).length === 4);
    const ocsfRecords = ocsfRecordsOf(ocsf.accepted());
    expect(ocsfRecords.map((record) => [record.class_uid, record.activity_id, record.disposition_id])).toEqual([
      [3002, 1, undefined],
      [1007, 1, undefined],
      [1007, 1, 2],
      [1007, 2, undefined],
    ]);
    expect(ocsfRecords[3]).toMatchObject({ process: { name: 'Bash' }, unmapped: { aep: { capture: 'redacted' } } });
    expect(ocsfRecords[3]?.unmapped).not.toHaveProperty('data');
    for (const request of ocsf.accepted()) expect(verifySignature(signingSecrets.siem as string, request.body, String(request.headers['aep-signature']), Date.now())).toBe(true);

    // Another tenant's sink got nothing of this tenant's events; its own events reach it alone.
    const otherEvent = sessionEvent(uniqueName('o'), 0, { type: 'tool.requested', subject: 'Read', data: { tool: { name: 'Read' } } });
    await post(other, [otherEvent]);
    await otherHook.waitFor(() => cloudEventsOf(otherHook.accepted()).length === 1);
    expect(cloudEventsOf(otherHook.accepted()).map((event) => event.id)).toEqual([otherEvent.id]);
    expect(cloudEventsOf(hook.requests).map((event) => event.id)).not.toContain(otherEvent.id);

    // Secrets never come back and never reach the logs.
    const listed = await admin('GET', '/bridges', undefined, owner.token);
    const listing = await listed.text();
    expect(listing).toContain('"headerNames":["x-api-key"]');
    expect(listing).not.toContain('otlp-key-do-not-leak');
    expect(listing).not.toContain(signingSecrets.hook as string);
    expect(stack.output()).not.toContain('otlp-key-do-not-leak');
    expect(stack.output()).not.toContain(signingSecrets.hook as string);
  });

  it('keeps a webhook’s signing secret when the sinks are set again, and rotates it on request', async () => {
    const hook = await receiver();
    const owner = await tenant();
    const first = await setSinks(owner, [{ name: 'hook', kind: 'cloudevents-webhook', url: hook.url }]);
    const again = await setSinks(owner, [{ name: 'hook', kind: 'cloudevents-webhook', url: hook.url }]);
    expect(again.signingSecrets).toEqual({});
    const rotated = await setSinks(owner, [{ name: 'hook', kind: 'cloudevents-webhook', url: hook.url, rotateSecret: true }]);
    expect(rotated.signingSecrets.hook).toMatch(/^whsec_/);
    expect(rotated.signingSecrets.hook).not.toBe(first.signingSecrets.hook);
    const event = sessionEvent(uniqueName('s'), 0, { type: 'tool.requested', data: { tool: { name: 'Bash' } } });
    await post(owner, [event]);
    await hook.waitFor(() => hook.accepted().length === 1);
    const [request] = hook.accepted();
    expect(verifySignature(rotated.signingSecrets.hook as string, request?.body ?? '', String(request?.headers['aep-signature']), Date.now())).toBe(true);
  });

  it('refuses invalid sinks with invalid-request and another tenant’s settings to a non-operator', async () => {
    const owner = await tenant();
    const bad = await admin('PUT', '/bridges', { sinks: [{ name: 'x', kind: 'otlp', endpoint: 'http://example.com/v1/logs' }] }, owner.token);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid-request' });
    // Link-local (the metadata service) and private addresses, even where loopback is allowed.
    for (const url of ['https://169.254.169.254/latest/meta-data/', 'https://10.0.0.1/hook', 'https://[fd00:ec2::254]/hook']) {
      const refused = await admin('PUT', '/bridges', { sinks: [{ name: 'x', kind: 'cloudevents-webhook', url }] }, owner.token);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(/names a (link-local|private) address/);
    }
    const other = await tenant();
    expect((await admin('GET', `/bridges?tenant=${other.name}`, undefined, owner.token)).status).toBe(403);
  });

  it('delivers every event to a receiver that fails for a while, once it recovers', async () => {
    const flaky = await receiver();
    flaky.respondWith((index) => (index < 2 ? 503 : 200));
    const owner = await tenant();
    await setSinks(owner, [{ name: 'flaky', kind: 'cloudevents-webhook', url: flaky.url }]);
    const events = Array.from({ length: 6 }, (_, seq) => sessionEvent(uniqueName('s'), seq, { type: 'tool.requested', data: { tool: { name: 'Bash' } } }));
    await post(owner, events);
    await flaky.waitFor(() => cloudEventsOf(flaky.accepted()).length >= 6);
    expect(new Set(cloudEventsOf(flaky.accepted()).map((event) => event.id))).toEqual(new Set(events.map((event) => event.id)));
    expect(flaky.requests.filter((request) => request.status === 503)).toHaveLength(2);
    const letters = (await (await admin('GET', '/bridges/dead-letters', undefined, owner.token)).json()) as { deadLetters: unknown[] };
    expect(letters.deadLetters).toEqual([]);
  });

  it('dead-letters what a receiver that never recovers refuses, and redrive empties the store', async () => {
    const down = await receiver();
    down.respondWith(() => 500);
    const owner = await tenant();
    await setSinks(owner, [{ name: 'down', kind: 'ocsf-webhook', url: down.url }]);
    const events = sessionOf(uniqueName('s'));
    await post(owner, events);
    const projected = [events[0], events[2], events[3], events[4]].map((event) => event?.id);

    let letters: Array<{ sink: string; reason: string; eventIds: string[] }> = [];
    const deadline = Date.now() + 20_000;
    while (letters.flatMap((letter) => letter.eventIds).length < projected.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      letters = ((await (await admin('GET', '/bridges/dead-letters', undefined, owner.token)).json()) as { deadLetters: typeof letters }).deadLetters;
    }
    // Only what the sink would carry is parked: progress.status has no OCSF record (AEP-0005 §4.1).
    // The listing is oldest letter first, and a later batch whose live attempt the open circuit
    // skips can be parked before an earlier one that is still retrying live: each letter keeps
    // its events in log order, but letters need not follow one another in it.
    expect(inAnyOrder(letters.flatMap((letter) => letter.eventIds))).toEqual(inAnyOrder(projected));
    for (const letter of letters) expect(letter.eventIds).toEqual(projected.filter((id) => letter.eventIds.includes(String(id))));
    expect(letters[0]).toMatchObject({ sink: 'down' });
    expect(letters[0]?.reason).toContain('500');
    // Three attempts (AEP_BRIDGE_RETRY_ATTEMPTS) per dead letter, the live one and the retry
    // lane's: one letter per stream batch the post landed in (one, unless the poller read
    // between its writes, as under load; a later batch finds the sink's circuit open and skips
    // the live attempt, so its letter gets its three in the retry lane).
    expect(down.requests).toHaveLength(3 * letters.length);

    // The reason names the status alone, never what the receiver answered.
    expect(letters.every((letter) => letter.reason.includes('the receiver answered 500') && !letter.reason.includes('receiver down'))).toBe(true);

    down.respondWith(() => 200);
    const redrive = await admin('POST', '/bridges/dead-letters/redrive', undefined, owner.token);
    // Scheduled, not sent: the retry worker sends them; the outcome is polled.
    expect(redrive.status).toBe(202);
    expect(await redrive.json()).toMatchObject({ scheduled: letters.length, events: projected.length, orphaned: 0 });
    await down.waitFor(() => ocsfRecordsOf(down.accepted()).length >= projected.length);
    expect(inAnyOrder(ocsfRecordsOf(down.accepted()).map((record) => record.metadata.uid))).toEqual(inAnyOrder(projected));
    const emptied = Date.now() + 20_000;
    let left: unknown[] = letters;
    while (left.length > 0 && Date.now() < emptied) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      left = ((await (await admin('GET', '/bridges/dead-letters', undefined, owner.token)).json()) as { deadLetters: unknown[] }).deadLetters;
    }
    expect(left).toEqual([]);
    // A second redrive finds nothing left to schedule.
    expect(await (await admin('POST', '/bridges/dead-letters/redrive', undefined, owner.token)).json()).toMatchObject({ scheduled: 0, orphaned: 0 });
  });
});
