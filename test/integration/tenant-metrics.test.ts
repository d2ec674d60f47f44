import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashTokenSecret, mintTokenSecret } from '../../src/auth/token-secret.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { localTableNames } from '../../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';

interface EmfLine {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }> };
  tenant: string;
  code?: string;
  [metric: string]: unknown;
}

/** Every EMF line the stack printed for `tenant`. */
function emfLinesOf(output: string, tenant: string): EmfLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as EmfLine)
    .filter((line) => line.tenant === tenant);
}

/** A metric summed over lines (one per flush), for one refusal code or for none. */
function total(lines: readonly EmfLine[], name: string, code?: string): number {
  return lines.filter((line) => line.code === code).reduce((sum, line) => sum + (typeof line[name] === 'number' ? (line[name] as number) : 0), 0);
}

/**
 * Per-tenant metrics on a stack of its own whose stdout is captured: the handlers' EMF lines
 * carry the tenant, the counts, and a refusal's spec code (docs/operations.md, "Per-tenant metrics").
 */
describe('per-tenant metrics', () => {
  let stack: StackProcess;
  beforeAll(async () => {
    stack = await startStackProcess({ env: { AEP_DEV_TOKEN: mintTokenSecret() } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('are printed as EMF lines with the tenant and its counts', async () => {
    const tenant = 'metered';
    const store = tenantTableStores(createDynamoClient({ region: 'us-east-1', endpoint: stack.dynamoEndpoint, credentials: LOCAL_CREDENTIALS }), localTableNames('aep-local').tenants, Date.now);
    await store.tenants.ensureTenant(tenant);
    const token = mintTokenSecret();
    await store.tokens.putToken({ tenant, tokenId: 'tok-metered', scopes: ['emit', 'consume'] }, hashTokenSecret(token));

    const socket = new WebSocket(`${stack.baseUrl.replace(/^http/, 'ws')}/socket?access_token=${encodeURIComponent(token)}`);
    const frames: Array<Record<string, unknown>> = [];
    const waiters: Array<() => void> = [];
    socket.on('message', (data) => {
      frames.push(JSON.parse(String(data)) as Record<string, unknown>);
      for (const wake of waiters.splice(0)) wake();
    });
    const next = async (type: string): Promise<Record<string, unknown>> => {
      for (;;) {
        const index = frames.findIndex((frame) => frame.type === type);
        if (index >= 0) return frames.splice(index, 1)[0] as Record<string, unknown>;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {} }));
    await next('hello');
    socket.send(JSON.stringify({ type: 'subscribe', id: 'all', filter: {} }));
    await next('subscribed');

    const post = (body: string) =>
      fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'aep-version': '0.1', 'content-type': 'application/json' }, body });
    const event = { aep: '0.1', id: 'metered-1', type: 'progress.status', time: new Date().toISOString(), source: 'aep://t/agent/a', agent: 'a', session: 'metered-session', seq: 0 };
    expect((await post(JSON.stringify(event))).status).toBe(202);
    const refused = await post(JSON.stringify({ ...event, id: 'metered-2', aep: undefined }));
    expect(refused.status).toBe(400);
    const refusalCode = ((await refused.json()) as { error: string }).error;
    expect(refusalCode).toBe('invalid-event');
    expect((await next('progress.status')).id).toBe('metered-1');

    socket.close();
    await new Promise((resolve) => socket.once('close', resolve));
    // $disconnect runs after the close; its flush is the socket's last line.
    const deadline = Date.now() + 10_000;
    while (total(emfLinesOf(stack.output(), tenant), 'SocketsClosed') === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));

    const lines = emfLinesOf(stack.output(), tenant);
    expect(total(lines, 'EventsAdmitted')).toBe(1);
    expect(total(lines, 'EventsRefused', refusalCode)).toBe(1);
    expect(total(lines, 'Deliveries')).toBe(1);
    expect(total(lines, 'SocketsOpened')).toBe(1);
    expect(total(lines, 'SocketsClosed')).toBe(1);
    for (const line of lines) {
      const [directive] = line._aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe('AepRelay');
      expect(directive?.Dimensions).toEqual([line.code === undefined ? ['tenant'] : ['tenant', 'code']]);
    }
  });
});
