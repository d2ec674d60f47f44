/**
 * A near connection deadline (due within the sweep's horizon, `swept-deadlines.ts`) handed to the
 * `deadline` function as an asynchronous invocation (`InvocationType: Event`) of its own, which
 * waits until the deadline (at most the horizon, within its timeout) and closes the connection.
 * Far deadlines are the minute sweep's; no invocation waits longer than the horizon. The
 * function's reserved concurrency bounds these invocations (Lambda retries throttled
 * asynchronous events), and one that fails goes to its on-failure queue; the sweep still finds
 * the deadline in the index either way.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { ConnectionDeadlinesPort } from '../relay/ports/connection-deadlines.ts';

export function lambdaDeadlines(options: { functionName: string; region: string }): ConnectionDeadlinesPort {
  const client = new LambdaClient({ region: options.region });
  return {
    async schedule(deadline) {
      await client.send(new InvokeCommand({ FunctionName: options.functionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(deadline), 'utf8') }));
    },
  };
}
