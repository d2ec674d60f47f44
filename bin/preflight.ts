/**
 * `npm run preflight -- -c stage=prod -c streamConcurrency=200 …`: before `cdk deploy`, reads the
 * account's Lambda concurrency in the deploying region (GetAccountSettings) and what this stage's
 * functions reserve now (an upgrade), compares it with what the same context would make the stack
 * reserve and run (infra/deploy-preflight.ts), and prints one line per check. Exit 1 when the
 * deploy would fail, 2 when the account cannot be read or the context is wrong, 0 otherwise.
 *
 * It takes the same `-c key=value` as `cdk deploy`, over cdk.json's `context`, and parses them with
 * the stack's own `settingsFromContext`, so both count the same numbers. Credentials and region
 * come from the usual AWS chain (AWS_PROFILE, AWS_REGION, …); `AWS_ENDPOINT_URL_LAMBDA` points the
 * client elsewhere (the tests give it a local stand-in speaking Lambda's REST API).
 */
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient, paginateListFunctions } from '@aws-sdk/client-lambda';
import { App } from 'aws-cdk-lib';
import { preflight } from '../infra/deploy-preflight.ts';
import { projectContext } from '../infra/project-context.ts';
import type { PreflightReport } from '../infra/deploy-preflight.ts';
import { settingsFromContext, stackNameOf } from '../infra/relay-settings.ts';
import { UNRESERVED_MINIMUM } from '../infra/reserved-concurrency.ts';

const USAGE = 'usage: npm run preflight -- [-c key=value …]   (the context keys of cdk deploy; README "Deploy to AWS")';

function contextFromArguments(args: readonly string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg !== '-c' && arg !== '--context') throw new Error(`unknown argument ${JSON.stringify(arg)}`);
    const pair = args[index + 1];
    const equals = pair?.indexOf('=') ?? -1;
    if (pair === undefined || equals <= 0) throw new Error(`${arg} takes key=value, got ${JSON.stringify(pair)}`);
    context[pair.slice(0, equals)] = pair.slice(equals + 1);
    index += 1;
  }
  return context;
}

/**
 * Reservations this stage's functions hold now. CloudFormation names an unnamed function
 * `{stack}-{logical id}-{suffix}`, and the relay's functions all sit under the `Functions`
 * construct (infra/relay-stack.ts), so their names start with `AepRelay-{stage}-Functions`.
 */
async function heldByStack(client: LambdaClient, stage: string): Promise<number> {
  const prefix = `${stackNameOf(stage)}-Functions`;
  let held = 0;
  for await (const page of paginateListFunctions({ client }, {})) {
    for (const fn of page.Functions ?? []) {
      if (fn.FunctionName === undefined || !fn.FunctionName.startsWith(prefix)) continue;
      const concurrency = await client.send(new GetFunctionConcurrencyCommand({ FunctionName: fn.FunctionName }));
      held += concurrency.ReservedConcurrentExecutions ?? 0;
    }
  }
  return held;
}

function render(report: PreflightReport, facts: { region: string; stack: string; quota: number; unreserved: number; held: number }): string {
  const lines = [
    `preflight for ${facts.stack} in ${facts.region}`,
    `  Lambda concurrent executions quota        ${facts.quota}`,
    `  unreserved now                            ${facts.unreserved}`,
    `  reserved by this stack now                ${facts.held}`,
    `  reserved by other functions               ${report.reservedElsewhere}`,
    `  reserved by this deploy                   ${report.reservedByDeploy}`,
    `  unreserved after this deploy              ${report.unreservedAfter} (at least ${UNRESERVED_MINIMUM} must stay)`,
    ...report.findings.map((finding) => `${finding.level.toUpperCase().padEnd(5)} ${finding.check}: ${finding.message}`),
    report.deployWouldFail ? 'the deploy would fail: raise what FAIL names first' : 'the deploy can go ahead',
  ];
  return lines.join('\n');
}

async function main(): Promise<number> {
  let settings;
  try {
    const context = { ...projectContext(), ...contextFromArguments(process.argv.slice(2)) };
    settings = settingsFromContext(new App({ context }).node);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    console.error(USAGE);
    return 2;
  }
  const client = new LambdaClient({});
  try {
    const region = await client.config.region();
    const answer = await client.send(new GetAccountSettingsCommand({}));
    const quota = answer.AccountLimit?.ConcurrentExecutions;
    const unreserved = answer.AccountLimit?.UnreservedConcurrentExecutions;
    if (quota === undefined || unreserved === undefined) throw new Error('GetAccountSettings gave no AccountLimit.ConcurrentExecutions / UnreservedConcurrentExecutions');
    const held = await heldByStack(client, settings.stage);
    const report = preflight({ settings, account: { concurrentExecutions: quota, unreservedConcurrentExecutions: unreserved }, heldByStack: held, region });
    console.log(render(report, { region, stack: stackNameOf(settings.stage), quota, unreserved, held }));
    return report.deployWouldFail ? 1 : 0;
  } catch (error) {
    console.error(`preflight could not read the account's Lambda settings: ${error instanceof Error ? error.message : String(error)}`);
    console.error('it needs credentials allowed lambda:GetAccountSettings, lambda:ListFunctions and lambda:GetFunctionConcurrency, and a region (AWS_REGION or the profile\'s)');
    return 2;
  } finally {
    client.destroy();
  }
}

process.exitCode = await main();
