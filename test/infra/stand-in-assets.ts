/**
 * Stand-in bundles and console build for infra tests that check the template, not the code
 * (relay-stack.test.ts loads the real bundles): one handler module shared by every function.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { FUNCTION_NAMES } from '../../infra/bundle.ts';
import type { FunctionName } from '../../infra/bundle.ts';
import { RelayStack } from '../../infra/relay-stack.ts';
import { settingsFromContext } from '../../infra/relay-settings.ts';

const assetDir = mkdtempSync(join(tmpdir(), 'aep-stand-in-assets-'));
writeFileSync(join(assetDir, 'index.mjs'), 'export const handler = async () => undefined;\n');
const consoleDir = mkdtempSync(join(tmpdir(), 'aep-stand-in-console-'));
writeFileSync(join(consoleDir, 'index.html'), '<!doctype html>\n');

export const standInAssetDirs = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, assetDir])) as Record<FunctionName, string>;
export const standInConsoleDir = consoleDir;

/** The relay stack for `context` (`-c` settings), synthesized from stand-in assets; environment-agnostic unless given `env`. */
export function synthesizeWithStandIns(context: Record<string, string>, id = 'AepRelay-test', env?: { account: string; region: string }): { stack: RelayStack; template: Template } {
  const app = new App({ context });
  const stack = new RelayStack(app, id, { settings: settingsFromContext(app.node), assetDirs: standInAssetDirs, consoleDir: standInConsoleDir, ...(env === undefined ? {} : { env }) });
  return { stack, template: Template.fromStack(stack) };
}
