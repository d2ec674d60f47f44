/** Builds the console from its sources once per test file, so the page under test is the current code. */
import { join } from 'node:path';
import { build } from 'vite';
import { repoRoot } from '../../support/local-stack-process.ts';

export async function buildConsole(): Promise<void> {
  await build({ configFile: join(repoRoot, 'console', 'vite.config.ts'), logLevel: 'error' });
}
