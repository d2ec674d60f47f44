/**
 * `cdk.json`'s `context`: the CDK feature flags and any settings kept there, which the CDK CLI
 * hands the app under the command line's `-c`. Read by what builds the stack or judges it outside
 * the CLI (the preflight, the CDK tests), so they see what `cdk deploy` would.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function projectContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}
