import { describe, expect, inject, it } from 'vitest';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { relayEnvironment } from '../../src/config/relay-environment.ts';
import type { ConnectionDeadline } from '../../src/relay/ports/index.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { managementApiPoster } from '../../src/gateway/connection-poster.ts';
import { dynamoClient, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, isType } from '../support/ws-client.ts';

/**
 * The deployed `deadline` function (AWS keeps connection deadlines with it; the local stack with
 * timers): run here against the local stack's DynamoDB and `@connections` endpoint.
 */
function deadlineEnvironment() {
  return relayEnvironment({ tables: tableNames, dynamoEndpoint: inject('dynamoEndpoint'), managementEndpoint: inject('managementEndpoint') });
}

function deadlineRuntime() {
  const config = readRelayConfig(deadlineEnvironment());
  const poster = managementApiPoster({ endpoint: inject('managementEndpoint'), region: config.region, credentials: inject('managementCredentials') });
  return createRuntime({ config, dynamo: dynamoClient(), poster });
}

/** The handler module builds its default handler from the environment at load, as in Lambda. */
async function deadlineModule() {
  Object.assign(process.env, deadlineEnvironment());
  return import('../../functions/deadline/handler.ts');
}

describe('deadline function', () => {
  it('waits until the deadline and closes the connection with a token-expired closing frame', async () => {
    const tenant = uniqueName('deadline');
    const token = await tenantWithToken(tenant, ['consume'], { agents: ['a'] });
    const socket = await helloSocket({}, { token });
    const runtime = deadlineRuntime();
    const tokenId = (await runtime.tokens.listTokens(tenant))[0]!.tokenId;
    const [connectionId] = await runtime.connections.connectionsOfToken(tenant, tokenId);
    expect(connectionId).toBeDefined();
    const atMs = Date.now() + 700;
    const handOns: ConnectionDeadline[] = [];
    const { createHandler } = await deadlineModule();
    const handler = createHandler(runtime, () => ({ schedule: async (deadline) => void handOns.push(deadline) }));
    await handler({ tenant, connectionId, atMs, reason: 'token-expired' }, lambdaContext('deadline', 900_000));
    expect(Date.now()).toBeGreaterThanOrEqual(atMs);
    expect(await socket.next(isType('closing'))).toMatchObject({ reason: 'token-expired' });
    await socket.closed;
    expect(handOns).toEqual([]);
    expect(await runtime.connections.getConnection(tenant, connectionId!)).toBeUndefined();
  });

  it('hands a deadline past its own timeout on to a fresh invocation, closing nothing yet', async () => {
    const tenant = uniqueName('deadline-far');
    const token = await tenantWithToken(tenant, ['consume']);
    const socket = await helloSocket({}, { token });
    const runtime = deadlineRuntime();
    const tokenId = (await runtime.tokens.listTokens(tenant))[0]!.tokenId;
    const [connectionId] = await runtime.connections.connectionsOfToken(tenant, tokenId);
    const deadline = { tenant, connectionId: connectionId!, atMs: Date.now() + 3_600_000, reason: 'token-expired' as const };
    const handOns: Array<{ to: string; deadline: ConnectionDeadline }> = [];
    const { createHandler } = await deadlineModule();
    const handler = createHandler(runtime, (to) => ({ schedule: async (handed) => void handOns.push({ to, deadline: handed }) }));
    // 15.2 s left: the handler keeps 15 s back, so it waits 0.2 s and hands on.
    await handler(deadline, lambdaContext('aep-deadline', 15_200));
    expect(handOns).toEqual([{ to: 'aep-deadline', deadline }]);
    expect(socket.all(isType('closing'))).toEqual([]);
    expect(await runtime.connections.getConnection(tenant, connectionId!)).toBeDefined();
    await socket.close();
  });
});
