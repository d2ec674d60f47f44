/**
 * The local stack's `@connections` management endpoint is reachable only where the handlers
 * reach it (issue 15 point 8): not on the public port (404), and on its loopback listener only
 * with the stack's management key id (403 otherwise, as API Gateway answers a call without
 * valid IAM credentials). Locally the check is of the SigV4 credential's key id, not a full
 * signature verification.
 */
import { ApiGatewayManagementApiClient, GetConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import WebSocket from 'ws';
import { describe, expect, inject, it } from 'vitest';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { relayEnvironment } from '../../src/config/relay-environment.ts';
import { dynamoClient, postEvents, sessionEvent, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType } from '../support/ws-client.ts';
import type { TestSocket } from '../support/ws-client.ts';

function managementClient(credentials: { accessKeyId: string; secretAccessKey: string }) {
  return new ApiGatewayManagementApiClient({ endpoint: inject('managementEndpoint'), region: 'us-east-1', credentials, maxAttempts: 1 });
}

/** A consumer of its own tenant, subscribed to one session, and its connection id. */
async function subscribedConsumer(prefix: string): Promise<{ client: TestSocket; connectionId: string; token: string; session: string }> {
  const tenant = uniqueName(prefix);
  const token = await tenantWithToken(tenant, ['consume', 'emit']);
  const session = uniqueName('mgmt-session');
  const client = await helloSocket({}, { token });
  client.send({ type: 'subscribe', id: 'sub', filter: { session } });
  await client.next(isType('subscribed'));
  const config = readRelayConfig(relayEnvironment({ tables: tableNames, dynamoEndpoint: inject('dynamoEndpoint') }));
  const runtime = createRuntime({ config, dynamo: dynamoClient() });
  const tokenId = (await runtime.tokens.listTokens(tenant))[0]!.tokenId;
  const [connectionId] = await runtime.connections.connectionsOfToken(tenant, tokenId);
  expect(connectionId).toBeDefined();
  return { client, connectionId: connectionId!, token, session };
}

/** Fan-out still reaches the client: an event posted now arrives (and so did everything posted before it). */
async function expectDelivery(consumer: { client: TestSocket; token: string; session: string }): Promise<void> {
  const event = sessionEvent(consumer.session, 0);
  expect((await postEvents(JSON.stringify(event), { token: consumer.token })).status).toBe(202);
  expect(await consumer.client.next((frame) => frame.id === event.id)).toMatchObject({ session: consumer.session });
}

describe('local @connections management endpoint', () => {
  it('is a loopback listener apart from the public port', () => {
    const management = new URL(inject('managementEndpoint'));
    expect(management.hostname).toBe('127.0.0.1');
    expect(management.port).not.toBe(new URL(inject('baseUrl')).port);
  });

  it('is not served on the public port: POST, GET and DELETE answer 404 and touch no socket', async () => {
    const consumer = await subscribedConsumer('mgmt-public');
    const path = `${inject('baseUrl')}/@connections/${encodeURIComponent(consumer.connectionId)}`;
    for (const method of ['POST', 'GET', 'DELETE']) {
      const response = await fetch(path, { method, ...(method === 'POST' ? { body: JSON.stringify({ type: 'forged-public' }) } : {}) });
      expect(response.status, method).toBe(404);
      await response.body?.cancel();
    }
    await expectDelivery(consumer);
    expect(consumer.client.socket.readyState).toBe(WebSocket.OPEN);
    expect(consumer.client.all(isType('forged-public'))).toEqual([]);
    await consumer.client.close();
  });

  it('refuses requests without credentials or with another key id (403 Forbidden) and touches no socket', async () => {
    const consumer = await subscribedConsumer('mgmt-forbidden');
    const path = `${inject('managementEndpoint')}/@connections/${encodeURIComponent(consumer.connectionId)}`;
    for (const method of ['POST', 'GET', 'DELETE']) {
      const response = await fetch(path, { method, ...(method === 'POST' ? { body: JSON.stringify({ type: 'forged-unsigned' }) } : {}) });
      expect(response.status, method).toBe(403);
      expect(await response.json()).toEqual({ message: 'Forbidden' });
    }
    // Signed by the SDK, but with a key id that is not the stack's (the placeholder that DynamoDB Local takes).
    const stranger = managementClient(LOCAL_CREDENTIALS);
    const refused = await stranger
      .send(new PostToConnectionCommand({ ConnectionId: consumer.connectionId, Data: Buffer.from(JSON.stringify({ type: 'forged-signed' })) }))
      .catch((caught: { $metadata?: { httpStatusCode?: number } }) => caught);
    expect(refused).toMatchObject({ $metadata: { httpStatusCode: 403 } });
    stranger.destroy();
    // A header naming the stack's key id in the wrong place is no credential.
    const misplaced = await fetch(path, { method: 'DELETE', headers: { authorization: `Bearer Credential=${inject('managementCredentials').accessKeyId}/x` } });
    expect(misplaced.status).toBe(403);

    await expectDelivery(consumer);
    expect(consumer.client.socket.readyState).toBe(WebSocket.OPEN);
    expect(consumer.client.all(isType('forged-unsigned'))).toEqual([]);
    expect(consumer.client.all(isType('forged-signed'))).toEqual([]);
    await consumer.client.close();
  });

  it('serves the stack\'s own credentials, and nothing but /@connections/', async () => {
    const consumer = await subscribedConsumer('mgmt-allowed');
    const management = managementClient(inject('managementCredentials'));
    const described = await management.send(new GetConnectionCommand({ ConnectionId: consumer.connectionId }));
    expect(described.ConnectedAt).toBeInstanceOf(Date);
    await management.send(new PostToConnectionCommand({ ConnectionId: consumer.connectionId, Data: Buffer.from(JSON.stringify({ type: 'operator-note' })) }));
    expect(await consumer.client.next(isType('operator-note'))).toEqual({ type: 'operator-note' });
    management.destroy();
    const elsewhere = await fetch(`${inject('managementEndpoint')}/events`, { method: 'POST', body: '{}' });
    expect(elsewhere.status).toBe(404);
    await elsewhere.body?.cancel();
    await consumer.client.close();
  });
});
