/**
 * A near connection deadline (due within the sweep's horizon, `swept-deadlines.ts`) as a message
 * on the deadline queue, delayed until the deadline (SQS DelaySeconds): the deadline function
 * receives it then, through the queue's event source mapping, and closes the connection. Nothing
 * waits in between, and the mapping's maximum concurrency bounds the invocations
 * (infra/constructs/deadlines.ts). The sweep still finds the deadline in the index whatever
 * becomes of the message.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../relay/ports/clock.ts';
import type { ConnectionDeadlinesPort } from '../relay/ports/connection-deadlines.ts';

/** SQS's longest message delay (15 minutes), well past the sweep's 2-minute horizon. */
export const MAX_DEADLINE_DELAY_SECONDS = 900;

/**
 * Whole seconds to hold the message: rounded down, so it arrives at most a second early and the
 * function waits out the rest (deadlines are closed on time, not up to a second late).
 */
export function deadlineDelaySeconds(atMs: number, nowMs: number): number {
  return Math.min(MAX_DEADLINE_DELAY_SECONDS, Math.max(0, Math.floor((atMs - nowMs) / 1000)));
}

export function queuedDeadlines(options: { client: SQSClient; queueUrl: string; now: Clock }): ConnectionDeadlinesPort {
  return {
    async schedule(deadline) {
      await options.client.send(
        new SendMessageCommand({ QueueUrl: options.queueUrl, MessageBody: JSON.stringify(deadline), DelaySeconds: deadlineDelaySeconds(deadline.atMs, options.now()) }),
      );
    },
  };
}
