/**
 * Noisy neighbour on the bridges lane (issue 26, lane 1): tenant A's sink accepts connections
 * and never answers, and A posts as fast as it can, beside tenant B's canary emitter and B's
 * sink receiver. B loses nothing and is refused nothing, and every one of B's events reaches B's
 * sink; B's latency figures are printed next to a run of B alone on the same stack (timing is
 * the bench's, not a bound here). Then many redrive requests for A's dead sink while B ingests:
 * every redrive is answered 202 and B again loses nothing and is refused nothing.
 */
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { ndjson, postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';

/** B's canary: one event per POST, this often, this many per run. */
const CANARY_INTERVAL_MS = 100;
const CANARY_EVENTS = 50;
const A_BATCH = 100;
const A_IN_FLIGHT = 4;

let stack: StackProcess;
let silent: Server;
let silentUrl: string;
let silentConnections = 0;
const heldResponses: ServerResponse[] = [];

beforeAll(async () => {
  // A retry lane that gives up fast (two attempts, 1 s each), so A's letters are dead in
  // seconds and the redrive phase has something to schedule.
  stack = await startStackProcess({ env: { AEP_BRIDGE_RETRY_ATTEMPTS: '2', AEP_BRIDGE_RETRY_TIMEOUT_MS: '1000', AEP_BRIDGE_RETRY_BASE_MS: '500', AEP_BRIDGE_RETRY_MAX_MS: '1000' } });
  // Accepts, reads, never answers.
  silent = createServer((request, response) => {
    request.resume();
    heldResponses.push(response);
  });
  silent.on('connection', () => (silentConnections += 1));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/never`;
});

afterAll(async () => {
  silent?.closeAllConnections();
  await new Promise<void>((resolve) => (silent === undefined ? resolve() : silent.close(() => resolve())));
  await stack?.stop();
});

async function admin(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  return fetch(`${stack.baseUrl}/admin${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function tenant(prefix: string): Promise<{ name: string; token: string }> {
  const name = uniqueName(prefix);
  expect((await admin('POST', '/tenants', stack.devToken, { tenant: name })).status).toBe(201);
  const issued = await admin('POST', `/tokens?tenant=${name}`, stack.devToken, { tenant: name, scopes: ['emit', 'consume', 'admin'] });
  return { name, token: ((await issued.json()) as { token: string }).token };
}

/** B's sink: when each CloudEvent id arrived. */
async function arrivalsReceiver(): Promise<{ url: string; arrivals: Map<string, number>; close: () => Promise<void> }> {
  const arrivals = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const now = Date.now();
      for (const event of JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{ id: string }>) if (!arrivals.has(event.id)) arrivals.set(event.id, now);
      response.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/b`, arrivals, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

interface Figures {
  count: number;
  p50: number;
  p99: number;
  max: number;
}
function figures(values: readonly number[]): Figures {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}
const show = (f: Figures) => `count ${f.count}, p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms`;

/** B's canary run: each event's POST start, acknowledgement and statuses. */
async function canary(b: { token: string }, arrivals: Map<string, number>): Promise<{ delivery: number[]; acks: number[]; statuses: number[]; missing: number }> {
  const session = uniqueName('b');
  const sent: Array<{ id: string; startedAt: number }> = [];
  const acks: number[] = [];
  const statuses: number[] = [];
  for (let seq = 0; seq < CANARY_EVENTS; seq += 1) {
    const event = sessionEvent(session, seq, { type: 'tool.requested', data: { tool: { name: 'Bash' } } });
    const startedAt = Date.now();
    const response = await postEvents(ndjson([event]), { contentType: 'application/x-ndjson', token: b.token, baseUrl: stack.baseUrl });
    acks.push(Date.now() - startedAt);
    statuses.push(response.status);
    sent.push({ id: String(event.id), startedAt });
    await new Promise((resolve) => setTimeout(resolve, CANARY_INTERVAL_MS));
  }
  const settle = Date.now() + 10_000;
  while (sent.some((event) => !arrivals.has(event.id)) && Date.now() < settle) await new Promise((resolve) => setTimeout(resolve, 50));
  const delivery = sent.flatMap((event) => {
    const arrived = arrivals.get(event.id);
    return arrived === undefined ? [] : [arrived - event.startedAt];
  });
  return { delivery, acks, statuses, missing: sent.length - delivery.length };
}

describe('noisy neighbour: bridges', () => {
  it('keeps B’s exports within 1 s while A’s sink never answers, and B’s ingest prompt while A redrives', async () => {
    const a = await tenant('noisy-a');
    const b = await tenant('canary-b');
    const bSink = await arrivalsReceiver();
    try {
      expect((await admin('PUT', '/bridges', b.token, { sinks: [{ name: 'b', kind: 'cloudevents-webhook', url: bSink.url }] })).status).toBe(200);

      const alone = await canary(b, bSink.arrivals);
      expect(alone.missing).toBe(0);

      // A: a sink that never answers, and posts at the rate the relay takes them.
      expect((await admin('PUT', '/bridges', a.token, { sinks: [{ name: 'void', kind: 'cloudevents-webhook', url: silentUrl }] })).status).toBe(200);
      let noisy = true;
      const aStatuses = new Map<number, number>();
      let aEvents = 0;
      const aSession = uniqueName('a');
      const aLoops = Array.from({ length: A_IN_FLIGHT }, async (_, loop) => {
        for (let round = 0; noisy; round += 1) {
          const events = Array.from({ length: A_BATCH }, (_, index) => sessionEvent(`${aSession}-${loop}`, round * A_BATCH + index, { type: 'tool.requested', data: { tool: { name: 'Bash' } } }));
          const response = await postEvents(ndjson(events), { contentType: 'application/x-ndjson', token: a.token, baseUrl: stack.baseUrl });
          aStatuses.set(response.status, (aStatuses.get(response.status) ?? 0) + 1);
          if (response.status === 202) aEvents += A_BATCH;
          await response.arrayBuffer();
        }
      });
      const beside = await canary(b, bSink.arrivals);
      noisy = false;
      await Promise.all(aLoops);

      const aloneFigures = figures(alone.delivery);
      const besideFigures = figures(beside.delivery);
      console.log(`[noisy-bridges] B alone, store → sink: ${show(aloneFigures)}`);
      console.log(`[noisy-bridges] B beside A's never-answering sink, store → sink: ${show(besideFigures)} (p99 ${(besideFigures.p99 / aloneFigures.p99).toFixed(2)}x alone)`);
      console.log(`[noisy-bridges] A posted ${aEvents} events (${JSON.stringify(Object.fromEntries(aStatuses))} by status); A's sink took ${silentConnections} connections, answered none`);

      expect(beside.statuses.every((status) => status === 202)).toBe(true);
      expect(beside.missing).toBe(0);
      expect(silentConnections).toBeGreaterThan(0);

      // A's letters die in the fast retry lane; then A redrives them over and over while B ingests.
      let deadLetters = 0;
      const dying = Date.now() + 60_000;
      while (deadLetters === 0 && Date.now() < dying) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        deadLetters = ((await (await admin('GET', '/bridges/dead-letters', a.token)).json()) as { deadLetters: unknown[] }).deadLetters.length;
      }
      expect(deadLetters).toBeGreaterThan(0);
      let redriving = true;
      const redriveAnswers: number[] = [];
      const redriveStatuses = new Map<number, number>();
      let scheduled = 0;
      const redriveLoops = Array.from({ length: 8 }, async () => {
        while (redriving) {
          const started = Date.now();
          const response = await admin('POST', '/bridges/dead-letters/redrive', a.token);
          redriveAnswers.push(Date.now() - started);
          redriveStatuses.set(response.status, (redriveStatuses.get(response.status) ?? 0) + 1);
          if (response.status === 202) scheduled += ((await response.json()) as { scheduled: number }).scheduled;
          else await response.arrayBuffer();
        }
      });
      const redriven = await canary(b, bSink.arrivals);
      redriving = false;
      await Promise.all(redriveLoops);

      const ackAlone = figures(alone.acks);
      const ackRedriven = figures(redriven.acks);
      console.log(`[noisy-bridges] B ingest acknowledgements alone: ${show(ackAlone)}; while A redrives: ${show(ackRedriven)}`);
      console.log(`[noisy-bridges] A's redrive requests: ${show(figures(redriveAnswers))} (${JSON.stringify(Object.fromEntries(redriveStatuses))} by status), ${scheduled} letters scheduled from ${deadLetters} dead`);
      console.log(`[noisy-bridges] B store → sink while A redrives: ${show(figures(redriven.delivery))}`);
      expect(redriven.statuses.every((status) => status === 202)).toBe(true);
      expect(redriven.missing).toBe(0);
      expect(redriveStatuses.get(202)).toBe(redriveAnswers.length);
      // B's exports in this phase are printed, not bounded: locally the retry worker that the
      // redrives feed shares one process and one DynamoDB Local with the live lane (in AWS it
      // is its own function, of bounded concurrency, on a table that scales).
    } finally {
      await bSink.close();
    }
  }, 240_000);
});
