/**
 * The sink-retry queue of a long-lived process (the local stack), standing in for the SQS
 * queue and its event source mapping with the semantics the relay relies on: a message is
 * delivered no sooner than its delay, at least once, to at most `concurrency` handler
 * invocations at a time; a message the handler reports failed (SQS `batchItemFailures`) or
 * that throws comes back after `visibilityTimeoutMs`, up to `maxReceives` times, and then goes
 * to the failure log (the queue's DLQ in AWS). Nothing is kept across a restart: the durable
 * state is the letter in DynamoDB, which a redrive schedules again when its wake-up is lost.
 */
import type { SinkRetryQueuePort, SinkRetryWakeUp } from '../relay/ports/sink-retry-queue.ts';

/** Handles one batch of wake-ups; returns the ones that failed (to be delivered again). */
export type WakeUpConsumer = (wakeUps: readonly SinkRetryWakeUp[]) => Promise<readonly SinkRetryWakeUp[]>;

export interface LocalRetryQueueOptions {
  concurrency: number;
  visibilityTimeoutMs: number;
  maxReceives: number;
  onDeadMessage?: (wakeUp: SinkRetryWakeUp) => void;
}

export interface LocalRetryQueue extends SinkRetryQueuePort {
  /** Sets who handles the messages (the retry function's handler). Messages wait until one is set. */
  consumeWith(consumer: WakeUpConsumer): void;
  /** Stops delivering; pending messages are dropped (their letters stay in the store). */
  stop(): void;
}

interface Message {
  wakeUp: SinkRetryWakeUp;
  receives: number;
}

export function localRetryQueue(options: LocalRetryQueueOptions): LocalRetryQueue {
  let consumer: WakeUpConsumer | undefined;
  let stopped = false;
  let running = 0;
  const visible: Message[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const later = (message: Message, delayMs: number): void => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      visible.push(message);
      pump();
    }, delayMs);
    // A pending wake-up never keeps the process alive on its own.
    timer.unref();
    timers.add(timer);
  };

  const pump = (): void => {
    while (!stopped && consumer !== undefined && running < options.concurrency && visible.length > 0) {
      // Up to ten messages per invocation, as the SQS mapping's batch.
      const batch = visible.splice(0, 10);
      running += 1;
      const handle = consumer;
      void (async () => {
        let failed: readonly SinkRetryWakeUp[];
        try {
          failed = await handle(batch.map((message) => message.wakeUp));
        } catch {
          failed = batch.map((message) => message.wakeUp);
        }
        running -= 1;
        for (const message of batch) {
          if (!failed.includes(message.wakeUp)) continue;
          message.receives += 1;
          if (message.receives >= options.maxReceives) options.onDeadMessage?.(message.wakeUp);
          else later(message, options.visibilityTimeoutMs);
        }
        pump();
      })();
    }
  };

  return {
    async wake(wakeUps, delaySeconds) {
      for (const wakeUp of wakeUps) later({ wakeUp, receives: 0 }, Math.max(0, Math.ceil(delaySeconds)) * 1000);
    },
    consumeWith(next) {
      consumer = next;
      pump();
    },
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      visible.length = 0;
    },
  };
}
