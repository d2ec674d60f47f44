/**
 * The tenant console in real Chromium against the shared local stack: sign-in, the live tail
 * with a filter, pause and resume, the attention inbox answering the simulated agent, live
 * agents with commands, sessions, tokens and policy for admins, and what a consume-only
 * token is refused. With AEP_SCREENSHOTS=1 (`npm run screenshots`) it also writes the
 * screenshots under docs/screenshots/; a normal run leaves them alone.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import WebSocket from 'ws';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { postEvents, sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { repoRoot } from '../support/local-stack-process.ts';
import { consoleBrowser } from './support/chromium.ts';
import { PHONE, consoleUrl, goTo, openConsole, signIn } from './support/console-page.ts';

const SCREENSHOTS = process.env.AEP_SCREENSHOTS === '1';
const SCREENSHOT_DIR = join(repoRoot, 'docs', 'screenshots');
const ALL_COMMANDS = ['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume'];

const browser = consoleBrowser();

async function startAgent(token: string, session: string, agent = 'sim'): Promise<SimulatedAgent> {
  const simulated = new SimulatedAgent({ baseUrl: inject('baseUrl'), token, agent, session, accepts: ALL_COMMANDS });
  await simulated.start();
  return simulated;
}

async function post(token: string, event: Record<string, unknown>): Promise<string> {
  const text = JSON.stringify(event);
  const response = await postEvents(text, { token });
  expect(response.status).toBe(202);
  return text;
}

/** What the WebSocket handshake answers a token: 101 while it is valid, 401 once revoked. */
async function handshakeStatus(token: string): Promise<number> {
  const socket = new WebSocket(`${inject('baseUrl').replace(/^http/, 'ws')}/socket`, { headers: { authorization: `Bearer ${token}` } });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_request, response) => {
      socket.terminate();
      resolve(response.statusCode ?? 0);
    });
    socket.once('error', reject);
  });
}

async function screenshot(page: Page, name: string, fullPage = false): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage });
}

/** No sideways scrolling at this width: everything fits the screen. */
async function fitsWidth(page: Page): Promise<boolean> {
  // A string: the root tsconfig has no DOM types, and this runs in the page.
  return page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');
}

describe('the tenant console in Chromium', () => {
  it('is served at /console/ with a strict content security policy', async () => {
    const response = await fetch(consoleUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await response.text()).toContain('<div id="app">');
    const escaped = await fetch(`${inject('baseUrl')}/console/..%2f..%2fpackage.json`);
    expect(escaped.status).toBe(404);
    const bare = await fetch(`${inject('baseUrl')}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/console/']);
    expect((await fetch(consoleUrl(), { method: 'POST' })).status).toBe(405);
  });

  it('loads with no failed request and no console error: its icon is inline, so the browser asks for no /favicon.ico', async () => {
    const context = await browser().newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('requestfailed', (request) => problems.push(`${request.url()} failed: ${request.failure()?.errorText ?? ''}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.url()} answered ${response.status()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
    await page.goto(consoleUrl(), { waitUntil: 'networkidle' });
    await page.getByLabel('Relay token').waitFor();
    // Chromium's own icon fetch is not one of the page's network events (headless, it may make
    // none), so the page shows it declares an icon the browser can load under its CSP
    // (img-src 'self' data:): a browser then asks for no /favicon.ico, which the relay 404s.
    const icon = await page.evaluate<{ href: string; width: number }>(
      `new Promise((resolve) => {
        const link = document.querySelector('link[rel~="icon"]');
        if (link === null) return resolve({ href: '', width: 0 });
        const image = new Image();
        image.onload = () => resolve({ href: link.href, width: image.naturalWidth });
        image.onerror = () => resolve({ href: link.href, width: 0 });
        image.src = link.href;
      })`,
    );
    expect(icon.href).toMatch(/^data:image\/svg\+xml,/);
    expect(icon.width).toBe(16);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('signs in by keyboard with a pasted token kept in sessionStorage only, never in the URL; a bad token is refused in words', async () => {
    const tenant = uniqueName('con-in');
    const token = await tenantWithToken(tenant, ['consume']);
    const { page, close } = await openConsole(browser());
    const consoleMessages: string[] = [];
    page.on('console', (message) => consoleMessages.push(message.text()));
    await page.getByLabel('Relay token').fill('aep_not_a_real_token');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('did not accept this token');
    await page.getByLabel('Relay token').fill(token);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    const stored = await page.evaluate<{ session: Record<string, string>; local: Record<string, string>; href: string; cookie: string }>(
      '({ session: { ...sessionStorage }, local: { ...localStorage }, href: location.href, cookie: document.cookie })',
    );
    expect(Object.values(stored.session)).toEqual([token]);
    expect(stored.local).toEqual({});
    expect(stored.cookie).toBe('');
    expect(stored.href).not.toContain(token);
    // Every view keeps it out of the address bar.
    for (const view of ['Attention', 'Sessions', 'Agents', 'Live tail']) {
      await goTo(page, view);
      expect(page.url()).not.toContain(token);
    }
    expect(consoleMessages.join('\n')).not.toContain(token);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Relay token').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await close();
  });

  it('tails events posted by the test with a filter applied, shows an envelope as received, and resumes after a pause from where it paused', async () => {
    const tenant = uniqueName('con-tail');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    const watched = uniqueName('watched');
    const other = uniqueName('other');
    const { page, close } = await openConsole(browser());
    await signIn(page, token);
    await page.getByLabel('Sessions').fill(watched);
    await page.getByLabel('Types').fill('progress.*, tool.denied');
    await page.getByLabel('Severity at least').selectOption('notice');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    expect(JSON.parse((await page.getByTestId('applied-filter').textContent()) ?? '')).toEqual({ session: watched, type: ['progress.*', 'tool.denied'], severity: { gte: 'notice' } });
    await expect.poll(() => page.getByTestId('tail-state').textContent()).toContain('live');
    // Empty, it says what it tails: what arrives from now on (a session's history is elsewhere).
    expect(await page.getByTestId('tail-events').textContent()).toBe("No events since the tail opened: it shows what arrives from now on. A session's earlier events are in Sessions.");

    const shown = await post(token, sessionEvent(watched, 0, { severity: 'warning', data: { phase: 'shown' } }));
    await post(token, sessionEvent(watched, 1, { severity: 'info', data: { phase: 'too quiet' } }));
    await post(token, sessionEvent(other, 0, { severity: 'error', data: { phase: 'other session' } }));
    const events = page.getByTestId('tail-events');
    await events.getByRole('button').filter({ hasText: 'progress.status' }).first().waitFor();
    await screenshot(page, 'tail-desktop');
    await events.getByRole('button').filter({ hasText: 'progress.status' }).first().click();
    await page.getByText('As received (one line)').click();
    expect(await page.getByTestId('raw-envelope').textContent()).toBe(shown);
    await screenshot(page, 'tail-detail-desktop');

    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => page.getByTestId('tail-state').textContent()).toContain('paused');
    const whilePaused = await post(token, sessionEvent(watched, 2, { severity: 'critical', data: { phase: 'while paused' } }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await events.getByRole('listitem').count()).toBe(1);
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => events.getByRole('listitem').count(), { timeout: 10_000 }).toBe(2);
    await events.getByRole('button').first().click();
    expect(await page.getByTestId('raw-envelope').textContent()).toBe(whilePaused);
    // Resumed after what was shown: the first event is not delivered twice, the filtered ones never.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await events.getByRole('listitem').count()).toBe(2);
    await close();
  });

  it('explains a filter the relay would refuse, at the field, without opening a stream', async () => {
    const token = await tenantWithToken(uniqueName('con-bad'), ['consume']);
    const { page, close } = await openConsole(browser());
    await signIn(page, token);
    await page.getByLabel('Types').fill('*');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await expect.poll(() => page.getByLabel('Types').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('alert').textContent()).not.toBe('');
    expect(await page.getByTestId('applied-filter').textContent()).toBe('{}');
    await close();
  });

  it('lists the simulated agent\'s open attention request, answers it, and shows it accepted, answered and resolved', async () => {
    const tenant = uniqueName('con-attn');
    const agentToken = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const humanToken = await tenantWithToken(tenant, ['consume', 'control']);
    const session = uniqueName('attn');
    const agent = await startAgent(agentToken, session);
    const { page, close } = await openConsole(browser());
    await signIn(page, humanToken);
    const older = agent.requestAttention('May I read the README?');
    const requestId = agent.requestAttention('May I run the migration on staging?');
    await goTo(page, 'Attention');
    const open = page.getByTestId('open-requests');
    await open.getByRole('article').nth(1).waitFor();
    // Newest first, with the question and its options.
    expect(await open.getByRole('heading').allTextContents()).toEqual(['May I run the migration on staging?', 'May I read the README?']);
    expect(await page.getByRole('link', { name: /Attention/ }).textContent()).toContain('2');
    await screenshot(page, 'inbox-desktop');
    const card = page.locator(`[data-request="${requestId}"]`);
    await card.getByRole('button', { name: 'allow' }).click();
    await expect.poll(() => card.getByTestId('command-outcome').getAttribute('data-state'), { timeout: 15_000 }).toBe('accepted');
    await expect.poll(() => card.getByTestId('terminal').textContent(), { timeout: 15_000 }).toBe('resolved: answered');
    expect(await card.getByTestId('command-outcome').textContent()).toContain('accepted by the agent');
    expect(await card.textContent()).toContain('answered with option allow');
    // It left the open list; the other request is still waiting.
    expect(await open.getByRole('heading').allTextContents()).toEqual(['May I read the README?']);
    expect(await page.getByTestId('closed-requests').getByRole('heading').allTextContents()).toContain('May I run the migration on staging?');
    await screenshot(page, 'inbox-answered-desktop');
    const command = JSON.parse(agent.receivedCommands[0] as string) as Record<string, unknown>;
    expect(command).toMatchObject({ type: 'control.attention.respond', session, subject: requestId, cause: requestId, data: { answer: { option: 'allow' } } });
    expect(agent.receivedCommands).toHaveLength(1);
    expect(older).not.toBe(requestId);
    await close();
    await agent.stop();
  });

  it('renders a form request\'s fields (AEP-0006), checks required ones, and shows a no-route refusal in words when no agent is connected', async () => {
    const tenant = uniqueName('con-form');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('form');
    const { page, close } = await openConsole(browser());
    await signIn(page, token);
    await goTo(page, 'Attention');
    const request = sessionEvent(session, 0, {
      type: 'attention.requested',
      severity: 'notice',
      data: {
        kind: 'form',
        prompt: 'Release settings',
        fields: [
          { id: 'count', type: 'number', label: 'How many replicas', required: true, min: 1, max: 9 },
          { id: 'env', type: 'select', label: 'Environment', choices: [{ id: 'staging', label: 'Staging' }, { id: 'prod', label: 'Production' }] },
          { id: 'notify', type: 'boolean', label: 'Notify the team' },
        ],
        respond_via: ['control'],
      },
    });
    await post(token, request);
    const card = page.locator(`[data-request="${String(request.id)}"]`);
    await card.waitFor();
    await card.getByRole('button', { name: 'Send answer' }).click();
    expect(await card.getByRole('alert').textContent()).toBe('How many replicas is required');
    await card.getByLabel('How many replicas (required)').fill('3');
    await card.getByLabel('Environment').selectOption('staging');
    await card.getByLabel('Notify the team').check();
    await card.getByRole('button', { name: 'Send answer' }).click();
    // The emitter posted over HTTP and holds no socket: the relay has no route for the answer.
    await expect.poll(() => card.getByTestId('command-outcome').getAttribute('data-state'), { timeout: 15_000 }).toBe('refused');
    expect(await card.getByTestId('command-outcome').textContent()).toContain('no agent is connected for this session');
    await close();
  });

  it('shows live agents with what each accepts, and pauses one where it accepts pause', async () => {
    const tenant = uniqueName('con-agents');
    const agentToken = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const session = uniqueName('busy');
    const agent = await startAgent(agentToken, session, 'builder');
    const { page, close } = await openConsole(browser());
    await signIn(page, agentToken);
    await goTo(page, 'Agents');
    const card = page.getByRole('article', { name: `builder in session ${session}` });
    await expect.poll(async () => {
      if ((await card.count()) === 0) await page.getByRole('button', { name: 'Refresh' }).click();
      return card.count();
    }, { timeout: 10_000 }).toBe(1);
    expect(await card.textContent()).toContain('control.attention.respond, control.cancel, control.pause, control.resume');
    await screenshot(page, 'agents-desktop');
    await card.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => card.getByTestId('command-outcome').getAttribute('data-state'), { timeout: 15_000 }).toBe('accepted');
    await expect.poll(() => agent.receivedCommands.map((text) => JSON.parse(text).type)).toEqual(['control.pause']);
    await close();
    await agent.stop();
  });

  it('lists sessions from GET /sessions, or says plainly that this relay does not serve them', async () => {
    const tenant = uniqueName('con-sess');
    const token = await tenantWithToken(tenant, ['emit', 'consume']);
    const session = uniqueName('hist');
    await post(token, sessionEvent(session, 0));
    const served = (await fetch(`${inject('baseUrl')}/sessions`, { headers: { authorization: `Bearer ${token}` } })).status !== 404;
    const { page, close } = await openConsole(browser());
    await signIn(page, token);
    await goTo(page, 'Sessions');
    if (served) {
      // Summaries are folded in by fan-out, just after the event is stored: search until it is listed.
      await page.getByLabel('Session id starts with').fill(session);
      await expect.poll(async () => {
        await page.getByRole('button', { name: 'Search' }).click();
        return page.getByRole('button', { name: session }).count();
      }, { timeout: 10_000 }).toBe(1);
      expect(await page.getByRole('row').filter({ hasText: session }).textContent()).toContain('tester');
      await screenshot(page, 'sessions-desktop');
      await page.getByRole('button', { name: session }).click();
      await page.getByRole('heading', { name: `Session ${session}` }).waitFor();
      await page.getByRole('button').filter({ hasText: 'progress.status' }).first().waitFor();
      await screenshot(page, 'timeline-desktop');
    } else {
      await expect.poll(() => page.getByTestId('sessions-unavailable').textContent()).toContain('Not available on this relay');
      await screenshot(page, 'sessions-desktop');
    }
    await close();
  });

  it('lets an admin issue a token (secret shown once) and rotate it: the old secret stops working, the new one works until revoked', async () => {
    const tenant = uniqueName('con-admin');
    const adminToken = await tenantWithToken(tenant, ['consume', 'control', 'admin']);
    const { page, close } = await openConsole(browser());
    await signIn(page, adminToken);
    await goTo(page, 'Tokens & policy');
    await page.getByRole('checkbox', { name: 'control', exact: true }).check();
    await page.getByLabel('Label', { exact: true }).fill('phone');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const secretBox = page.getByTestId('new-secret');
    await secretBox.waitFor();
    const tokenId = (await page.getByTestId('new-token-id').textContent()) ?? '';
    const secret = await page.getByLabel('Secret').inputValue();
    expect(secret).not.toBe('');
    await screenshot(page, 'admin-desktop');
    const row = page.locator(`tr[data-token="${tokenId}"]`);
    expect(await row.getByTestId('token-status').textContent()).toBe('active');
    expect(await row.textContent()).toContain('consume, control');
    const handshake = () => handshakeStatus(secret);
    expect(await handshake()).toBe(101);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(secret);

    // Rotation: a new secret, shown once, and the old token revoked.
    await row.getByRole('button', { name: `Rotate ${tokenId}` }).click();
    await expect.poll(() => page.getByTestId('new-token-id').textContent()).not.toBe(tokenId);
    const rotatedId = (await page.getByTestId('new-token-id').textContent()) ?? '';
    const rotatedSecret = await page.getByLabel('Secret').inputValue();
    expect(rotatedSecret).not.toBe(secret);
    await expect.poll(() => row.getByTestId('token-status').textContent()).toBe('revoked');
    expect(await handshake()).toBe(401);
    await page.getByRole('button', { name: 'Done' }).click();

    const rotatedRow = page.locator(`tr[data-token="${rotatedId}"]`);
    expect(await rotatedRow.getByTestId('token-status').textContent()).toBe('active');
    const rotatedHandshake = () => handshakeStatus(rotatedSecret);
    expect(await rotatedHandshake()).toBe(101);
    await rotatedRow.getByRole('button', { name: `Revoke ${rotatedId}` }).click();
    await expect.poll(() => rotatedRow.getByTestId('token-status').textContent()).toBe('revoked');
    expect(await page.getByTestId('admin-message').textContent()).toContain(`Revoked ${rotatedId}`);
    expect(await rotatedHandshake()).toBe(401);
    await close();
  });

  it('shows the relay\'s policy validation error at the editor, and saves a valid policy', async () => {
    const adminToken = await tenantWithToken(uniqueName('con-pol'), ['admin', 'consume']);
    const { page, close } = await openConsole(browser());
    await signIn(page, adminToken);
    await goTo(page, 'Tokens & policy');
    const editor = page.getByLabel('Policy (JSON)');
    await expect.poll(() => editor.inputValue()).toContain('"default"');
    await editor.fill('{ "default": "allow", "rules": [{ "effect": "maybe" }] }');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => page.getByTestId('policy-problem').textContent()).toContain('effect must be "allow" or "deny"');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await editor.fill('{ "default": "allow", "rules": [{ "effect": "deny", "types": ["control.cancel"] }] }');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy saved.').waitFor();
    expect(await page.getByTestId('policy-problem').count()).toBe(0);
    await close();
  });

  it('gives a consume-only token no admin pane, and shows its attempt to answer as refused', async () => {
    const tenant = uniqueName('con-ro');
    const agentToken = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const watcherToken = await tenantWithToken(tenant, ['consume']);
    const session = uniqueName('ro');
    const agent = await startAgent(agentToken, session);
    const { page, close } = await openConsole(browser());
    await signIn(page, watcherToken);
    const requestId = agent.requestAttention('Deploy to production?');
    await goTo(page, 'Attention');
    const card = page.locator(`[data-request="${requestId}"]`);
    await card.waitFor();
    // The admin probe has answered by now (the WebSocket and the inbox came after it).
    await expect.poll(() => page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents()).toEqual(['Live tail', 'Attention1', 'Sessions', 'Agents']);
    await card.getByRole('button', { name: 'allow' }).click();
    await expect.poll(() => card.getByTestId('command-outcome').getAttribute('data-state'), { timeout: 15_000 }).toBe('refused');
    expect(await card.getByTestId('command-outcome').textContent()).toContain('this token may not send this command');
    await screenshot(page, 'inbox-refused-desktop');
    expect(agent.receivedCommands).toEqual([]);
    await page.goto(`${consoleUrl()}#/admin`);
    await page.getByRole('heading', { name: 'Live tail' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Tokens & policy' }).count()).toBe(0);
    await close();
    await agent.stop();
  });

  it('works at phone width: every view fits the screen, and an attention request is answered by keyboard', async () => {
    const tenant = uniqueName('con-phone');
    const agentToken = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const humanToken = await tenantWithToken(tenant, ['consume', 'control', 'admin']);
    const session = uniqueName('phone');
    const agent = await startAgent(agentToken, session);
    await post(agentToken, sessionEvent(uniqueName('noise'), 0, { severity: 'notice', data: { phase: 'building' } }));
    const { page, close } = await openConsole(browser(), PHONE);
    await screenshot(page, 'sign-in-phone');
    await signIn(page, humanToken);
    expect(await fitsWidth(page)).toBe(true);
    await post(agentToken, sessionEvent(uniqueName('noise'), 0, { severity: 'warning', data: { phase: 'testing' } }));
    await page.getByTestId('tail-events').getByRole('button').first().waitFor();
    await screenshot(page, 'tail-phone');
    const requestId = agent.requestAttention('Merge the release branch?');
    await goTo(page, 'Attention');
    const card = page.locator(`[data-request="${requestId}"]`);
    await card.waitFor();
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'inbox-phone');
    await card.getByRole('button', { name: 'allow' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => card.getByTestId('terminal').textContent(), { timeout: 15_000 }).toBe('resolved: answered');
    expect(await card.getByTestId('command-outcome').getAttribute('data-state')).toBe('accepted');
    await screenshot(page, 'inbox-answered-phone');
    for (const [view, name] of [['Agents', 'agents-phone'], ['Sessions', 'sessions-phone'], ['Tokens & policy', 'admin-phone']] as const) {
      await goTo(page, view);
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await fitsWidth(page), view).toBe(true);
      await screenshot(page, name, name === 'admin-phone');
    }
    await close();
    await agent.stop();
  });

  it('names every form control and keeps a visible focus ring', async () => {
    const token = await tenantWithToken(uniqueName('con-a11y'), ['consume', 'admin']);
    const { page, close } = await openConsole(browser());
    await signIn(page, token);
    for (const view of ['Live tail', 'Tokens & policy']) {
      await goTo(page, view);
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      const unnamed = await page.evaluate<string[]>(`
        [...document.querySelectorAll('input, select, textarea, button')]
          .filter((element) => {
            const labelled = element.id !== '' && document.querySelector('label[for="' + element.id + '"]') !== null;
            const named = (element.getAttribute('aria-label') ?? '') !== '' || (element.textContent ?? '').trim() !== '';
            return !labelled && !named;
          })
          .map((element) => element.outerHTML)
      `);
      expect(unnamed, view).toEqual([]);
    }
    await page.keyboard.press('Tab');
    const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).not.toBe('none');
    await close();
  });
});

