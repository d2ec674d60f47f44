/**
 * The lane worker function (`functions/fanoutlane`) as the local stack runs it when
 * AEP_LOCAL_LANE_WORKERS is set: a small Lambda Invoke endpoint (the API's
 * `POST /2015-03-31/functions/{name}/invocations`, so fan-out's real Lambda client talks to it)
 * in front of that many worker processes, each an execution environment of its own: one
 * invocation at a time, its own Node process and so its own CPU. An invocation waits for a free
 * worker (as under a concurrency limit).
 *
 * A worker that exits during an invocation (a crash) answers it as Lambda does, a
 * `FunctionError: Unhandled` response with `Runtime.ExitError`, and is replaced by a fresh one.
 * `crashFirstAfterPosts` makes the first process of each worker exit after that many posts: the
 * fault the lanes' reliability test injects (a worker failing mid-lane).
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const LOCAL_LANE_FUNCTION = 'aep-local-fanoutlane';

export interface LaneWorkersOptions {
  workers: number;
  /** Timeout per invocation (ms), as the function's; the worker is killed and replaced past it. */
  timeoutMs: number;
  crashFirstAfterPosts?: number;
  /** Called around each invocation (the stack's usage counters). */
  invoke?: <T>(run: () => Promise<T>) => Promise<T>;
}

export interface LaneWorkers {
  /** The endpoint fan-out's Lambda client is given (AEP_FANOUT_LANE_ENDPOINT). */
  endpoint: string;
  functionName: string;
  /** Invocations answered, and those answered as failed (crash or timeout). */
  counts(): { invocations: number; failed: number; replaced: number };
  stop(): Promise<void>;
}

interface Outcome {
  ok: boolean;
  body: string;
}

interface WorkerMessage {
  type: 'ready' | 'result';
  id?: number;
  ok?: boolean;
  body?: string;
}

class WorkerSlot {
  private child: ChildProcess | undefined;
  private ready: Promise<void> = Promise.resolve();
  private current: { id: number; settle: (outcome: Outcome) => void } | undefined;
  private nextId = 0;
  private generation = 0;
  /** Set at stop: an exit then is not a crash, and no worker replaces it. */
  private stopped = false;

  constructor(
    private readonly index: number,
    private readonly options: LaneWorkersOptions,
    private readonly onReplaced: () => void,
  ) {
    this.spawn();
  }

  private spawn(): void {
    const crash = this.generation === 0 ? this.options.crashFirstAfterPosts : undefined;
    this.generation += 1;
    const child = fork(fileURLToPath(new URL('./lane-worker-process.ts', import.meta.url)), [], {
      execArgv: process.execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: workerEnvironment(this.index, crash),
    });
    this.child = child;
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (message: WorkerMessage) => {
        if (message.type !== 'ready') return;
        child.off('message', onMessage);
        resolve();
      };
      child.on('message', onMessage);
      child.once('exit', () => reject(new Error('lane worker exited before it was ready')));
    });
    this.ready.catch(() => undefined);
    child.on('message', (message: WorkerMessage) => {
      if (message.type !== 'result' || this.current === undefined || message.id !== this.current.id) return;
      const { settle } = this.current;
      this.current = undefined;
      settle({ ok: message.ok === true, body: message.body ?? '' });
    });
    child.once('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      const current = this.current;
      this.current = undefined;
      current?.settle({ ok: false, body: JSON.stringify({ errorType: 'Runtime.ExitError', errorMessage: `worker exited (${signal ?? `code ${String(code)}`}) during the invocation` }) });
      if (!this.stopped) {
        this.onReplaced();
        this.spawn();
      }
    });
  }

  async run(payload: string): Promise<Outcome> {
    await this.ready.catch(() => undefined);
    const child = this.child;
    if (child === undefined) return { ok: false, body: JSON.stringify({ errorType: 'Runtime.ExitError', errorMessage: 'no worker' }) };
    const id = (this.nextId += 1);
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => {
        // Past the function's timeout Lambda ends the environment; so does this.
        if (this.current?.id === id) child.kill('SIGKILL');
      }, this.options.timeoutMs);
      this.current = {
        id,
        settle: (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        },
      };
      child.send({ type: 'invoke', id, payload });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    if (child === undefined || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

/** The stack's environment (its relay settings and credentials), the fault only where this process gets it. */
function workerEnvironment(index: number, crashAfterPosts: number | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AEP_LOCAL_LANE_WORKER: String(index) };
  delete env.AEP_LOCAL_LANE_CRASH_AFTER_POSTS;
  if (crashAfterPosts !== undefined) env.AEP_LOCAL_LANE_CRASH_AFTER_POSTS = String(crashAfterPosts);
  return env;
}

export async function startLaneWorkers(options: LaneWorkersOptions): Promise<LaneWorkers> {
  const tallies = { invocations: 0, failed: 0, replaced: 0 };
  const slots = Array.from({ length: Math.max(1, options.workers) }, (_, index) => new WorkerSlot(index, options, () => (tallies.replaced += 1)));
  const idle = [...slots];
  const waiting: Array<(slot: WorkerSlot) => void> = [];
  const take = (): Promise<WorkerSlot> => {
    const slot = idle.shift();
    return slot === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(slot);
  };
  const give = (slot: WorkerSlot): void => {
    const next = waiting.shift();
    if (next === undefined) idle.push(slot);
    else next(slot);
  };
  const invoke = options.invoke ?? (<T>(run: () => Promise<T>) => run());
  const server = createServer((request, response) => {
    void handle(request, response);
  });
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(request.url ?? '');
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== 'POST' || match === null || decodeURIComponent(match[1] as string) !== LOCAL_LANE_FUNCTION) {
      response.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' });
      response.end(JSON.stringify({ Type: 'User', message: `Function not found: ${request.url ?? ''}` }));
      return;
    }
    tallies.invocations += 1;
    const slot = await take();
    let outcome: Outcome;
    try {
      outcome = await invoke(async () => {
        const result = await slot.run(Buffer.concat(chunks).toString('utf8'));
        if (!result.ok) throw Object.assign(new Error('lane worker failed'), { outcome: result });
        return result;
      }).catch((error: unknown) => (error as { outcome?: Outcome }).outcome ?? { ok: false, body: JSON.stringify({ errorType: 'Error', errorMessage: String(error) }) });
    } finally {
      give(slot);
    }
    if (!outcome.ok) tallies.failed += 1;
    // Lambda answers a function error with 200 and the error in a header; the SDK reads it as FunctionError.
    response.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST', ...(outcome.ok ? {} : { 'x-amz-function-error': 'Unhandled' }) });
    response.end(outcome.body);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    functionName: LOCAL_LANE_FUNCTION,
    counts: () => ({ ...tallies }),
    stop: async () => {
      await Promise.all(slots.map((slot) => slot.stop()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
