/**
 * The two ordered enums of the envelope: severity (AEP-0001 §8.1) and capture (AEP-0001 §8.2).
 * Order matters: filters compare severities, and down-leveling compares capture levels.
 */

export const SEVERITIES = ['debug', 'info', 'notice', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** Applied when an event omits `severity` (AEP-0001 §5.1 #15). */
export const DEFAULT_SEVERITY: Severity = 'info';

export const CAPTURE_LEVELS = ['none', 'metadata', 'redacted', 'full'] as const;
export type CaptureLevel = (typeof CAPTURE_LEVELS)[number];
/** Applied when an event omits `capture` (AEP-0001 §5.1 #16). */
export const DEFAULT_CAPTURE: CaptureLevel = 'metadata';

const severityRanks: ReadonlyMap<string, number> = new Map(SEVERITIES.map((level, rank) => [level, rank]));
const captureRanks: ReadonlyMap<string, number> = new Map(CAPTURE_LEVELS.map((level, rank) => [level, rank]));

export function isSeverity(value: unknown): value is Severity {
  return typeof value === 'string' && severityRanks.has(value);
}

export function isCaptureLevel(value: unknown): value is CaptureLevel {
  return typeof value === 'string' && captureRanks.has(value);
}

/** Rank in the total order `debug < … < critical`. */
export function severityRank(level: Severity): number {
  return severityRanks.get(level) as number;
}

/** Rank in the order `none < metadata < redacted < full`. */
export function captureRank(level: CaptureLevel): number {
  return captureRanks.get(level) as number;
}
