/**
 * Real Chromium for browser tests: Debian's `chromium` package (`.ci/run` installs it when
 * missing) driven by playwright-core, which ships no browser of its own. `AEP_CHROMIUM`
 * names another binary. A missing browser fails the test run; it is never skipped.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { buildConsole } from '../../../infra/console-build.ts';

export const CHROMIUM_PATH = process.env.AEP_CHROMIUM ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no Chromium at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install -y chromium) or set AEP_CHROMIUM`);
  // --no-sandbox: CI containers run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * One Chromium for a test file, with the console built first (the local stack serves the build):
 * registers the file's setup and teardown, and answers the browser once it is running.
 */
export function consoleBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    await buildConsole();
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (browser === undefined) throw new Error('the browser is used before its beforeAll ran');
    return browser;
  };
}
