/**
 * Reads what the pre-deploy check judges (infra/deploy-preflight.ts) from the deploying account:
 * the region's Lambda concurrency (GetAccountSettings), and which functions of this stage exist
 * and what they reserve now (ListFunctions, GetFunctionConcurrency). Credentials, region and
 * endpoint come from the SDK's usual chain; `AWS_ENDPOINT_URL_LAMBDA` points it elsewhere (the
 * tests' local stand-in).
 */
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient, paginateListFunctions } from '@aws-sdk/client-lambda';
import type { LambdaAccountConcurrency } from './deploy-preflight.ts';
import { stackNameOf } from './relay-settings.ts';

export interface AccountReading {
  region: string;
  account: LambdaAccountConcurrency;
  /** Executions this stage's functions reserve now (0 before the first deploy). */
  heldByStack: number;
  /** This stage's functions found in the region: none before the stack's first deploy (or after a rolled-back one). */
  stackFunctions: number;
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
    return { region, account: { concurrentExecutions, unreservedConcurrentExecutions }, ...(await stackFunctionsOf(client, stage)) };
  } finally {
    client.destroy();
  }
}

/**
 * This stage's functions and the reservations they hold now. CloudFormation names an unnamed
 * function `{stack}-{logical id}-{suffix}`, and the relay's functions all sit under the
 * `Functions` construct (infra/relay-stack.ts), so their names start with `AepRelay-{stage}-Functions`.
 */
async function stackFunctionsOf(client: LambdaClient, stage: string): Promise<Pick<AccountReading, 'heldByStack' | 'stackFunctions'>> {
  const prefix = `${stackNameOf(stage)}-Functions`;
  let heldByStack = 0;
  let stackFunctions = 0;
  for await (const page of paginateListFunctions({ client }, {})) {
    for (const fn of page.Functions ?? []) {
      if (fn.FunctionName === undefined || !fn.FunctionName.startsWith(prefix)) continue;
      stackFunctions += 1;
      const concurrency = await client.send(new GetFunctionConcurrencyCommand({ FunctionName: fn.FunctionName }));
      heldByStack += concurrency.ReservedConcurrentExecutions ?? 0;
    }
  }
  return { heldByStack, stackFunctions };
}
