import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunctions } from '../../infra/bundle.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { mintId } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { openSocket } from '../support/ws-client.ts';

/**
 * What is deployed is what is tested: the esbuild bundles the CDK stack deploys run behind
 * the local gateway (AEP_LOCAL_BUNDLES), and every function answers real clients.
 */
describe('deployable bundles on the local stack', () => {
  let stack: StackProcess;
  let bundleDir: string;
  beforeAll(async () => {
    bundleDir = mkdtempSync(join(tmpdir(), 'aep-bundles-'));
    await bundleFunctions({ outDir: bundleDir });
    stack = await startStackProcess({ env: { AEP_LOCAL_BUNDLES: bundleDir } });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(bundleDir, { recursive: true, force: true });
  });

  it('serves HTTP ingest, the authorizer, the socket, fan-out and SSE from the bundles', async () => {
    const headers = { authorization: `Bearer ${stack.devToken}` };
    const discovery = await fetch(`${stack.baseUrl}/.well-known/aep`, { headers });
    expect(discovery.status).toBe(200);
    // authorizer: no token, no socket
    await expect(openSocket({ baseUrl: stack.baseUrl, token: '' })).rejects.toThrow(/401/);
    const consumer = await openSocket({ baseUrl: stack.baseUrl, token: stack.devToken });
    consumer.send({ type: 'hello', versions: ['0.1'], role: 'consumer', capabilities: {} });
    await consumer.next((frame) => frame.type === 'hello');
    const session = `bundle-${mintId().slice(-8)}`;
    consumer.send({ type: 'subscribe', id: 'b', filter: { session } });
    await consumer.next((frame) => frame.type === 'subscribed');
    const event = { aep: '0.1', id: mintId(), type: 'progress.status', time: new Date().toISOString(), source: 'aep://bundle/agent/a', agent: 'a', session, seq: 0 };
    const posted = await fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { ...headers, 'aep-version': '0.1', 'content-type': 'application/json' }, body: JSON.stringify(event) });
    expect(posted.status).toBe(202);
    expect(await consumer.next((frame) => frame.id === event.id)).toEqual(event);
    const all = await openStream({ from: 'all', live: '0', filter: JSON.stringify({ session }) }, { baseUrl: stack.baseUrl, token: stack.devToken });
    await all.ended;
    expect(all.messages().map((message) => message.json.id)).toEqual([event.id]);
    await consumer.close();
  });
});
