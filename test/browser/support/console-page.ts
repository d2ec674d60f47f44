/** Driving the console the way a person does: by labels, roles and visible text. */
import { inject } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';

export const consoleUrl = () => `${inject('baseUrl')}/console/`;

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function openConsole(browser: Browser, viewport = DESKTOP): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport, ...(viewport === PHONE ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(consoleUrl());
  return { context, page, close: () => context.close() };
}

export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('Relay token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  // The WebSocket is up once the header says so; views that command wait for it.
  await page.getByRole('status').filter({ hasText: 'connected' }).first().waitFor();
}

export async function goTo(page: Page, view: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: view }).click();
}
