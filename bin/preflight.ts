/**
 * `npm run preflight -- -c stage=prod -c streamConcurrency=200 …`: before `cdk deploy`, reads the
 * account's Lambda concurrency in the deploying region and what this stage's functions reserve
 * now (an upgrade; infra/account-concurrency.ts), compares it with what the same context would
 * make the stack reserve and run (infra/deploy-preflight.ts), and prints one line per check.
 * Exit 1 when the deploy would fail, 2 when the account cannot be read or the context is wrong,
 * 0 otherwise.
 *
 * It takes the same `-c key=value` as `cdk deploy`, over cdk.json's `context`, and parses them with
 * the stack's own `settingsFromContext`, so both count the same numbers. Credentials and region
 * come from the usual AWS chain (AWS_PROFILE, AWS_REGION, …).
 */
import { App } from 'aws-cdk-lib';
import { readAccountConcurrency } from '../infra/account-concurrency.ts';
import type { AccountReading } from '../infra/account-concurrency.ts';
import { preflight } from '../infra/deploy-preflight.ts';
import type { PreflightReport } from '../infra/deploy-preflight.ts';
import { projectContext } from '../infra/project-context.ts';
import { settingsFromContext, stackNameOf } from '../infra/relay-settings.ts';
import type { RelaySettings } from '../infra/relay-settings.ts';
import { UNRESERVED_MINIMUM } from '../infra/reserved-concurrency.ts';
import { scriptArguments } from './cli/script-arguments.ts';

const USAGE = `Usage: npm run preflight -- [-c key=value ...]

Before cdk deploy: reads the account's Lambda concurrency in the deploying region and what this
stage's functions reserve now, compares it with what the same context would make the stack
reserve, and prints one line per check. Exit 1 when the deploy would fail, 2 when the account
cannot be read or the context is wrong, 0 otherwise.

  -c, --context key=value   a context key of cdk deploy (docs/operations.md "Settings"), over cdk.json's
                            context; repeat it for several`;

const { values } = scriptArguments({
  command: 'npm run preflight --',
  usage: USAGE,
  config: { options: { context: { type: 'string', short: 'c', multiple: true } } },
});

function contextFromArguments(pairs: readonly string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new Error(`-c takes key=value, got ${JSON.stringify(pair)}`);
    context[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return context;
}

function render(report: PreflightReport, stack: string, reading: AccountReading): string {
  return [
    `preflight for ${stack} in ${reading.region}`,
    `  Lambda concurrent executions quota        ${reading.account.concurrentExecutions}`,
    `  unreserved now                            ${reading.account.unreservedConcurrentExecutions}`,
    `  functions of this stack now               ${reading.stackFunctions}${reading.stackFunctions === 0 ? ' (a first deploy)' : ''}`,
    `  reserved by this stack now                ${reading.heldByStack}`,
    `  reserved by other functions               ${report.reservedElsewhere}`,
    `  reserved by this deploy                   ${report.reservedByDeploy}`,
    `  unreserved after this deploy              ${report.unreservedAfter} (at least ${UNRESERVED_MINIMUM} must stay)`,
    ...report.findings.map((finding) => `${finding.level.toUpperCase().padEnd(5)} ${finding.check}: ${finding.message}`),
    report.deployWouldFail ? 'the deploy would fail: raise what FAIL names first' : 'the deploy can go ahead',
  ].join('\n');
}

async function main(): Promise<number> {
  let settings: RelaySettings;
  try {
    const context = { ...projectContext(), ...contextFromArguments(values.context ?? []) };
    settings = settingsFromContext(new App({ context }).node);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    console.error(USAGE);
    return 2;
  }
  let reading: AccountReading;
  try {
    reading = await readAccountConcurrency(settings.stage);
  } catch (error) {
    console.error(`preflight could not read the account's Lambda settings: ${error instanceof Error ? error.message : String(error)}`);
    console.error("it needs credentials allowed lambda:GetAccountSettings, lambda:ListFunctions and lambda:GetFunctionConcurrency, and a region (AWS_REGION or the profile's)");
    return 2;
  }
  const report = preflight({ settings, account: reading.account, heldByStack: reading.heldByStack, stackFunctions: reading.stackFunctions, region: reading.region });
  console.log(render(report, stackNameOf(settings.stage), reading));
  return report.deployWouldFail ? 1 : 0;
}

process.exitCode = await main();
