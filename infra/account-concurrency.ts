/**
 * Reads what the pre-deploy check judges (infra/deploy-preflight.ts) from the deploying account:
 * the region's Lambda concurrency (GetAccountSettings) and what this stage's functions reserve now
 * (ListFunctions, GetFunctionConcurrency). Credentials, region and endpoint come from the SDK's
 * usual chain; `AWS_ENDPOINT_URL_LAMBDA` points it elsewhere (the tests' local stand-in).
 */
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient, paginateListFunctions } from '@aws-sdk/client-lambda';
import type { LambdaAccountConcurrency } from './deploy-preflight.ts';
import { stackNameOf } from './relay-settings.ts';

export interface AccountReading {
  region: string;
  account: LambdaAccountConcurrency;
  /** Executions this stage's functions reserve now (0 before the first deploy). */
  heldByStack: number;
}

export async function readAccountConcurrency(stage: string): Promise<AccountReading> {
  // The SDK reads AWS_REGION and the profile's region; the CDK CLI also takes AWS_DEFAULT_REGION.
  const defaultRegion = process.env.AWS_REGION === undefined ? process.env.AWS_DEFAULT_REGION : undefined;
  const client = new LambdaClient(defaultRegion === undefined ? {} : { region: defaultRegion });
  try {
    const region = await client.config.region();
    const answer = await client.send(new GetAccountSettingsCommand({}));
    const concurrentExecutions = answer.AccountLimit?.ConcurrentExecutions;
    const unreservedConcurrentExecutions = answer.AccountLimit?.UnreservedConcurrentExecutions;
    if (concurrentExecutions === undefined || unreservedConcurrentExecutions === undefined) {
      throw new Error('GetAccountSettings gave no AccountLimit.ConcurrentExecutions / UnreservedConcurrentExecutions');
    }
    return { region, account: { concurrentExecutions, unreservedConcurrentExecutions }, heldByStack: await heldByStack(client, stage) };
  } finally {
    client.destroy();
  }
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
