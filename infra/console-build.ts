/**
 * Builds the console (`console/` -> `console/dist`) with Vite; used by the CDK app before it
 * synthesizes, so a deploy ships the console of the sources it deploys, and by the tests.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'vite';
import { CONSOLE_BUILD_DIR } from './constructs/console-site.ts';

export async function buildConsole(): Promise<string> {
  await build({ configFile: join(CONSOLE_BUILD_DIR, '..', 'vite.config.ts'), logLevel: 'error' });
  if (!existsSync(join(CONSOLE_BUILD_DIR, 'index.html'))) throw new Error(`the console build left no index.html in ${CONSOLE_BUILD_DIR}`);
  return CONSOLE_BUILD_DIR;
}
