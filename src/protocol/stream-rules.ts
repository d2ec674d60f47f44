/**
 * Cross-event rules over one emitted stream (AEP-0001 §7, AEP-0002 §2, §5.3, §7,
 * AEP-0004 §3): the checks no single envelope can fail on its own.
 *
 * The checker reads events in emission order and judges the *emitter*: a below-high-water
 * `seq` is reported as a regression. A consumer reading a merged or replayed stream would
 * instead treat an unseen lower position as backfill (AEP-0001 §7.2), so this is a conformance
 * tool, not something the relay runs on ingest.
 *
 * Per-session state is keyed by `(source, session)`: session names are unique only within
 * their emitter (AEP-0001 §5.2). Memory stays bounded: content is remembered as a 64-bit
 * digest, never copied, and each table forgets its oldest entries past a configurable size
 * (a forgotten entry can only hide a violation, never invent one).
 */
import type { AepEvent, JsonValue } from './event.ts';
import { isJsonObject } from './event.ts';
import { typeScope } from './type-grammar.ts';
import type { Violation } from './violation.ts';
import { violation } from './violation.ts';

/** Tuning for {@link StreamChecker}. */
export interface StreamCheckerOptions {
  /** Entries kept per table (ids, sessions, runs, requests, acks) before the oldest is forgotten. */
  maxEntries?: number;
}

/** Default table size: generous for a conformance run, still a hard ceiling. */
export const DEFAULT_MAX_ENTRIES = 100_000;

const RUN_TERMINALS: ReadonlySet<string> = new Set(['run.finished', 'run.failed', 'run.cancelled']);
const ATTENTION_TERMINALS: ReadonlySet<string> = new Set(['attention.resolved', 'attention.timeout']);
const ACKS: ReadonlySet<string> = new Set(['control.accepted', 'control.rejected']);

/** The `(epoch, seq)` high-water mark of one emitter's session. */
interface HighWater {
  epoch: number;
  seq: number;
}

/** Closed choice sets of a form request's select fields that do not allow free text. */
type ClosedSelects = ReadonlyMap<string, ReadonlySet<string>>;

/** Checks a stream of envelope-valid events one at a time, remembering what it needs. */
export class StreamChecker {
  readonly #digests: BoundedMap<string, string>;
  readonly #highWater: BoundedMap<string, HighWater>;
  readonly #runTerminals: BoundedMap<string, string>;
  readonly #sessionEnds: BoundedMap<string, string>;
  readonly #pending: BoundedMap<string, Set<string>>;
  readonly #forms: BoundedMap<string, ClosedSelects>;
  readonly #acks: BoundedMap<string, string>;
  readonly #maxEntries: number;

  constructor(options: StreamCheckerOptions = {}) {
    const requested = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.#maxEntries = Number.isSafeInteger(requested) && requested > 0 ? requested : DEFAULT_MAX_ENTRIES;
    const size = this.#maxEntries;
    this.#digests = new BoundedMap(size);
    this.#highWater = new BoundedMap(size);
    this.#runTerminals = new BoundedMap(size);
    this.#sessionEnds = new BoundedMap(size);
    this.#pending = new BoundedMap(size);
    this.#forms = new BoundedMap(size);
    this.#acks = new BoundedMap(size);
  }

  /** The violations `event` adds to the stream seen so far; then remembers it. */
  check(event: AepEvent): Violation[] {
    try {
      return this.#check(event);
    } catch {
      // Envelope-valid input cannot get here; exotic objects (proxies, getters) might.
      return [violation('AEP-0001 §5', 'the event could not be inspected as a plain JSON object')];
    }
  }

  #check(event: AepEvent): Violation[] {
    const out: Violation[] = [];
    const { source, id, type } = event;

    // Dedupe scope is (source, id) (AEP-0001 §7.4): identical redelivery is legal and adds
    // nothing; the same pair naming different content is an emitter fault.
    const idKey = key(source, id);
    const digest = contentDigest(event);
    const earlier = this.#digests.get(idKey);
    if (earlier === digest) return out;
    if (earlier === undefined) {
      this.#digests.set(idKey, digest);
    } else {
      out.push(violation('AEP-0001 §7.4', `id "${clip(id)}" from ${clip(source)} was already used for a different event`, 'id'));
    }

    const { session } = event;
    if (typeof session !== 'string') return out; // agent-scoped: no session rules apply
    const sessionKey = key(source, session);

    if (typeof event.seq === 'number') out.push(...this.#checkPosition(sessionKey, event.seq, event.epoch ?? 0));

    // Foreign-emitter events (commands, attention.routed) belong to another party's stream;
    // lifecycle rules bind the session's owner only.
    if (typeScope(type) !== 'session') return out;

    if (RUN_TERMINALS.has(type) && typeof event.run === 'string') {
      const runKey = key(source, session, event.run);
      const first = this.#runTerminals.get(runKey);
      if (first === undefined) this.#runTerminals.set(runKey, id);
      else if (first !== id) {
        out.push(violation('AEP-0002 §2', `run "${clip(event.run)}" already reached a terminal (${clip(first)}); "${type}" is a second one`, 'type'));
      }
    }

    if (type === 'attention.requested') {
      this.#pendingFor(sessionKey).add(id);
      const selects = closedSelects(event.data);
      if (selects.size > 0) this.#forms.set(key(source, session, id), selects);
    }

    if (ATTENTION_TERMINALS.has(type) && typeof event.subject === 'string') {
      this.#pending.get(sessionKey)?.delete(event.subject);
      this.#forms.delete(key(source, session, event.subject));
    }

    if (type === 'attention.answered' && typeof event.subject === 'string') {
      const selects = this.#forms.get(key(source, session, event.subject));
      if (selects !== undefined) out.push(...formAnswerViolations(selects, event.data));
    }

    if (ACKS.has(type) && typeof event.cause === 'string') {
      // One ack decision per command (AEP-0004 §3); a retry re-emits the same event, which
      // the (source, id) dedupe above already absorbed.
      const ackKey = key(source, session, event.cause);
      const first = this.#acks.get(ackKey);
      if (first === undefined) this.#acks.set(ackKey, id);
      else if (first !== id) {
        out.push(violation('AEP-0004 §3', `command "${clip(event.cause)}" was already acknowledged by ${clip(first)}; "${type}" is a second decision`, 'cause'));
      }
    }

    if (type === 'session.ended') {
      const first = this.#sessionEnds.get(sessionKey);
      if (first === undefined) this.#sessionEnds.set(sessionKey, id);
      else if (first !== id) {
        out.push(violation('AEP-0002 §2', `session "${clip(session)}" already ended (${clip(first)}); a second session.ended is not allowed`, 'type'));
      }
      const pending = this.#pending.get(sessionKey);
      if (pending !== undefined && pending.size > 0) {
        const ids = [...pending].slice(0, 5).map(clip).join(', ');
        out.push(violation('AEP-0002 §7.2', `session ended with ${pending.size} attention request(s) still pending (${ids}); close them with attention.resolved or attention.timeout first`, 'type'));
        pending.clear();
      }
    }
    return out;
  }

  /** Seq regressions within an epoch, and epoch regressions (AEP-0001 §7.2). */
  #checkPosition(sessionKey: string, seq: number, epoch: number): Violation[] {
    const mark = this.#highWater.get(sessionKey);
    if (mark === undefined || epoch > mark.epoch) {
      this.#highWater.set(sessionKey, { epoch, seq });
      return [];
    }
    if (epoch < mark.epoch) {
      return [violation('AEP-0001 §7.2', `epoch ${epoch} comes after epoch ${mark.epoch}; an emitter never reuses an earlier epoch`, 'epoch')];
    }
    if (seq <= mark.seq) {
      const what = seq === mark.seq ? 'reuses' : 'falls below';
      return [violation('AEP-0001 §7.2', `seq ${seq} ${what} seq ${mark.seq} already assigned in epoch ${epoch}; a restarted counter must declare a new epoch`, 'seq')];
    }
    mark.seq = seq;
    return [];
  }

  #pendingFor(sessionKey: string): Set<string> {
    let pending = this.#pending.get(sessionKey);
    if (pending === undefined) {
      pending = new BoundedSet(this.#maxEntries);
      this.#pending.set(sessionKey, pending);
    }
    return pending;
  }
}

/** Runs a whole stream through a fresh {@link StreamChecker}, in order. */
export function streamViolations(events: Iterable<AepEvent>, options?: StreamCheckerOptions): Violation[] {
  const checker = new StreamChecker(options);
  const out: Violation[] = [];
  for (const event of events) out.push(...checker.check(event));
  return out;
}

/**
 * The select fields of a `kind: "form"` request whose answers must be choice ids: those
 * without `other: true` (AEP-0006 via AEP-0002 §5.3). Only ids are kept, never labels.
 */
function closedSelects(data: JsonValue | undefined): ClosedSelects {
  const selects = new Map<string, ReadonlySet<string>>();
  if (!isJsonObject(data) || own(data, 'kind') !== 'form') return selects;
  const fields = own(data, 'fields');
  if (!Array.isArray(fields)) return selects;
  for (const field of fields) {
    if (!isJsonObject(field) || own(field, 'type') !== 'select' || own(field, 'other') === true) continue;
    const fieldId = own(field, 'id');
    const choices = own(field, 'choices');
    if (typeof fieldId !== 'string' || selects.has(fieldId) || !Array.isArray(choices)) continue;
    const ids = new Set<string>();
    for (const choice of choices) {
      const choiceId = isJsonObject(choice) ? own(choice, 'id') : undefined;
      if (typeof choiceId === 'string') ids.add(choiceId);
    }
    selects.set(fieldId, ids);
  }
  return selects;
}

/** Answers to closed select fields that are not one of the field's choice ids (AEP-0002 §5.3). */
function formAnswerViolations(selects: ClosedSelects, data: JsonValue | undefined): Violation[] {
  const answer = isJsonObject(data) ? own(data, 'answer') : undefined;
  const values = isJsonObject(answer) ? own(answer, 'values') : undefined;
  if (!isJsonObject(values)) return [];
  const out: Violation[] = [];
  for (const [fieldId, choices] of selects) {
    const value = own(values, fieldId);
    // A single select answers with one id; `multi: true` with an array of ids.
    const picked = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
    for (const choice of picked) {
      if (typeof choice === 'string' && !choices.has(choice)) {
        out.push(violation('AEP-0002 §5.3', `"${clip(choice)}" is not a choice id of select field "${clip(fieldId)}", which does not allow other (free-text) answers`, `data.answer.values.${fieldId}`));
      }
    }
  }
  return out;
}

/** An own property only: `values["__proto__"]` must not reach Object.prototype. */
function own(object: { readonly [key: string]: JsonValue }, name: string): JsonValue | undefined {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}

/** An unambiguous composite key (JSON array text cannot collide across different tuples). */
function key(...parts: string[]): string {
  return JSON.stringify(parts);
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** A Map that forgets its oldest entry once it holds `limit` entries. */
class BoundedMap<K, V> extends Map<K, V> {
  readonly #limit: number;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override set(k: K, v: V): this {
    if (!this.has(k) && this.size >= this.#limit) {
      const oldest = this.keys().next();
      if (oldest.done !== true) this.delete(oldest.value);
    }
    return super.set(k, v);
  }
}

/** A Set that forgets its oldest member once it holds `limit` members. */
class BoundedSet<T> extends Set<T> {
  readonly #limit: number;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override add(value: T): this {
    if (!this.has(value) && this.size >= this.#limit) {
      const oldest = this.values().next();
      if (oldest.done !== true) this.delete(oldest.value);
    }
    return super.add(value);
  }
}

/**
 * A 64-bit digest of the event's canonical JSON (keys sorted at every depth), so two
 * deliveries that differ only in key order or whitespace count as the same event. Walks
 * iteratively, so deep nesting cannot overflow the stack, and marks cycles instead of looping.
 */
function contentDigest(value: unknown): string {
  const hash = new Digest();
  const ancestors = new Set<object>();
  // Work items: a value to serialize, a literal token to write, or an object to leave.
  type Item = { value: unknown } | { token: string } | { leave: object };
  const stack: Item[] = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    if ('token' in item) {
      hash.update(item.token);
      continue;
    }
    if ('leave' in item) {
      ancestors.delete(item.leave);
      continue;
    }
    const current = item.value;
    if (current === null || typeof current === 'boolean') {
      hash.update(String(current));
    } else if (typeof current === 'number') {
      hash.update(Number.isFinite(current) ? JSON.stringify(current) : 'null');
    } else if (typeof current === 'string') {
      hash.update(JSON.stringify(current));
    } else if (typeof current === 'object') {
      if (ancestors.has(current)) {
        hash.update('"<cycle>"');
        continue;
      }
      ancestors.add(current);
      // Pushed in reverse so they pop in order.
      const items: Item[] = [];
      if (Array.isArray(current)) {
        items.push({ token: '[' });
        current.forEach((element: unknown, index) => {
          if (index > 0) items.push({ token: ',' });
          items.push({ value: element });
        });
        items.push({ token: ']' });
      } else {
        items.push({ token: '{' });
        Object.keys(current).sort().forEach((name, index) => {
          const descriptor = Object.getOwnPropertyDescriptor(current, name);
          if (index > 0) items.push({ token: ',' });
          items.push({ token: `${JSON.stringify(name)}:` });
          items.push(descriptor !== undefined && 'value' in descriptor ? { value: descriptor.value } : { token: '"<accessor>"' });
        });
        items.push({ token: '}' });
      }
      items.push({ leave: current });
      for (let index = items.length - 1; index >= 0; index -= 1) stack.push(items[index] as Item);
    } else {
      hash.update(`"<${typeof current}>"`);
    }
  }
  return hash.hex();
}

/**
 * Two independent 32-bit multiply-xorshift lanes (the cyrb53 construction, kept at 64 bits)
 * plus the input length. Not cryptographic: it guards against accidents, which is what a
 * conformance check needs, and keeps the core free of platform crypto.
 */
class Digest {
  #h1 = 0xdeadbeef;
  #h2 = 0x41c6ce57;
  #length = 0;

  update(text: string): void {
    let h1 = this.#h1;
    let h2 = this.#h2;
    for (let index = 0; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      h1 = Math.imul(h1 ^ code, 2654435761);
      h2 = Math.imul(h2 ^ code, 1597334677);
    }
    this.#h1 = h1;
    this.#h2 = h2;
    this.#length += text.length;
  }

  hex(): string {
    let h1 = this.#h1;
    let h2 = this.#h2;
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
    h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
    h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    const lane = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
    return `${lane(h1)}${lane(h2)}:${this.#length.toString(36)}`;
  }
}
