/**
 * `npm run load`: a bounded load run on one machine, loopback only. Starts the local stack
 * as a child process (as `npm start` does), connects 200 WebSocket consumers, has 20 emitters
 * POST events for 60 s, and reports sustained ingest (events the relay acknowledged with 202,
 * per second), deliveries per second over the whole delivery window, loss counted per consumer
 * and event (a duplicate cannot hide a miss), delivery latency percentiles, errors (must be
 * zero) and the stack's memory. Results go to bench/load-results.json and a section of
 * BENCHMARKS.md (bench/load-report.ts), each timed figure ÷ a yardstick of the same run.
 * Knobs: LOAD_SECONDS, LOAD_CONSUMERS, LOAD_EMITTERS, LOAD_RATE (events/s in all). The stack's
 * stream poll is always `npm start`'s default, whatever the environment says: it is the
 * latency's yardstick, and runs are compared with the run before.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { DEFAULT_LOCAL_POLL_MS } from '../local/stream-poll-default.ts';
import { loadRatios, loadSectionMarkdown, withLoadSection } from './load-report.ts';
import type { LoadResults, LoadRun, LoadStackSettings } from './load-report.ts';
import { scriptArguments } from '../bin/cli/script-arguments.ts';

scriptArguments({
  command: 'npm run load --',
  usage: `Usage: npm run load

A bounded load run on this machine, loopback only: starts the local stack as a child process,
connects LOAD_CONSUMERS WebSocket consumers (200), has LOAD_EMITTERS emitters (20) POST
LOAD_RATE events per second (100) for LOAD_SECONDS (60), and reports ingest, deliveries, loss,
latency and errors into bench/load-results.json and BENCHMARKS.md. It takes no arguments.`,
  config: { options: {} },
});

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.LOAD_SECONDS ?? 60);
const consumerCount = Number(process.env.LOAD_CONSUMERS ?? 200);
const emitterCount = Number(process.env.LOAD_EMITTERS ?? 20);
const totalRate = Number(process.env.LOAD_RATE ?? 100);
const token = `aep_load_${process.pid}`;
/**
 * Set in the stack's environment, and recorded: the stream poll is the yardstick of the
 * latency; no WebSocket jitter and no frame limit, so the load meets the relay's own limits.
 */
const stackSettings: LoadStackSettings = { AEP_LOCAL_POLL_MS: DEFAULT_LOCAL_POLL_MS, AEP_LOCAL_WS_JITTER_MS: 0, AEP_SOCKET_FRAMES_PER_SECOND: 0 };

interface Stack {
  baseUrl: string;
  pid: number;
  stop(): Promise<void>;
}

async function startStack(): Promise<Stack> {
  const child = spawn(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'local', 'start.ts'), '--in-memory'], {
    cwd: root,
    env: { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`, AEP_PORT: '0', AEP_DEV_TOKEN: token, ...Object.fromEntries(Object.entries(stackSettings).map(([name, setting]) => [name, String(setting)])) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const baseUrl = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`stack not ready:\n${output}`)), 90_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const match = /AEP relay ready: (\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolvePromise(match[1]);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    });
    child.once('exit', (code) => reject(new Error(`stack exited with ${code}:\n${output}`)));
  });
  child.removeAllListeners('exit');
  return {
    baseUrl,
    pid: child.pid ?? 0,
    stop: () =>
      new Promise((resolvePromise) => {
        child.once('exit', () => resolvePromise());
        child.kill('SIGTERM');
      }),
  };
}

/** Resident memory of a process and all its descendants (the stack, its Node child, the DynamoDB Local JVM). */
function treeRssBytes(pid: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  const tree = new Set([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [child, parent] of parents) {
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
    }
  }
  let total = 0;
  for (const member of tree) {
    try {
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${member}/status`, 'utf8'))?.[1];
      total += Number(rss ?? 0) * 1024;
    } catch {
      // ended
    }
  }
  return total;
}

function connect(baseUrl: string): Promise<WebSocket> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/socket`, { headers: { authorization: `Bearer ${token}` } });
  return new Promise((resolvePromise, reject) => {
    socket.once('open', () => resolvePromise(socket));
    socket.once('error', reject);
  });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function main(): Promise<void> {
  const stack = await startStack();
  console.log(`stack ready at ${stack.baseUrl}; ${consumerCount} consumers, ${emitterCount} emitters, ${totalRate} events/s for ${seconds} s`);
  const sessions = Array.from({ length: emitterCount }, (_, index) => `load-${process.pid}-${index}`);
  const latencies: number[] = [];
  /** Per consumer, the ids of the events it received (its session's), and its duplicates. */
  const receivedIds: Array<Set<string>> = [];
  let duplicates = 0;
  let totalDelivered = 0;
  let lastDeliveryAt = 0;
  let errors = 0;
  let unexpectedCloses = 0;
  let stopping = false;

  const consumers: WebSocket[] = [];
  for (let index = 0; index < consumerCount; index += 1) {
    const socket = await connect(stack.baseUrl);
    const session = sessions[index % sessions.length] as string;
    const ids = new Set<string>();
    receivedIds.push(ids);
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (frame.type === 'error') errors += 1;
      if (typeof frame.aep === 'string' && typeof frame.id === 'string' && typeof frame.time === 'string') {
        latencies.push(Date.now() - Date.parse(frame.time));
        totalDelivered += 1;
        lastDeliveryAt = Date.now();
        // Loss is counted per (source, id): the id names the emitter's session and seq.
        const key = `${String(frame.source)} ${frame.id}`;
        if (ids.has(key)) duplicates += 1;
        else ids.add(key);
      }
    });
    socket.on('close', () => {
      if (!stopping) unexpectedCloses += 1;
    });
    socket.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', capabilities: {} }));
    socket.send(JSON.stringify({ type: 'subscribe', id: 'load', filter: { session } }));
    consumers.push(socket);
  }
  // Emitters POST each event (HTTP ingest answers 202 once the event is stored, so what is
  // acknowledged is known; a WebSocket emit acknowledges nothing on success).
  const emitters = sessions.map((session) => ({ session, seq: 0 }));
  /** Per session, the (source, id) keys the relay acknowledged. */
  const acknowledged = new Map<string, string[]>(sessions.map((session) => [session, []]));
  let refused = 0;
  let lastAckAt = 0;
  const inFlight = new Set<Promise<void>>();
  await new Promise((resolvePromise) => setTimeout(resolvePromise, 3000));

  const memorySamples: number[] = [];
  const startedAt = Date.now();
  const intervalMs = (1000 * emitterCount) / totalRate;
  let emitted = 0;
  const timers = emitters.map((emitter) =>
    setInterval(() => {
      const event = { aep: '0.1', id: `${emitter.session}-${emitter.seq}`, type: 'progress.status', time: new Date().toISOString(), source: `aep://load/agent/load/session/${emitter.session}`, agent: 'load', session: emitter.session, seq: emitter.seq };
      emitter.seq += 1;
      emitted += 1;
      const post = fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'aep-version': '0.1' }, body: JSON.stringify(event) })
        .then(async (response) => {
          await response.arrayBuffer();
          if (response.status === 202) {
            acknowledged.get(emitter.session)?.push(`${event.source} ${event.id}`);
            lastAckAt = Date.now();
          } else refused += 1;
        })
        .catch(() => {
          refused += 1;
        })
        .finally(() => inFlight.delete(post));
      inFlight.add(post);
    }, intervalMs),
  );
  const sampler = setInterval(() => memorySamples.push(treeRssBytes(stack.pid)), 2000);
  await new Promise((resolvePromise) => setTimeout(resolvePromise, seconds * 1000));
  for (const timer of timers) clearInterval(timer);
  await Promise.all([...inFlight]);
  const acked = [...acknowledged.values()].reduce((sum, keys) => sum + keys.length, 0);
  // Every consumer should get every acknowledged event of its session.
  const expectedFor = (index: number) => acknowledged.get(sessions[index % sessions.length] as string) ?? [];
  const expected = consumers.reduce((sum, _socket, index) => sum + expectedFor(index).length, 0);
  const missing = () => consumers.reduce((sum, _socket, index) => sum + expectedFor(index).filter((key) => !(receivedIds[index] as Set<string>).has(key)).length, 0);
  // Let deliveries drain.
  const drainDeadline = Date.now() + 30_000;
  while (missing() > 0 && Date.now() < drainDeadline) {
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 250));
  }
  clearInterval(sampler);
  stopping = true;
  const missingDeliveries = missing();
  for (const socket of consumers) socket.close();
  const peakRss = Math.max(0, ...memorySamples);
  await stack.stop();

  latencies.sort((a, b) => a - b);
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root }).toString().trim();
    } catch {
      return 'unknown';
    }
  })();
  const results: LoadRun = {
    date: new Date().toISOString(),
    commit,
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', memoryBytes: totalmem(), node: process.version },
    consumers: consumerCount,
    emitters: emitterCount,
    targetEventsPerSecond: totalRate,
    seconds,
    settings: stackSettings,
    emitted,
    acknowledged: acked,
    refused,
    // Acknowledged (202) events per second, from the first send to the last acknowledgement.
    sustainedEventsPerSecond: Number((acked / ((lastAckAt - startedAt) / 1000)).toFixed(1)),
    expectedDeliveries: expected,
    delivered: totalDelivered,
    duplicates,
    // Over the whole delivery window: the first send to the last delivery.
    deliveriesPerSecond: Number((totalDelivered / ((lastDeliveryAt - startedAt) / 1000)).toFixed(1)),
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), max: latencies.at(-1) ?? Number.NaN },
    errors,
    unexpectedCloses,
    missingDeliveries,
    peakStackRssMiB: Number((peakRss / 1024 / 1024).toFixed(0)),
  };
  const resultsFile = join(root, 'bench', 'load-results.json');
  // The run before this one, shown beside it (its settings must match to compare).
  const previous = existsSync(resultsFile) ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as LoadResults) : undefined;
  writeFileSync(resultsFile, `${JSON.stringify({ ...results, ...(previous === undefined ? {} : { previous: { ...previous, previous: undefined } }) }, null, 2)}\n`);
  const benchmarksFile = join(root, 'BENCHMARKS.md');
  const benchmarks = existsSync(benchmarksFile) ? readFileSync(benchmarksFile, 'utf8') : '# Benchmarks\n\n';
  writeFileSync(benchmarksFile, withLoadSection(benchmarks, loadSectionMarkdown(results, previous)));
  console.log(JSON.stringify(results, null, 2));
  console.log(`same-run ratios: ${JSON.stringify(loadRatios(results))}`);
  console.log(`results written to ${resultsFile} and BENCHMARKS.md (section "Load")`);
  if (errors > 0 || unexpectedCloses > 0 || refused > 0 || results.missingDeliveries > 0) process.exitCode = 1;
}

await main();
