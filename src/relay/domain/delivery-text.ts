/**
 * The text delivered for a stored event under a subscription's capture ceiling: the exact
 * stored text when no down-leveling applies (byte identity, AEP-0004 §4.4), otherwise the
 * down-leveled event (AEP-0001 §8.2, AEP-0003 §6.4).
 */
import { downlevel, needsDownlevel } from '../../protocol/downlevel.ts';
import type { AepEvent } from '../../protocol/event.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';

export function deliveryText(raw: string, event: AepEvent, ceiling: CaptureLevel | undefined): string {
  if (ceiling === undefined || !needsDownlevel(event, ceiling)) return raw;
  return JSON.stringify(downlevel(event, ceiling));
}

/** Parses stored text back into an event; stored texts were validated at admission. */
export function parseStored(raw: string): AepEvent | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as AepEvent) : undefined;
  } catch {
    return undefined;
  }
}
