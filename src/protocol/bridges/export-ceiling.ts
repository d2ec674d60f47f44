/**
 * The exporter's capture ceiling (AEP-0005 §3.3, reused unchanged by §4.6): what of an event's
 * payload may leave the relay through the OTLP and OCSF bridges.
 *
 * An event whose declared capture is above `maxCapture` is exported from its envelope alone:
 * no payload member crosses, not even one the schema marks `metadata`. That is the projection
 * the official corpora pin (`otlp-expected.json` #15, `ocsf-expected.json` #4 and #15), and it
 * is legal because dropping more than a down-level requires always is (AEP-0001 §8.2(b)). An
 * event at or below the ceiling exports its payload whole, except at `capture: none`, which
 * exports envelope-derived attributes only whatever it carries (§3.3).
 */
import type { AepEvent, JsonObject } from '../event.ts';
import { effectiveCapture } from '../downlevel.ts';
import { captureRank } from '../levels.ts';
import type { CaptureLevel } from '../levels.ts';

/** The exporters' default ceiling: content is opt-in (AEP-0005 §3.3, AEP-0001 §8.2(d)). */
export const DEFAULT_EXPORT_CEILING: CaptureLevel = 'metadata';

/** The payload that survives `maxCapture`, or undefined when none does (or the event has none). */
export function exportablePayload(event: AepEvent, maxCapture: CaptureLevel): JsonObject | undefined {
  const declared = effectiveCapture(event);
  if (declared === 'none' || captureRank(declared) > captureRank(maxCapture)) return undefined;
  return event.data;
}
