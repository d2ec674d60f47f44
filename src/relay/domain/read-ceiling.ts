/**
 * The capture ceiling a read is served at: the lower of what the request asks for (a
 * subscription's or stream's `capture`, history's `capture`) and the reading token's own
 * ceiling (`maxCapture`). A request cannot read above its token, whatever it names; a token
 * without a ceiling (stored before ceilings existed) reads at `full`, as every token did then.
 *
 * `undefined` means "no down-levelling" (the stored text as admitted), which is what a ceiling
 * of `full` does; a token that does not lower the request leaves it as it was, so the texts
 * served stay byte for byte what they were.
 */
import type { Principal } from '../../auth/principal.ts';
import { captureRank } from '../../protocol/levels.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';

export function readCeilingOf(requested: CaptureLevel | undefined, token: Pick<Principal, 'maxCapture'>): CaptureLevel | undefined {
  return lowerCeiling(requested, token.maxCapture);
}

/** The lower of two ceilings, where `undefined` is no ceiling (`full`); a side that does not lower leaves the other as it is. */
export function lowerCeiling(left: CaptureLevel | undefined, right: CaptureLevel | undefined): CaptureLevel | undefined {
  if (right === undefined || right === 'full') return left;
  if (left === undefined || left === 'full') return right;
  return captureRank(left) <= captureRank(right) ? left : right;
}
