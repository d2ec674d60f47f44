import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashTokenSecret, mintTokenSecret } from '../../src/auth/token-secret.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { localTableNames } from '../../local/create-tables.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';

/**
 * A full run on a stack of its own whose output is captured: every issued token is used on
 * every surface (header and access_token query, good and bad requests, revocation), and
 * none of them appears anywhere in what the stack printed (AEP-0003 §8.1).
 */
describe('logs', () => {
  let stack: StackProcess;
  beforeAll(async () => {
    stack = await startStackProcess({ env: { AEP_DEV_TOKEN: mintTokenSecret() } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('never contain an issued token, including access_token query values', async () => {
    const store = tenantTableStores(createDynamoClient({ region: 'us-east-1', endpoint: stack.dynamoEndpoint, credentials: LOCAL_CREDENTIALS }), localTableNames('aep-local').tenants, Date.now);
    await store.tenants.ensureTenant('logs');
    const tokens = [mintTokenSecret(), mintTokenSecret()];
    for (const [index, token] of tokens.entries()) await store.tokens.putToken({ tenant: 'logs', tokenId: `tok-logs-${index}`, scopes: ['emit', 'consume', 'control'] }, hashTokenSecret(token));
    const [token, revoked] = tokens as [string, string];
    const event = { aep: '0.1', id: 'log-1', type: 'progress.status', time: new Date().toISOString(), source: 'aep://t/agent/a', agent: 'a', session: 'log-session', seq: 0 };
    const post = (secret: string, body: string) =>
      fetch(`${stack.baseUrl}/events`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'aep-version': '0.1', 'content-type': 'application/json' }, body });
    expect((await post(token, JSON.stringify(event))).status).toBe(202);
    expect((await post(token, '{bad json')).status).toBe(400);
    expect((await fetch(`${stack.baseUrl}/events?access_token=${token}`)).status).toBe(200);
    const sse = await fetch(`${stack.baseUrl}/stream?live=0&from=all&access_token=${token}`);
    await sse.text();
    expect((await fetch(`${stack.baseUrl}/stream?filter=%7B%22seq%22%3A1%7D&access_token=${token}`)).status).toBe(400);
    for (const url of [`${stack.baseUrl.replace('http', 'ws')}/socket?access_token=${token}`, `${stack.baseUrl.replace('http', 'ws')}/socket`]) {
      const socket = new WebSocket(url, url.includes('access_token') ? {} : { headers: { authorization: `Bearer ${token}` } });
      await new Promise((resolve) => socket.once('open', resolve));
      socket.send(JSON.stringify({ type: 'subscribe', id: 'before-hello' }));
      await new Promise((resolve) => socket.once('close', resolve));
    }
    await store.tokens.revokeToken('logs', 'tok-logs-1');
    expect((await post(revoked, JSON.stringify({ ...event, id: 'log-2' }))).status).toBe(401);
    await fetch(`${stack.baseUrl}/stream?access_token=${revoked}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const output = stack.output();
    expect(output).toContain('"path":"/events"');
    for (const secret of tokens) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain(encodeURIComponent(secret));
    }
    // The dev token is printed once, in the startup banner, for the person running the stack.
    expect(output.split(stack.devToken).length - 1).toBe(1);
  });
});
