/**
 * What a notification says, as data: built from the attention event down-leveled to the
 * subscription's ceiling (the same `downlevel` every fan-out hop applies, AEP-0001 §8.2), so a
 * push service never receives more than that ceiling allows.
 *
 * - `none`: which agent needs a person, in which session; no payload field at all.
 * - `metadata`: also the kind of request, and what the spec allows at metadata (AEP-0002 §5.3):
 *   a prompt synthesized from structure ("agent requests permission") and option ids, never
 *   the agent's own words.
 * - `redacted`/`full`: the prompt and option labels as the event carries them at that level.
 *
 * The follow-up (`attention.answered`, `.resolved`, `.timeout`: AEP-0002 §7, each naming the
 * request in `subject`) carries the request's tag, so the browser replaces the request's
 * notification (Notifications API `tag`) and the push service drops an undelivered one (RFC 8030
 * §5.4 `Topic`): a phone never shows a stale request.
 */
import { createHash } from 'node:crypto';
import { downlevel } from '../../protocol/downlevel.ts';
import { isJsonObject } from '../../protocol/event.ts';
import type { AepEvent, JsonValue } from '../../protocol/event.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';

export const ATTENTION_REQUESTED = 'attention.requested';
/** The lifecycle events that close or settle a request (AEP-0002 §7). */
export const FOLLOW_UP_TYPES: ReadonlySet<string> = new Set(['attention.answered', 'attention.resolved', 'attention.timeout']);

/** The decrypted payload a service worker receives (JSON). */
export interface AttentionNotification {
  v: 1;
  /** `request`: shows the request; `closed`: replaces it with how it ended. */
  kind: 'request' | 'closed';
  /** The same for a request and its follow-ups. */
  tag: string;
  title: string;
  body: string;
  /** The console at that request. */
  url: string;
  request: { id: string; session: string; agent: string };
  /** The capture level the content was cut to. */
  capture: CaptureLevel;
  /** Request kind (metadata and above). */
  attentionKind?: string;
  /** Option ids (metadata), with labels at redacted and above. */
  options?: Array<{ id: string; label?: string }>;
  /** How the request ended (follow-ups). */
  outcome?: string;
}

/** Transport options that follow from the notification. */
export interface PushMessage {
  notification: AttentionNotification;
  /** RFC 8030 §5.4: a later message with the same topic replaces an undelivered one. */
  topic: string;
  urgency: 'normal' | 'high';
  ttlSeconds: number;
}

/** Longest prompt a notification carries: push services take about 4 KB per message. */
const MAX_PROMPT_CHARS = 280;
const MAX_OPTIONS = 6;
const DEFAULT_TTL_SECONDS = 24 * 3600;

/** The request an event is about: its own id (a request) or its `subject` (a follow-up). */
export function requestOf(event: AepEvent): { id: string; session: string } | undefined {
  const session = typeof event.session === 'string' ? event.session : undefined;
  if (session === undefined) return undefined;
  if (event.type === ATTENTION_REQUESTED) return { id: event.id, session };
  if (FOLLOW_UP_TYPES.has(event.type) && typeof event.subject === 'string') return { id: event.subject, session };
  return undefined;
}

export function tagOf(session: string, requestId: string): string {
  return `aep:${session}:${requestId}`;
}

/** The console at a request: the inbox with that request in view (`console/src/app.tsx`). */
export function requestUrl(consoleUrl: string, requestId: string): string {
  return `${consoleUrl}#/inbox/${encodeURIComponent(requestId)}`;
}

/** The message for an attention event under `ceiling`; undefined for any other event. */
export function messageFor(event: AepEvent, ceiling: CaptureLevel, consoleUrl: string, nowMs: number): PushMessage | undefined {
  const request = requestOf(event);
  if (request === undefined) return undefined;
  const agent = typeof event.agent === 'string' ? event.agent : 'an agent';
  const tag = tagOf(request.session, request.id);
  const common = { v: 1 as const, tag, url: requestUrl(consoleUrl, request.id), request: { ...request, agent } };
  const topic = createHash('sha256').update(tag).digest('base64url').slice(0, 32);
  if (event.type !== ATTENTION_REQUESTED) {
    const outcome = outcomeOf(event);
    return {
      notification: { ...common, kind: 'closed', title: `${agent}: request ${outcome}`, body: `Session ${request.session}`, capture: 'none', outcome },
      topic,
      urgency: 'normal',
      ttlSeconds: DEFAULT_TTL_SECONDS,
    };
  }
  const cut = downlevel(event, ceiling);
  const capture = (cut.capture ?? 'metadata') as CaptureLevel;
  const data = isJsonObject(cut.data) ? cut.data : undefined;
  const attentionKind = typeof data?.kind === 'string' ? data.kind : undefined;
  const options = data === undefined ? undefined : optionsOf(data.options, capture);
  const prompt = capture === 'redacted' || capture === 'full' ? textOf(data?.prompt) : undefined;
  const title = `${agent} needs you${attentionKind === undefined ? '' : ` (${attentionKind})`}`;
  const body = prompt === undefined ? `Session ${request.session}` : `${clip(prompt)}\nSession ${request.session}`;
  return {
    notification: {
      ...common,
      kind: 'request',
      title,
      body,
      capture: ceilingReached(capture, ceiling),
      ...(attentionKind === undefined ? {} : { attentionKind }),
      ...(options === undefined ? {} : { options }),
    },
    topic,
    urgency: 'high',
    ttlSeconds: ttlOf(data?.expires_at, nowMs),
  };
}

/** `none` leaves no `capture` on the event's down-leveled form's data; report the ceiling then. */
function ceilingReached(capture: CaptureLevel, ceiling: CaptureLevel): CaptureLevel {
  return ceiling === 'none' ? 'none' : capture;
}

function outcomeOf(event: AepEvent): string {
  if (event.type === 'attention.timeout') return 'timed out';
  if (event.type === 'attention.answered') return 'answered';
  const resolution = isJsonObject(event.data) && typeof event.data.resolution === 'string' ? event.data.resolution : undefined;
  return resolution === undefined ? 'resolved' : `resolved (${resolution})`;
}

function optionsOf(value: JsonValue | undefined, capture: CaptureLevel): Array<{ id: string; label?: string }> | undefined {
  if (!Array.isArray(value)) return undefined;
  const withLabels = capture === 'redacted' || capture === 'full';
  return value
    .filter(isJsonObject)
    .filter((option) => typeof option.id === 'string')
    .slice(0, MAX_OPTIONS)
    .map((option) => (withLabels && typeof option.label === 'string' ? { id: option.id as string, label: clip(option.label, 60) } : { id: option.id as string }));
}

const textOf = (value: JsonValue | undefined): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const clip = (text: string, max = MAX_PROMPT_CHARS): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Until the request expires (at least a minute), else a day. */
function ttlOf(expiresAt: JsonValue | undefined, nowMs: number): number {
  if (typeof expiresAt !== 'string') return DEFAULT_TTL_SECONDS;
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return DEFAULT_TTL_SECONDS;
  return Math.min(DEFAULT_TTL_SECONDS, Math.max(60, Math.ceil((at - nowMs) / 1000)));
}
