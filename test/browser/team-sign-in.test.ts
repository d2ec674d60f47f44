/**
 * Team sign-in in real Chromium: the console sends the browser to the embedded dev provider's
 * own login page (`local/dev-identity-provider.ts`), comes back signed in as the person, tails
 * the tenant live, answers an agent's attention request, and the session's history names the
 * person who answered. A person outside the mapped group comes back refused, with the message
 * naming the tenant's rule set. Neither the code nor the credential stays in the address bar.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { admin } from '../support/admin-client.ts';
import { postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { consoleBrowser } from './support/chromium.ts';
import { goTo, openConsole } from './support/console-page.ts';

const browser = consoleBrowser();

async function localToken(scopes: string[]): Promise<string> {
  const response = await admin('POST', '/tokens', { body: { scopes, label: 'team sign-in browser test' } });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

/** From the console's sign-in page through the provider's login page as `login`, back to the console. */
async function signInWithProvider(page: Page, login: string): Promise<void> {
  await page.getByLabel('Tenant').fill('local');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('button', { name: 'Sign in with Local dev provider' }).click();
  // The provider's page, not the console's.
  await page.waitForURL((url) => !url.pathname.startsWith('/console/'));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.waitForURL((url) => url.pathname.startsWith('/console/'));
}

describe('team sign-in in the console (Chromium)', () => {
  it('signs in through the provider, tails live, answers an attention request, and history shows who answered', async () => {
    const agentToken = await localToken(['emit', 'consume', 'control']);
    const session = uniqueName('team-attn');
    const agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token: agentToken, agent: 'sim', session, accepts: ['control.attention.respond'] });
    await agent.start();
    const { page, close } = await openConsole(browser());
    await signInWithProvider(page, 'demo');
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    expect(await page.getByTestId('signed-in-person').textContent()).toBe('Dana Demo (Local dev provider)');
    // The code and state were taken out of the address bar; the credential was never in it.
    expect(new URL(page.url()).search).toBe('');
    const held = await page.evaluate<string | null>("sessionStorage.getItem('aep-console-token')");
    expect(held).toMatch(/^aep_/);
    expect(page.url()).not.toContain(held as string);

    // The live tail of the tenant, filtered to this test's session.
    await page.getByRole('status').filter({ hasText: 'connected' }).first().waitFor();
    await page.getByLabel('Sessions').fill(session);
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await expect.poll(() => page.getByTestId('tail-state').textContent()).toContain('live');
    expect((await postEvents(JSON.stringify(sessionEvent(session, 100, { data: { phase: 'seen live' } })), { token: agentToken })).status).toBe(202);
    await page.getByTestId('tail-events').getByRole('button').filter({ hasText: 'progress.status' }).first().waitFor();

    // The agent asks; the person answers.
    const requestId = agent.requestAttention('May I deploy to staging?');
    await goTo(page, 'Attention');
    const card = page.locator(`[data-request="${requestId}"]`);
    await card.getByRole('button', { name: 'allow' }).click();
    await expect.poll(() => card.getByTestId('command-outcome').getAttribute('data-state'), { timeout: 15_000 }).toBe('accepted');

    // History names the person beside the answer (the stored command's text is untouched).
    await goTo(page, 'Sessions');
    await page.getByLabel('Session id starts with').fill(session);
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Search' }).click();
        return page.getByRole('button', { name: session }).count();
      })
      .toBe(1);
    await page.getByRole('button', { name: session }).click();
    const answered = page.getByRole('button').filter({ hasText: 'control.attention.respond' });
    await answered.first().waitFor();
    expect(await answered.first().getByTestId('sent-by').textContent()).toBe('by Dana Demo (Local dev provider)');
    const command = JSON.parse(agent.receivedCommands[0] as string) as Record<string, unknown>;
    expect(JSON.stringify(command)).not.toContain('Dana Demo');
    await close();
    await agent.stop();
  });

  it("refuses a person outside the mapped group with the message naming the tenant's rule set", async () => {
    const { page, close } = await openConsole(browser());
    await signInWithProvider(page, 'visitor');
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('no rule of this tenant\'s rule set "local demo rules" matches');
    expect(await alert.textContent()).toContain('Victor Visitor');
    expect(await page.getByRole('navigation', { name: 'Views' }).count()).toBe(0);
    expect(new URL(page.url()).search).toBe('');
    await close();
  });
});
