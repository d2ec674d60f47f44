/**
 * Sums the DynamoDB capacity every call reports (ReturnConsumedCapacity), so the cost of
 * an ingested or delivered event is a measured number rather than an estimate.
 *
 * Two kinds of call report no capacity yet are billed, so they are counted apart from what was
 * reported: a read that finds nothing (DynamoDB bills every read request at least 0.5 read unit
 * eventually consistent, 1 strongly consistent; DynamoDB Local reports that for a missing
 * item's GetItem, but 0 for a Query that matches nothing) and a refused
 * conditional write (billed the write units of the item it would have written, at least 1;
 * no capacity comes back with a `ConditionalCheckFailedException`).
 */
export interface CapacityTotals {
  /** Read units as reported by the calls that reported any. */
  readUnits: number;
  /** Write units as reported by the calls that reported any. */
  writeUnits: number;
  /** Every metered call, those that failed (a refused conditional write) included. */
  calls: number;
  /** Reads that reported 0 units (found nothing), and the minimum they are billed. */
  emptyReads: number;
  emptyReadUnits: number;
  /** Conditional writes refused (`ConditionalCheckFailedException`), and the minimum they are billed. */
  refusedWrites: number;
  refusedWriteUnits: number;
}

/** What a call reported, or what DynamoDB bills for it when it reported nothing. */
export type CapacityRecord =
  | { kind: 'reported'; readUnits: number; writeUnits: number }
  | { kind: 'empty-read'; billedReadUnits: number }
  | { kind: 'refused-write'; billedWriteUnits: number }
  | { kind: 'failed' };

const zero = (): CapacityTotals => ({ readUnits: 0, writeUnits: 0, calls: 0, emptyReads: 0, emptyReadUnits: 0, refusedWrites: 0, refusedWriteUnits: 0 });

export class CapacityMeter {
  private totals: CapacityTotals = zero();

  /** One call; `readUnits`/`writeUnits` alone is a call that reported them. */
  record(readUnits: number, writeUnits: number): void;
  record(entry: CapacityRecord): void;
  record(readOrEntry: number | CapacityRecord, writeUnits = 0): void {
    const entry: CapacityRecord = typeof readOrEntry === 'number' ? { kind: 'reported', readUnits: readOrEntry, writeUnits } : readOrEntry;
    this.totals.calls += 1;
    switch (entry.kind) {
      case 'reported':
        this.totals.readUnits += entry.readUnits;
        this.totals.writeUnits += entry.writeUnits;
        return;
      case 'empty-read':
        this.totals.emptyReads += 1;
        this.totals.emptyReadUnits += entry.billedReadUnits;
        return;
      case 'refused-write':
        this.totals.refusedWrites += 1;
        this.totals.refusedWriteUnits += entry.billedWriteUnits;
        return;
      case 'failed':
        return;
    }
  }

  snapshot(): CapacityTotals {
    return { ...this.totals };
  }

  reset(): void {
    this.totals = zero();
  }
}
