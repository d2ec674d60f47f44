/** The AEP 0.1 event envelope as the relay sees it (AEP-0001 §5.1). Validation lives in `envelope.ts`; this file only names the shape. */

/** A JSON value as parsed from the wire. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Envelope protocol versions this relay speaks (AEP-0001 §11). */
export const SUPPORTED_VERSIONS = ['0.1'] as const;

/** A validated event. Extension attributes (AEP-0001 §5.4) ride alongside the core ones. */
export interface AepEvent {
  aep: string;
  id: string;
  type: string;
  subject?: string;
  time: string;
  source: string;
  agent: string;
  session?: string;
  run?: string;
  step?: string;
  seq?: number;
  epoch?: number;
  cause?: string;
  traceparent?: string;
  severity?: string;
  capture?: string;
  data?: JsonObject;
  [extension: string]: JsonValue | undefined;
}

/** The sixteen context attributes plus `data` (AEP-0001 §5.1); never legal as extension names. */
export const CORE_ATTRIBUTES: ReadonlySet<string> = new Set([
  'aep', 'id', 'type', 'subject', 'time', 'source', 'agent', 'session', 'run', 'step',
  'seq', 'epoch', 'cause', 'traceparent', 'severity', 'capture', 'data',
]);

/** Extension attribute names (AEP-0001 §5.4): the CloudEvents constraint. */
export const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
