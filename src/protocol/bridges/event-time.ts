/**
 * An event's `time` (RFC 3339, AEP-0001 §5.1 #5) as an exact count since the Unix epoch, for
 * the bridges that carry numeric time: OTLP nanoseconds (AEP-0005 §3.2), OCSF milliseconds
 * (§4.3). Computed in integers, so sub-second fractions never pick up floating-point error.
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Nanoseconds since the epoch, or undefined when `time` is not an RFC 3339 date-time. */
export function epochNanos(time: string): bigint | undefined {
  const match = DATE_TIME.exec(time);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHour, offsetMinute] = match;
  const wholeMs = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  if (!Number.isFinite(wholeMs)) return undefined;
  const offsetMinutes = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHour) * 60 + Number(offsetMinute));
  const seconds = BigInt(wholeMs / 1000 - offsetMinutes * 60);
  // Digits past nanoseconds are below what either bridge can carry; they are cut, not rounded.
  const nanos = BigInt((fraction ?? '').padEnd(9, '0').slice(0, 9));
  return seconds * 1_000_000_000n + nanos;
}

/** Whole milliseconds since the epoch (rounded down), or undefined for an unreadable `time`. */
export function epochMillis(time: string): number | undefined {
  const nanos = epochNanos(time);
  if (nanos === undefined) return undefined;
  // Floor division, also for times before 1970.
  const millis = nanos / 1_000_000n - (nanos % 1_000_000n < 0n ? 1n : 0n);
  return Number(millis);
}
