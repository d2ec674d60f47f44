/**
 * A graceful stop of the local stack (issue 26, item 18), started as `npm start` starts it: a
 * child process on a persistent data folder. With a WebSocket and a live SSE stream open,
 * SIGINT or SIGTERM stops it in dependency order (no new connections; sockets closed and their
 * `$disconnect` run; SSE streams ended and their slots released; stream pollers stopped; then
 * DynamoDB Local), so it exits 0 with no error in its output (no `ECONNREFUSED` from a stream
 * or a `$disconnect` outliving the database), and the data folder, opened again, holds no
 * connection state: no connection items, no slot leases (the tenant's connection counter at 0).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { localTableNames } from '../../local/create-tables.ts';
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import { openStream } from '../support/sse-client.ts';
import { openSocket } from '../support/ws-client.ts';

const TABLES = localTableNames('aep-local');
const dataDirs: string[] = [];

afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** Every item of the connections table (connection records, subscriptions, slot leases and counters). */
async function connectionItems(endpoint: string): Promise<Array<Record<string, unknown>>> {
  const client = createDynamoClient({ region: 'us-east-1', endpoint, credentials: LOCAL_CREDENTIALS });
  try {
    const items: Array<Record<string, unknown>> = [];
    let startKey: Record<string, any> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: TABLES.connections, ConsistentRead: true, ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }) }));
      items.push(...((page.Items ?? []) as Array<Record<string, unknown>>));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items;
  } finally {
    client.destroy();
  }
}

/** The per-tenant counter item (`T#{tenant}#COUNTERS`), which is not connection state but a count of it. */
const isCounter = (item: Record<string, unknown>) => /^T#.*#COUNTERS$/.test(String((item.pk as { S?: string } | undefined)?.S));

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a graceful stop of the local stack', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`on ${signal}: exits 0, logs no error, and leaves no connection state in the data folder`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'aep-graceful-'));
      dataDirs.push(dataDir);
      const stack = await startStackProcess({ args: [], env: { AEP_DATA_DIR: dataDir } });
      const socket = await openSocket({ token: stack.devToken, baseUrl: stack.baseUrl });
      socket.send({ type: 'hello', versions: ['0.1'], role: 'consumer', capabilities: {} });
      await socket.next((frame) => frame.type === 'hello');
      socket.send({ type: 'subscribe', id: 'all', filter: {} });
      await socket.next((frame) => frame.type === 'subscribed' || frame.id === 'all');
      const stream = await openStream({}, { token: stack.devToken, baseUrl: stack.baseUrl });
      expect(stream.status).toBe(200);
      await stream.waitFor((items) => items.some((item) => item.kind === 'comment' && item.text.includes('aep stream open')));
      // Both connections are recorded (the stream's once it went live) before the stop.
      await waitUntil(async () => (await connectionItems(stack.dynamoEndpoint)).length >= 4, 'the socket and the stream to be recorded');
      const before = await connectionItems(stack.dynamoEndpoint);

      const exited = new Promise<number | null>((resolve) => stack.child.once('exit', (code) => resolve(code)));
      stack.child.kill(signal);
      expect(await exited).toBe(0);
      await socket.closed;
      await stream.ended;
      const output = stack.output();
      expect(output).not.toMatch(/ECONNREFUSED|"level":"error"|Error:/);

      const reopened = await startDynamoDbLocal({ dataDir: join(dataDir, 'dynamodb') });
      try {
        expect(before.length).toBeGreaterThan(0);
        // What may stay is the tenant's connection counter, at zero: every slot was given back.
        const after = await connectionItems(reopened.endpoint);
        expect(after.filter((item) => !isCounter(item))).toEqual([]);
        for (const counter of after) expect(counter.n, JSON.stringify(counter)).toEqual({ N: '0' });
      } finally {
        await reopened.stop();
      }
    }, 120_000);
  }
});
