/**
 * Fan-out faults: wraps the fan-out handler the local stream poller invokes so that chosen
 * invocations fail in the middle of their batch, after part of the batch was delivered (the
 * realistic failure: a Lambda that posted to some subscribers, then failed). The poller then
 * does what the event source mapping does: retries from the reported record, or bisects and
 * retries the batch after a function error.
 */
import type { FanoutHandler } from '../stream-batch-delivery.ts';
import type { FanoutFaultRule } from './fault-plan.ts';

export interface FanoutFaultStats {
  invocations: number;
  /** Invocations that were made to fail. */
  injected: number;
  /** Records handed to the fan-out handler, counted once per invocation they were in. */
  records: number;
  /** Stream records (by sequence number) the poller handed over more than once. */
  redeliveredRecords: number;
}

export class FanoutFaults {
  private rule: FanoutFaultRule | undefined;
  private eligible = 0;
  private stats: FanoutFaultStats = { invocations: 0, injected: 0, records: 0, redeliveredRecords: 0 };
  private readonly seen = new Set<string>();

  configure(rule: FanoutFaultRule | undefined): void {
    this.rule = rule;
    this.eligible = 0;
    this.stats = { invocations: 0, injected: 0, records: 0, redeliveredRecords: 0 };
    this.seen.clear();
  }

  snapshot(): FanoutFaultStats {
    return { ...this.stats };
  }

  private due(records: number): boolean {
    const rule = this.rule;
    if (rule === undefined || records < (rule.minRecords ?? 2) || this.stats.injected >= (rule.count ?? 1)) return false;
    this.eligible += 1;
    return this.eligible % (rule.every ?? 1) === 0;
  }

  wrap(handler: FanoutHandler): FanoutHandler {
    return async (event, context) => {
      const records = event.Records;
      this.stats.invocations += 1;
      this.stats.records += records.length;
      for (const record of records) {
        const sequenceNumber = record.dynamodb?.SequenceNumber ?? '';
        if (this.seen.has(sequenceNumber)) this.stats.redeliveredRecords += 1;
        else this.seen.add(sequenceNumber);
      }
      const rule = this.rule;
      if (rule === undefined || !this.due(records.length)) return handler(event, context);
      this.stats.injected += 1;
      const middle = Math.floor(records.length / 2);
      if (rule.mode === 'report') {
        const response = await handler(event, context);
        const failed = records[middle]?.dynamodb?.SequenceNumber ?? '';
        return { batchItemFailures: [...(response?.batchItemFailures ?? []), { itemIdentifier: failed }] };
      }
      await handler({ Records: records.slice(0, middle) }, context);
      throw new Error(`injected fan-out fault (AEP_FAULTS): failed after ${middle} of ${records.length} records`);
    };
  }
}
