/**
 * ULID minting for ids the relay itself creates (AEP-0001 §5.1 #2 recommends ULIDs:
 * time-sortable, so stored seq-less events keep their arrival order when sorted by id).
 * Monotonic within one millisecond, so two ids minted in the same millisecond still sort
 * in minting order.
 */

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

export type RandomBytes = (length: number) => Uint8Array;

/** Encodes a millisecond timestamp as the 10-character ULID time prefix. */
export function encodeUlidTime(epochMs: number): string {
  if (!Number.isSafeInteger(epochMs) || epochMs < 0 || epochMs > 0xffff_ffff_ffff) {
    throw new RangeError(`ULID time out of range: ${epochMs}`);
  }
  let remaining = epochMs;
  let encoded = '';
  for (let index = 0; index < TIME_CHARS; index += 1) {
    encoded = CROCKFORD[remaining % 32] + encoded;
    remaining = Math.floor(remaining / 32);
  }
  return encoded;
}

/** Returns a ULID generator. Clock and randomness are injected so the core stays pure and tests are deterministic. */
export function ulidFactory(now: () => number, randomBytes: RandomBytes): () => string {
  let lastTime = -1;
  let lastRandom: number[] = [];
  return () => {
    const time = now();
    if (time > lastTime) {
      lastTime = time;
      lastRandom = Array.from(randomBytes(RANDOM_CHARS), (byte) => byte % 32);
    } else {
      incrementBase32(lastRandom);
    }
    return encodeUlidTime(lastTime) + lastRandom.map((digit) => CROCKFORD[digit]).join('');
  };
}

/** Adds one to a base-32 digit array; on overflow (2^80 ids in one ms) it wraps, as ULID allows failing. */
function incrementBase32(digits: number[]): void {
  for (let index = digits.length - 1; index >= 0; index -= 1) {
    const digit = digits[index] as number;
    if (digit < 31) {
      digits[index] = digit + 1;
      return;
    }
    digits[index] = 0;
  }
}

export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
