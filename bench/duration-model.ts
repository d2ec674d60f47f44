/**
 * Lambda duration as it would be billed in AWS, modelled rather than taken from the local wall
 * clock: locally a PostToConnection answers in about 0 ms and DynamoDB Local is slower than
 * DynamoDB, so neither the fan-out figure nor the others' would be AWS's.
 *
 * The model, per function invocation:
 * - fan-out: its DynamoDB calls one after another at `DYNAMO_CALL_MS` each, plus its posts,
 *   `concurrency` in flight at `POST_MS` each, and never less than the measured CPU per
 *   delivery times its deliveries (the posts cannot go faster than the function computes them);
 * - every other function: its DynamoDB calls at `DYNAMO_CALL_MS` each plus 1 ms of handler
 *   work, never more than its measured local wall time (which carries DynamoDB Local's slower
 *   answers).
 * The SSE stream function is left out here (it runs for a stream's whole life: see the standing costs).
 */
import type { StackUsage } from '../local/usage.ts';
import { FUNCTION_NAMES } from '../local/usage.ts';
import { MEMORY_MB } from './prices.ts';

/** PostToConnection round trip in-region (the fan-out scale stage's simulated 20 ms). */
export const AWS_POST_MS = 20;
/** A DynamoDB call in-region: single-digit milliseconds (DynamoDB's documented latency class); 5 ms taken. */
export const AWS_DYNAMO_CALL_MS = 5;

export interface DurationModelInputs {
  /** Posts fan-out keeps in flight (`AEP_FANOUT_CONCURRENCY`). */
  concurrency: number;
  /** CPU per delivery (ms), measured by the fan-out scale stage; 0 when not measured. */
  cpuMsPerDelivery: number;
}

/** Modelled billed GB-seconds of `usage` (stream function excluded). */
export function modelledGbSeconds(usage: StackUsage, inputs: DurationModelInputs): number {
  let gbSeconds = 0;
  for (const name of FUNCTION_NAMES) {
    if (name === 'stream') continue;
    const fn = usage.functions[name];
    if (fn.invocations === 0) continue;
    let ms: number;
    if (name === 'fanout') {
      const posts = usage.postToConnection.calls;
      const postMs = Math.max((posts * AWS_POST_MS) / Math.max(1, inputs.concurrency), posts * inputs.cpuMsPerDelivery);
      ms = fn.dynamoCalls * AWS_DYNAMO_CALL_MS + postMs + fn.invocations;
    } else {
      ms = Math.min(fn.billedMs, fn.dynamoCalls * AWS_DYNAMO_CALL_MS + fn.invocations);
    }
    gbSeconds += (ms / 1000) * (MEMORY_MB[name] / 1024);
  }
  return gbSeconds;
}
