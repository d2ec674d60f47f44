/**
 * What a hello may declare. Declarations are kept verbatim (AEP-0003 §4.1 rule 4)
 * and repeated in every roster entry of each session the connection claims, so an unbounded
 * hello lets one emitter inflate the roster for the whole tenant. The bound is on the
 * serialized `identity` and `capabilities` objects together: far above any real declaration
 * (the §4 example is about 300 bytes), and small enough that a roster entry always fits one
 * WebSocket frame (`roster-frames.ts`).
 */
import type { JsonObject } from '../../protocol/event.ts';

export const MAX_HELLO_DECLARATION_BYTES = 8 * 1024;

/** Why these declarations are too large, or undefined when they fit. */
export function helloDeclarationsRefusal(identity: JsonObject, capabilities: JsonObject): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(identity), 'utf8') + Buffer.byteLength(JSON.stringify(capabilities), 'utf8');
  if (bytes <= MAX_HELLO_DECLARATION_BYTES) return undefined;
  return `hello identity and capabilities are ${bytes} bytes together; this relay accepts at most ${MAX_HELLO_DECLARATION_BYTES}`;
}
