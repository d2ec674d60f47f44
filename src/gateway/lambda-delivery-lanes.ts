/**
 * Delivery lanes run by the lane worker function (`functions/fanoutlane`), one synchronous
 * invocation (`RequestResponse`) per lane. Synchronous, so the batch ends only once every lane
 * has ended (the order rule of `fanout/delivery-lanes.ts`); a lane's work is well under the
 * 6 MB synchronous payload (its events once, then connection ids and indexes).
 *
 * The SDK makes one attempt: an Invoke it retried after a lost response could run a lane twice
 * at once. Retries are fan-out's, after the failed run has ended; a function error (the worker
 * threw, crashed or timed out: `FunctionError` in the response) rejects like a refused call.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { FanoutCounts } from '../relay/fanout/connection-delivery.ts';
import type { DeliveryLanesPort } from '../relay/fanout/delivery-lanes-port.ts';

export interface LambdaLanesOptions {
  functionName: string;
  region: string;
  /** The Lambda API endpoint (the local stack's worker processes); the region's when absent. */
  endpoint?: string;
}

export function lambdaDeliveryLanes(options: LambdaLanesOptions): DeliveryLanesPort {
  const client = new LambdaClient({
    region: options.region,
    maxAttempts: 1,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
  });
  return {
    async deliver(work) {
      const response = await client.send(new InvokeCommand({ FunctionName: options.functionName, InvocationType: 'RequestResponse', Payload: Buffer.from(JSON.stringify(work), 'utf8') }));
      const body = response.Payload === undefined ? '' : Buffer.from(response.Payload).toString('utf8');
      if (response.FunctionError !== undefined) throw new LaneRunFailed(`lane worker ${response.FunctionError}: ${body.slice(0, 300)}`);
      return countsOf(body);
    },
  };
}

export class LaneRunFailed extends Error {
  override readonly name = 'LaneRunFailed';
}

function countsOf(body: string): FanoutCounts {
  const parsed = JSON.parse(body) as Partial<FanoutCounts>;
  const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  return { posted: count(parsed.posted), dropped: count(parsed.dropped), disconnected: count(parsed.disconnected), closed: count(parsed.closed) };
}
