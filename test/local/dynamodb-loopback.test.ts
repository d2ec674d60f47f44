/**
 * DynamoDB Local as the stack runs it listens on 127.0.0.1 only (issue 26, item 11): it takes
 * any credentials, so a listener on another address would hand token digests and events to
 * anyone who reaches it.
 *
 * Checked on the socket, not the configuration. A second listener on the same port succeeds
 * on an address only when no socket already holds that address (or the wildcard) there, so
 * binding `127.0.0.2` and each of this machine's non-loopback addresses (from
 * `os.networkInterfaces()`) at DynamoDB Local's port proves it accepts connections on none of
 * them; a wildcard listener, the control, makes the same probe fail. No packet is sent to a
 * non-loopback address (the workplace forbids that traffic); `127.0.0.2` is loopback, and a
 * connection there is refused, while `127.0.0.1` answers.
 */
import { connect, createServer } from 'node:net';
import type { Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import type { DynamoDbLocal } from '../../local/dynamodb-local.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { createDynamoClient } from '../../src/store/dynamo-client.ts';

/** Whether this process could listen on host:port: 'bound' (then closed) or the error code. */
function probeListen(port: number, host: string): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve('bound')));
  });
}

function probeConnect(port: number, host: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
}

/** This machine's addresses other than loopback (link-local IPv6 carries its interface's scope). */
function otherAddresses(): string[] {
  const addresses: string[] = [];
  for (const [name, entries] of Object.entries(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.internal) continue;
      addresses.push(entry.family === 'IPv6' && entry.address.toLowerCase().startsWith('fe80:') ? `${entry.address}%${name}` : entry.address);
    }
  }
  return addresses;
}

let dynamo: DynamoDbLocal;
let port: number;

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({});
  port = Number(new URL(dynamo.endpoint).port);
});

afterAll(async () => {
  await dynamo?.stop();
});

describe('DynamoDB Local binding', () => {
  it('the probe sees a wildcard listener on every address (the control)', async () => {
    const wildcard: Server = createServer();
    await new Promise<void>((resolve) => wildcard.listen(0, resolve));
    const wildcardPort = (wildcard.address() as { port: number }).port;
    try {
      expect(await probeListen(wildcardPort, '127.0.0.2')).toBe('EADDRINUSE');
      for (const address of otherAddresses()) expect(await probeListen(wildcardPort, address), address).toBe('EADDRINUSE');
      expect(await probeConnect(wildcardPort, '127.0.0.2')).toBe('connected');
    } finally {
      await new Promise((resolve) => wildcard.close(resolve));
    }
  });

  it('answers on 127.0.0.1', async () => {
    const client = createDynamoClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: LOCAL_CREDENTIALS });
    try {
      const tables = await client.send(new ListTablesCommand({}));
      expect(tables.TableNames).toBeDefined();
    } finally {
      client.destroy();
    }
  });

  it('holds no other address of this machine at its port', async () => {
    expect(await probeListen(port, '127.0.0.2')).toBe('bound');
    for (const address of otherAddresses()) expect(await probeListen(port, address), address).toBe('bound');
  });

  it('refuses a connection to another loopback address', async () => {
    expect(await probeConnect(port, '127.0.0.2')).toBe('ECONNREFUSED');
    expect(await probeConnect(port, '127.0.0.1')).toBe('connected');
  });
});
