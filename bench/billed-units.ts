/**
 * Request units as DynamoDB bills them, from what the capacity meters counted: the units the
 * calls reported, plus the minimum billed for the calls that report none (a read that found
 * nothing: 0.5 RRU eventually consistent, 1 strongly consistent; a refused conditional write:
 * at least 1 WRU). Results saved before the meters counted those have no such fields: they
 * read as 0 here, so such figures are the reported units only.
 */
import type { CapacityTotals } from '../src/store/capacity-meter.ts';
import type { FunctionUsage } from '../local/usage.ts';

type Metered = Pick<FunctionUsage, 'readUnits' | 'writeUnits'> & Partial<Pick<CapacityTotals, 'emptyReads' | 'emptyReadUnits' | 'refusedWrites' | 'refusedWriteUnits'>>;

export const billedReadUnits = (usage: Metered): number => usage.readUnits + (usage.emptyReadUnits ?? 0);
export const billedWriteUnits = (usage: Metered): number => usage.writeUnits + (usage.refusedWriteUnits ?? 0);
/** Whether these counts come from meters that counted empty reads and refused writes. */
export const countsUnreported = (usage: Metered): boolean => usage.emptyReads !== undefined;
