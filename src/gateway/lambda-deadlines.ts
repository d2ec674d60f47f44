/**
 * Connection deadlines kept by the `deadline` function: each deadline is one asynchronous
 * invocation (`InvocationType: Event`), which waits until the deadline and closes the
 * connection, or, when the deadline lies beyond its own timeout, waits as long as it may and
 * hands the deadline on to a fresh invocation. Only connections whose token expires within
 * API Gateway's 2 h connection limit get one.
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
