/**
 * Wake-ups of the sink-retry worker as SQS messages on a standard queue: `SendMessageBatch`
 * (10 messages per call) with the per-message `DelaySeconds` timer (0 to 900 s) for the
 * backoff. The body is the letter's coordinates only. Sent with the SQS Query protocol, signed
 * here (`sigv4.ts`) with the credentials of the function's role, so the relay needs no SQS SDK
 * client. Settled from the SQS API reference, not run against AWS from here.
 */
import type { SinkRetryQueuePort, SinkRetryWakeUp } from '../relay/ports/sink-retry-queue.ts';
import { MAX_WAKE_UP_DELAY_SECONDS } from '../relay/ports/sink-retry-queue.ts';
import { signRequest } from './sigv4.ts';
import type { SigningCredentials } from './sigv4.ts';

/** SendMessageBatch takes at most ten entries. */
const MESSAGES_PER_CALL = 10;
const API_VERSION = '2012-11-05';

export interface SqsWakeUpOptions {
  queueUrl: string;
  region: string;
  credentials: () => Promise<SigningCredentials>;
}

export function sqsWakeUps(options: SqsWakeUpOptions): SinkRetryQueuePort {
  // Parsed when first used: a function that never wakes the worker never depends on it.
  let url: URL | undefined;
  return {
    async wake(wakeUps, delaySeconds) {
      url ??= new URL(options.queueUrl);
      const delay = Math.min(Math.max(0, Math.ceil(delaySeconds)), MAX_WAKE_UP_DELAY_SECONDS);
      for (let start = 0; start < wakeUps.length; start += MESSAGES_PER_CALL) {
        await sendBatch(options, url, wakeUps.slice(start, start + MESSAGES_PER_CALL), delay);
      }
    },
  };
}

async function sendBatch(options: SqsWakeUpOptions, url: URL, wakeUps: readonly SinkRetryWakeUp[], delaySeconds: number): Promise<void> {
  const form = new URLSearchParams({ Action: 'SendMessageBatch', Version: API_VERSION });
  wakeUps.forEach((wakeUp, index) => {
    const prefix = `SendMessageBatchRequestEntry.${index + 1}`;
    form.set(`${prefix}.Id`, `m${index}`);
    form.set(`${prefix}.MessageBody`, JSON.stringify({ tenant: wakeUp.tenant, letter: wakeUp.letter }));
    form.set(`${prefix}.DelaySeconds`, String(delaySeconds));
  });
  const body = Buffer.from(form.toString(), 'utf8');
  const headers = signRequest({
    method: 'POST',
    host: url.host,
    path: url.pathname,
    body,
    contentType: 'application/x-www-form-urlencoded',
    region: options.region,
    service: 'sqs',
    credentials: await options.credentials(),
    now: new Date(),
  });
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  // A failed entry is reported in a 200 answer; a lost wake-up is recoverable (redrive), but
  // the caller is told so a stream batch or retry message is retried instead.
  if (!response.ok || text.includes('<BatchResultErrorEntry>')) throw new Error(`SQS SendMessageBatch failed (${response.status})`);
}
