import { describe, expect, it } from 'vitest';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { mintId, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket } from '../support/ws-client.ts';
import type { TestSocket } from '../support/ws-client.ts';

/**
 * The control policy is decided before claims are read, so a sender it denies gets the same
 * answer (`unauthorized`) for claimed, unclaimed and unknown sessions: it cannot map the live
 * sessions it may not command. The test fails if the answers differ.
 */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function claimant(token: string, agent: string, session: string): Promise<TestSocket> {
  const socket = await helloSocket({ role: 'both', identity: { agent }, capabilities: { control: { accepts: ['control.cancel'] } } }, { token });
  socket.send(sessionEvent(session, 0, { agent, source: `aep://h/agent/${agent}/session/${session}` }));
  await pause(300);
  return socket;
}

async function answerTo(sender: TestSocket, session: string): Promise<string> {
  const command = { aep: '0.1', id: mintId(), type: 'control.cancel', time: new Date().toISOString(), source: 'aep://h/agent/phone', agent: 'phone', session, data: { scope: 'session' } };
  sender.send(command);
  const frame = await Promise.race([sender.next((candidate) => candidate.cause === command.id, 3000).then((found) => String(found.code)), pause(1500).then(() => 'delivered')]);
  return frame;
}

describe('control policy before claims', () => {
  it('answers a denied sender unauthorized for claimed, unclaimed and unknown sessions alike', async () => {
    const { adminToken } = await tenantWithAdmin('oracle');
    const denied = await issue(adminToken, { scopes: ['control', 'consume'] });
    const allowed = await issue(adminToken, { scopes: ['control', 'consume'] });
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    expect((await admin('PUT', '/policy', { token: adminToken, body: { default: 'allow', rules: [{ effect: 'deny', tokens: [denied.tokenId] }] } })).status).toBe(200);
    const claimed = uniqueName('claimed');
    const idle = uniqueName('idle');
    const live = await claimant(emitter.token, 'worker', claimed);
    const finished = await claimant(emitter.token, 'worker', idle);
    await finished.close();
    await pause(300);
    const deniedSocket = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: denied.token });
    const answers = [await answerTo(deniedSocket, claimed), await answerTo(deniedSocket, idle), await answerTo(deniedSocket, uniqueName('never'))];
    expect(answers).toEqual(['unauthorized', 'unauthorized', 'unauthorized']);
    // The allowed sender still sees the difference it is entitled to.
    const allowedSocket = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: allowed.token });
    expect([await answerTo(allowedSocket, claimed), await answerTo(allowedSocket, idle)]).toEqual(['delivered', 'no-route']);
    await Promise.all([live.close(), deniedSocket.close(), allowedSocket.close()]);
  });

  it("matches agent rules on the session's owner, and treats a session without one as matching deny rules only", async () => {
    const { adminToken } = await tenantWithAdmin('oracle-agents');
    const sender = await issue(adminToken, { scopes: ['control', 'consume'] });
    const beta = await issue(adminToken, { scopes: ['emit'], agents: ['beta'] });
    const alpha = await issue(adminToken, { scopes: ['emit'], agents: ['alpha'] });
    const policy = { default: 'deny', rules: [{ effect: 'allow', agents: ['beta'] }] };
    expect((await admin('PUT', '/policy', { token: adminToken, body: policy })).status).toBe(200);
    const betaSession = uniqueName('beta');
    const alphaSession = uniqueName('alpha');
    const betaSocket = await claimant(beta.token, 'beta', betaSession);
    const alphaSocket = await claimant(alpha.token, 'alpha', alphaSession);
    const senderSocket = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: sender.token });
    expect(await answerTo(senderSocket, betaSession)).toBe('delivered');
    expect(await answerTo(senderSocket, alphaSession)).toBe('unauthorized');
    expect(await answerTo(senderSocket, uniqueName('unknown'))).toBe('unauthorized');
    await Promise.all([betaSocket.close(), alphaSocket.close(), senderSocket.close()]);
  });
});
