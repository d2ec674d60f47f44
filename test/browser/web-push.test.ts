/**
 * The console as an installable web app that receives Web Push, in real Chromium against the
 * shared local stack: it registers its service worker and manifest and Chromium reports it
 * installable; "Notify me" asks permission, subscribes with the relay's VAPID key and stores the
 * subscription with the relay; the relay's real push lane then sends a request to it; and the
 * notification's URL opens the console at that request, ready to answer, where answering is an
 * ordinary `control.attention.respond` whose follow-up replaces the notification.
 *
 * Substituted: Chromium's own push service (FCM) is out of reach here, so `pushManager.subscribe`
 * is replaced in the page by one that checks the relay's key and answers a subscription of the
 * local push service stand-in (test/support/push-service-stand-in.ts), which then receives,
 * verifies and decrypts the relay's messages as FCM and the browser would. Permission is granted
 * through the browser context, as a person's click would.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { startPushServiceStandIn } from '../support/push-service-stand-in.ts';
import type { PushServiceStandIn, ReceivedPush } from '../support/push-service-stand-in.ts';
import { tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, consoleBrowser } from './support/chromium.ts';
import { consoleUrl, goTo, openConsole, signIn } from './support/console-page.ts';

const browser = consoleBrowser();
let standIn: PushServiceStandIn;
beforeAll(async () => {
  standIn = await startPushServiceStandIn();
});
afterAll(async () => {
  await standIn?.close();
});

describe('the console as an installable web app with Web Push', () => {
  it('registers its service worker and manifest, and Chromium finds it installable', async () => {
    // A profile on disk: Chromium never offers to install from an off-the-record context.
    const profile = mkdtempSync(join(tmpdir(), 'aep-console-profile-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const page = await context.newPage();
    await page.goto(consoleUrl());
    const close = async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    };
    const scriptUrl = await page.evaluate<string>('navigator.serviceWorker.ready.then((registration) => registration.active ? registration.active.scriptURL : "")');
    expect(scriptUrl).toBe(`${consoleUrl()}sw.js`);
    const cdp = await page.context().newCDPSession(page);
    const manifest = (await cdp.send('Page.getAppManifest')) as { url: string; errors: unknown[] };
    expect([manifest.url, manifest.errors]).toEqual([`${consoleUrl()}manifest.webmanifest`, []]);
    const installability = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: Array<{ errorId: string }> };
    expect(installability.installabilityErrors.map((error) => error.errorId)).toEqual([]);
    // The page keeps its strict policy: no inline script and no other origin were needed.
    const response = await fetch(consoleUrl());
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await fetch(`${consoleUrl()}sw.js`)).headers.get('cache-control')).toBe('no-cache');
    await close();
  });

  it('"Notify me" stores a subscription; the notification opens the console at the request, answered there', async () => {
    const tenant = uniqueName('con-push');
    const agentToken = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
    const humanToken = await tenantWithToken(tenant, ['consume', 'control']);
    const session = uniqueName('push');
    const agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token: agentToken, agent: 'sim', session, accepts: ['control.attention.respond'] });
    await agent.start();
    const phone = standIn.subscribe(uniqueName('phone'));
    const { context, page, close } = await openConsole(browser());
    await context.grantPermissions(['notifications'], { origin: inject('baseUrl') });
    // The substitution: PushManager.subscribe answers the stand-in's subscription, after checking it was asked for the relay's key.
    await page.evaluate(`(() => {
      const phone = ${JSON.stringify(phone)};
      let held = null;
      PushManager.prototype.getSubscription = async function () { return held; };
      PushManager.prototype.subscribe = async function (options) {
        if (!options.userVisibleOnly) throw new Error('userVisibleOnly is required');
        const key = new Uint8Array(options.applicationServerKey);
        window.__askedKey = btoa(String.fromCharCode(...key)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
        held = { endpoint: phone.endpoint, options: { applicationServerKey: key.buffer }, toJSON: () => ({ endpoint: phone.endpoint, expirationTime: null, keys: phone.keys }), unsubscribe: async () => true };
        return held;
      };
    })()`);
    await signIn(page, humanToken);
    await goTo(page, 'Attention');
    await page.getByRole('button', { name: 'Notify me' }).click({ timeout: 10_000 });
    await page.getByTestId('notify').getByRole('status').filter({ hasText: 'Notifications are on' }).waitFor({ timeout: 10_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await page.getByTestId('notify').textContent()}`);
    });

    const { vapidKey } = (await (await fetch(`${inject('baseUrl')}/push/key`, { headers: { authorization: `Bearer ${humanToken}` } })).json()) as { vapidKey: string };
    expect(await page.evaluate<string>('window.__askedKey')).toBe(vapidKey);
    const listed = (await (await fetch(`${inject('baseUrl')}/push/subscriptions`, { headers: { authorization: `Bearer ${humanToken}` } })).json()) as { subscriptions: Array<Record<string, unknown>> };
    expect(listed.subscriptions).toEqual([expect.objectContaining({ endpoint: phone.endpoint, maxCapture: 'metadata', vapidKey, label: 'desktop browser' })]);

    // The agent asks; the relay's push lane sends the notification the phone would show.
    const requestId = agent.requestAttention('May I rotate the signing key?');
    await standIn.waitFor(() => standIn.received.some((push) => push.endpoint === phone.endpoint), 'the request notification');
    const request = standIn.received.find((push) => push.endpoint === phone.endpoint) as ReceivedPush;
    expect(request.payload).toMatchObject({ kind: 'request', request: { id: requestId, session, agent: 'sim' }, url: `/console/#/inbox/${requestId}` });
    expect(request.text).not.toContain('rotate the signing key');

    // Opening the notification's URL in a new window (what the service worker's notificationclick
    // does when no console window is open) shows the request ready to answer, once the person has
    // signed in there: the token lives in one tab's sessionStorage, never shared with another.
    const opened = await context.newPage();
    await opened.goto(new URL(String(request.payload.url), inject('baseUrl')).href);
    await signIn(opened, humanToken);
    const card = opened.locator(`[data-request="${requestId}"]`);
    await card.waitFor();
    expect(await card.getAttribute('aria-current')).toBe('true');
    expect(await card.getByRole('heading').textContent()).toBe('May I rotate the signing key?');
    await card.getByRole('button', { name: 'allow' }).click();
    await expect.poll(() => card.getByTestId('terminal').textContent()).toBe('resolved: answered');
    expect(JSON.parse(agent.receivedCommands[0] as string)).toMatchObject({ type: 'control.attention.respond', subject: requestId, data: { answer: { option: 'allow' } } });

    // The follow-up replaces the notification (same tag).
    await standIn.waitFor(() => standIn.received.filter((push) => push.endpoint === phone.endpoint && push.payload.kind === 'closed').length > 0, 'the follow-up');
    const followUp = standIn.received.find((push) => push.endpoint === phone.endpoint && push.payload.kind === 'closed') as ReceivedPush;
    expect(followUp.payload.tag).toBe(request.payload.tag);
    await close();
    await agent.stop();
  });
});
