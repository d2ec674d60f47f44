/**
 * The tenant console in real Chromium against the shared local stack: sign-in, the live tail
 * with a filter, pause and resume, the attention inbox answering the simulated agent, live
 * agents with commands, sessions, tokens and policy for admins, and what a consume-only
 * token is refused. With AEP_SCREENSHOTS=1 (`npm run screenshots`) it also writes the
 * screenshots under docs/screenshots/; a normal run leaves them alone.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { postEvents, sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { repoRoot } from '../support/local-stack-process.ts';
import { launchChromium } from './support/chromium.ts';
import { buildConsole } from './support/console-build.ts';
import { DESKTOP, PHONE, consoleUrl, goTo, openConsole, signIn } from './support/console-page.ts';

const SCREENSHOTS = process.env.AEP_SCREENSHOTS === '1';
const SCREENSHOT_DIR = join(repoRoot, 'docs', 'screenshots');
const ALL_COMMANDS = ['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume'];

let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

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

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: false });
}

/** No sideways scrolling at this width: everything fits the screen. */
async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
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
  });

  it('signs in by keyboard with a pasted token kept in sessionStorage only, never in the URL; a bad token is refused in words', async () => {
    const tenant = uniqueName('con-in');
    const token = await tenantWithToken(tenant, ['consume']);
    const { page, close } = await openConsole(browser);
    const consoleMessages: string[] = [];
    page.on('console', (message) => consoleMessages.push(message.text()));
    await page.getByLabel('Relay token').fill('aep_not_a_real_token');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('did not accept this token');
    await page.getByLabel('Relay token').fill(token);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    const stored = await page.evaluate(() => ({ session: { ...sessionStorage }, local: { ...localStorage }, href: location.href, cookie: document.cookie }));
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
});
