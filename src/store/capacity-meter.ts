/**
 * Sums the DynamoDB capacity every call reports (ReturnConsumedCapacity), so the cost of
 * an ingested or delivered event is a measured number rather than an estimate.
 */
export interface CapacityTotals {
  readUnits: number;
  writeUnits: number;
  /** Every metered call, those that failed (a refused conditional write) included. */
  calls: number;
}

export class CapacityMeter {
  private totals: CapacityTotals = { readUnits: 0, writeUnits: 0, calls: 0 };

  record(readUnits: number, writeUnits: number): void {
    this.totals.readUnits += readUnits;
    this.totals.writeUnits += writeUnits;
    this.totals.calls += 1;
  }

  snapshot(): CapacityTotals {
    return { ...this.totals };
  }

  reset(): void {
    this.totals = { readUnits: 0, writeUnits: 0, calls: 0 };
  }
}
