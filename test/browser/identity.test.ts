/**
 * The console's Agents view shows which live claims are verified (AEP-0003 §8.3 identity
 * cards): the roster's `verified` member, and "unverified" for an asserted name beside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildConsole } from '../../infra/console-build.ts';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { testOperator } from '../support/identity-cards.ts';
import { sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket } from '../support/ws-client.ts';
import { launchChromium } from './support/chromium.ts';
import { goTo, openConsole, signIn } from './support/console-page.ts';

let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('the console and identity cards', () => {
  it('marks the verified claim with its operator and the other as unverified', async () => {
    const { adminToken } = await tenantWithAdmin('con-card');
    const acme = await testOperator('acme', 'EdDSA');
    expect((await admin('PUT', '/operators/acme', { token: adminToken, body: { jwks: acme.jwks } })).status).toBe(200);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const viewer = await issue(adminToken, { scopes: ['consume', 'control'] });
    const verifiedSession = uniqueName('proven');
    const assertedSession = uniqueName('asserted');
    const sockets = await Promise.all(
      [
        [verifiedSession, await acme.card('worker', ['control.cancel'])],
        [assertedSession, undefined],
      ].map(async ([session, card]) => {
        const socket = await helloSocket({ role: 'emitter', identity: { agent: 'worker', ...(card === undefined ? {} : { card }) }, capabilities: { control: { accepts: ['control.cancel'] } } }, { token: emitter.token });
        socket.send(sessionEvent(session as string, 0, { agent: 'worker', source: `aep://h/agent/worker/session/${session as string}` }));
        return socket;
      }),
    );
    const { page, close } = await openConsole(browser);
    try {
      await signIn(page, viewer.token);
      await goTo(page, 'Agents');
      const verified = page.getByRole('article', { name: `worker in session ${verifiedSession}` });
      const asserted = page.getByRole('article', { name: `worker in session ${assertedSession}` });
      await expect.poll(async () => {
        if ((await verified.count()) === 0 || (await asserted.count()) === 0) await page.getByRole('button', { name: 'Refresh' }).click();
        return (await verified.count()) + (await asserted.count());
      }, { timeout: 10_000 }).toBe(2);
      expect(await verified.getByTestId('identity').textContent()).toMatch(/^verified by acme until \d{4}-/);
      expect(await asserted.getByTestId('identity').textContent()).toBe('unverified (asserted name)');
    } finally {
      await close();
      await Promise.all(sockets.map((socket) => socket.close()));
    }
  });
});
