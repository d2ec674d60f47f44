/**
 * Wake-ups of the sink-retry worker as SQS messages on a standard queue: `SendMessageBatch`
 * (10 messages per call) with the per-message `DelaySeconds` timer (0 to 900 s) for the
 * backoff. The body is the letter's coordinates only: the letter itself stays in DynamoDB, so a
 * lost wake-up loses nothing (redrive schedules it again). Settled from the SQS API reference,
 * not run against AWS from here.
 */
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SinkRetryQueuePort, SinkRetryWakeUp } from '../relay/ports/sink-retry-queue.ts';
import { MAX_WAKE_UP_DELAY_SECONDS } from '../relay/ports/sink-retry-queue.ts';

/** SendMessageBatch takes at most ten entries. */
const MESSAGES_PER_CALL = 10;

export function sqsWakeUps(client: SQSClient, queueUrl: string): SinkRetryQueuePort {
  return {
    async wake(wakeUps, delaySeconds) {
      const delay = Math.min(Math.max(0, Math.ceil(delaySeconds)), MAX_WAKE_UP_DELAY_SECONDS);
      for (let start = 0; start < wakeUps.length; start += MESSAGES_PER_CALL) {
        await sendBatch(client, queueUrl, wakeUps.slice(start, start + MESSAGES_PER_CALL), delay);
      }
    },
  };
}

async function sendBatch(client: SQSClient, queueUrl: string, wakeUps: readonly SinkRetryWakeUp[], delaySeconds: number): Promise<void> {
  const answer = await client.send(
    new SendMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: wakeUps.map((wakeUp, index) => ({ Id: `m${index}`, MessageBody: JSON.stringify({ tenant: wakeUp.tenant, letter: wakeUp.letter, ...(wakeUp.lane === undefined ? {} : { lane: wakeUp.lane }) }), DelaySeconds: delaySeconds })),
    }),
  );
  // A failed entry is reported in a successful answer; a lost wake-up is recoverable (redrive),
  // but the caller is told, so the stream batch or retry message is retried instead.
  const failed = answer.Failed ?? [];
  if (failed.length > 0) throw new Error(`SQS SendMessageBatch refused ${failed.length} of ${wakeUps.length} wake-ups (${failed[0]?.Code ?? 'no code'})`);
}
