/**
 * The console signed in with an agent-bound token (issue 26, item 9). Such a token may send
 * only events and commands carrying one of its agents, and may not declare another agent at
 * hello; the console used to say hello as `console` and was refused, and sign-in called that
 * "unreachable". Now the console's hello names no agent (a consumer-only connection, AEP-0003
 * §4 rule 3) and its commands are sent as the token's first bound agent (in the sorted
 * list `GET /token` answers), so it signs in and answers an attention request an agent raised. A hello the
 * relay refuses is reported with the relay's code and detail.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { inject } from 'vitest';
import { consoleBrowser } from './support/chromium.ts';
import { goTo, openConsole, signIn } from './support/console-page.ts';

const browser = consoleBrowser();

describe('the console with an agent-bound token', () => {
  it('signs in, answers an attention request as its bound agent, and sees it accepted and resolved', async () => {
    const tenant = uniqueName('con-bound');
    const agentToken = await tenantWithToken(tenant, ['emit', 'consume', 'control'], { agents: ['worker'] });
    const humanToken = await tenantWithToken(tenant, ['consume', 'control'], { agents: ['ops-phone', 'ops-desk'] });
    const session = uniqueName('bound');
    const agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token: agentToken, agent: 'worker', session, accepts: ['control.attention.respond'] });
    await agent.start();
    const { page, close } = await openConsole(browser());
    try {
      await signIn(page, humanToken);
      const requestId = agent.requestAttention('May I deploy to staging?');
      await goTo(page, 'Attention');
      expect(await page.getByTestId('sender-agent').textContent()).toBe('ops-desk');
      const card = page.locator(`[data-request="${requestId}"]`);
      await card.getByRole('button', { name: 'allow' }).click();
      await expect.poll(() => card.getByTestId('command-outcome').getAttribute('data-state'), { timeout: 15_000 }).toBe('accepted');
      await expect.poll(() => card.getByTestId('terminal').textContent(), { timeout: 15_000 }).toBe('resolved: answered');
      expect(agent.receivedCommands).toHaveLength(1);
      const command = JSON.parse(agent.receivedCommands[0] as string) as Record<string, unknown>;
      expect(command).toMatchObject({ type: 'control.attention.respond', session, subject: requestId, agent: 'ops-desk', source: 'aep://console/agent/ops-desk' });
    } finally {
      await close();
      await agent.stop();
    }
  });

  it('reports the reason a hello is refused in words, not "unreachable"', async () => {
    const token = await tenantWithToken(uniqueName('con-refused'), ['consume']);
    const { page, close } = await openConsole(browser());
    try {
      // The relay no longer refuses the console's hello for any valid token, so the refusal is
      // played by a stand-in for the socket that answers hello with an error frame (AEP-0003
      // §4: the responder refuses in-band, then closes).
      await page.routeWebSocket(/\/socket/, (socket) => {
        socket.onMessage((message) => {
          if (String(message).includes('"hello"')) {
            socket.send(JSON.stringify({ type: 'error', code: 'unauthorized', detail: 'this token is bound to agents ["a"]; hello identity.agent must be one of them' }));
            void socket.close({ code: 1008, reason: 'unauthorized' });
          }
        });
      });
      await page.getByLabel('Relay token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('The relay refused the connection (unauthorized: this token is bound to agents ["a"]');
      expect(await page.getByRole('alert').textContent()).not.toContain('could not be reached');
    } finally {
      await close();
    }
  });
});
