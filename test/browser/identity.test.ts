/**
 * The console and identity cards (AEP-0003 §8.3): the Agents view shows which live claims are
 * verified (the roster's `verified` member, and "unverified" for an asserted name beside it),
 * a session's timeline which commands came from a verified sender, and admins manage the
 * trusted operators, with the relay's refusal shown to an admin token that may not.
 */
import { describe, expect, it } from 'vitest';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { testOperator } from '../support/identity-cards.ts';
import { mintId, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, untilClaimed } from '../support/ws-client.ts';
import { consoleBrowser } from './support/chromium.ts';
import { goTo, openConsole, signIn } from './support/console-page.ts';

const browser = consoleBrowser();

describe('the console and identity cards', () => {
  it('marks the verified claim with its operator and the other as unverified', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('con-card');
    const acme = await testOperator('acme', 'EdDSA', tenant);
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
    const { page, close } = await openConsole(browser());
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

  it('marks the command from a verified sender in the session timeline, and not the other', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('con-vsend');
    const acme = await testOperator('acme', 'ES256', tenant);
    expect((await admin('PUT', '/operators/acme', { token: adminToken, body: { jwks: acme.jwks } })).status).toBe(200);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const sender = await issue(adminToken, { scopes: ['consume', 'control'] });
    const session = uniqueName('timeline');
    const claimant = await helloSocket({ role: 'emitter', identity: { agent: 'worker' }, capabilities: { control: { accepts: ['control.cancel', 'control.pause'] } } }, { token: emitter.token });
    claimant.send(sessionEvent(session, 0, { agent: 'worker', source: `aep://h/agent/worker/session/${session}` }));
    const verified = await helloSocket({ role: 'both', identity: { agent: 'phone', card: await acme.card('phone', []) } }, { token: sender.token });
    const unverified = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: sender.token });
    await untilClaimed({ token: sender.token }, session);
    const command = (type: string) => ({ aep: '0.1', id: mintId(), type, time: new Date().toISOString(), source: 'aep://h/agent/phone', agent: 'phone', session, data: { scope: 'session' } });
    const fromVerified = command('control.cancel');
    const fromUnverified = command('control.pause');
    verified.send(fromVerified);
    await claimant.next((frame) => frame.id === fromVerified.id);
    unverified.send(fromUnverified);
    await claimant.next((frame) => frame.id === fromUnverified.id);
    const { page, close } = await openConsole(browser());
    try {
      await signIn(page, sender.token);
      await goTo(page, 'Sessions');
      const timeline = page.getByRole('list').filter({ has: page.getByText('control.cancel') });
      await expect.poll(async () => {
        if ((await page.getByRole('heading', { name: `Session ${session}` }).count()) === 0) {
          const open = page.getByRole('button', { name: session });
          if ((await open.count()) > 0) await open.click();
          else await page.getByRole('button', { name: 'Search' }).click();
        }
        return timeline.count();
      }, { timeout: 15_000 }).toBe(1);
      const verifiedRow = timeline.getByRole('button').filter({ hasText: 'control.cancel' });
      const unverifiedRow = timeline.getByRole('button').filter({ hasText: 'control.pause' });
      expect(await verifiedRow.getByTestId('sender-verified').textContent()).toBe('verified sender (operator acme)');
      expect(await unverifiedRow.getByTestId('sender-verified').count()).toBe(0);
      expect(await timeline.getByTestId('sender-verified').count()).toBe(1);
    } finally {
      await close();
      await Promise.all([claimant.close(), verified.close(), unverified.close()]);
    }
  });

  it('lets a tenant-wide admin trust an operator with an inline JWKS and remove it, and shows a bound admin the refusal', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('con-ops');
    const acme = await testOperator('acme', 'EdDSA', tenant);
    const { page, close } = await openConsole(browser());
    try {
      await signIn(page, adminToken);
      await goTo(page, 'Tokens & policy');
      const panel = page.getByRole('region', { name: 'Trusted operators (identity cards)' });
      await panel.getByText('No trusted operators').waitFor();
      await panel.getByLabel('Operator name').fill('acme');
      await panel.getByLabel('Public keys').fill(JSON.stringify(acme.jwks));
      await panel.getByRole('button', { name: 'Trust operator' }).click();
      const row = panel.getByTestId('operator-table').locator('tr[data-operator="acme"]');
      await row.waitFor();
      expect(await row.getByRole('cell').first().textContent()).toBe('1 inline key(s)');
      const listed = (await (await admin('GET', '/operators', { token: adminToken })).json()) as { operators: Array<{ name: string; jwks?: unknown }> };
      expect(listed.operators).toEqual([expect.objectContaining({ name: 'acme', jwks: acme.jwks })]);
      await panel.getByRole('button', { name: 'Remove acme' }).click();
      await panel.getByText('No trusted operators').waitFor();
      expect(await panel.getByTestId('operators-message').textContent()).toBe('Removed acme.');
      expect(((await (await admin('GET', '/operators', { token: adminToken })).json()) as { operators: unknown[] }).operators).toEqual([]);
    } finally {
      await close();
    }

    const bound = await issue(adminToken, { scopes: ['admin', 'consume'], agents: ['worker'] });
    const second = await openConsole(browser());
    try {
      await signIn(second.page, bound.token);
      await goTo(second.page, 'Tokens & policy');
      const panel = second.page.getByRole('region', { name: 'Trusted operators (identity cards)' });
      await panel.getByText('No trusted operators').waitFor();
      await panel.getByLabel('Operator name').fill('acme');
      await panel.getByLabel('Public keys').fill(JSON.stringify(acme.jwks));
      await panel.getByRole('button', { name: 'Trust operator' }).click();
      const refusal = panel.getByTestId('operator-problem');
      await refusal.waitFor();
      expect(await refusal.textContent()).toBe(`changing the tenant's trusted operators needs an admin token bound to no agent, without expiry and reading at full capture; this one is bound to ["worker"]`);
      expect(((await (await admin('GET', '/operators', { token: adminToken })).json()) as { operators: unknown[] }).operators).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
