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
import type { AepEvent } from '../event.ts';
import { typeScope } from '../type-grammar.ts';
import type { Violation } from '../violation.ts';
import { violation } from '../violation.ts';
import { BoundedMap, BoundedSet } from '../bounded-collections.ts';
import { clip } from './clip.ts';
import { contentDigest } from './content-digest.ts';
import { closedSelects, formAnswerViolations } from './form-answer-rules.ts';
import type { ClosedSelects } from './form-answer-rules.ts';

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

/** An unambiguous composite key (JSON array text cannot collide across different tuples). */
function key(...parts: string[]): string {
  return JSON.stringify(parts);
}
