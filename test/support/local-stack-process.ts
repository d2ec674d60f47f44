/**
 * Runs the local stack the way a user does (`node --import tsx local/start.ts`, what `npm start`
 * runs, or `npm start` itself), as a child process, and
 * waits for its ready line. Used by the test run's global setup and by tests that need a
 * stack of their own (restarts, kill -9).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface StackProcess extends StackCoordinates {
  child: ChildProcess;
  /** Everything the stack printed (stdout and stderr), for log assertions. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** What the stack prints at start: where it listens and what it takes. */
export interface StackCoordinates {
  baseUrl: string;
  dynamoEndpoint: string;
  devToken: string;
  /** The loopback-only `@connections` endpoint and the only credentials it accepts. */
  managementEndpoint: string;
  managementCredentials: { accessKeyId: string; secretAccessKey: string };
}

export interface StackProcessOptions {
  env?: Record<string, string>;
  args?: string[];
  timeoutMs?: number;
  /** `npm`: `npm start -- <args>`, the whole chain a person runs (npm, then the stack); default the stack alone, as npm start runs it (`node --import tsx`), so `child` is the stack's own process. */
  via?: 'tsx' | 'npm';
  /** A process group of its own (kill(-pid) then signals the group, as Ctrl-C in a terminal does). */
  detached?: boolean;
}

export async function startStackProcess(options: StackProcessOptions = {}): Promise<StackProcess> {
  const args = options.args ?? ['--in-memory'];
  const [command, commandArgs] =
    options.via === 'npm' ? ['npm', ['start', '--', ...args]] : [join(repoRoot, 'node_modules', '.bin', 'node'), ['--import', 'tsx', join(repoRoot, 'local', 'start.ts'), ...args]];
  const child = spawn(command, commandArgs, {
    cwd: repoRoot,
    detached: options.detached ?? false,
    env: {
      // The stack's settings are the ones given here: none inherited from this process (where a
      // stack started in-process may have written its own).
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AEP_'))),
      // Node 22 from node_modules first, as npm scripts do.
      PATH: `${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      AEP_PORT: '0',
      // Test stacks share one tenant between files running side by side: no per-tenant rate
      // unless a test sets one (npm start's own default is for one person's machine).
      AEP_DEFAULT_EVENTS_PER_SECOND: '0',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<StackCoordinates>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`local stack not ready within ${options.timeoutMs ?? 90_000} ms:\n${output}`)), options.timeoutMs ?? 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const baseUrl = /AEP relay ready: (\S+)/.exec(output)?.[1];
      if (baseUrl === undefined) return;
      clearTimeout(timer);
      resolvePromise({
        baseUrl,
        dynamoEndpoint: /DynamoDB Local: (\S+)/.exec(output)?.[1] ?? '',
        devToken: /Dev token: (\S+)/.exec(output)?.[1] ?? '',
        managementEndpoint: /Admin \(direct\):.* AEP_WS_MANAGEMENT_ENDPOINT=(\S+)/.exec(output)?.[1] ?? '',
        managementCredentials: {
          accessKeyId: /Admin \(direct\):.* AWS_ACCESS_KEY_ID=(\S+)/.exec(output)?.[1] ?? '',
          secretAccessKey: /Admin \(direct\):.* AWS_SECRET_ACCESS_KEY=(\S+)/.exec(output)?.[1] ?? '',
        },
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`local stack exited with code ${code} before it was ready:\n${output}`));
    });
  });
  const started = await ready;
  child.removeAllListeners('exit');
  return {
    ...started,
    child,
    output: () => output,
    stop: (signal: NodeJS.Signals = 'SIGTERM') =>
      new Promise<void>((resolvePromise) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolvePromise();
          return;
        }
        child.once('exit', () => resolvePromise());
        child.kill(signal);
      }),
  };
}
