/**
 * An operator's verification keys: inline ones as stored, fetched ones from a per-process
 * cache kept as long as the answer's `Cache-Control: max-age` says, within bounds, so a key
 * set is fetched at most once a minute per process however many hellos carry cards, and a
 * rotated key is picked up within the hour at worst. A failed fetch is remembered briefly,
 * so a dead URL costs one request per process per `FAILURE_CACHE_MS`, not one per hello.
 * Concurrent hellos that find a URL cold wait on one fetch, and a full cache forgets its least
 * recently used URL, so one tenant registering many URLs cannot flush every other tenant's.
 */
import type { JSONWebKeySet } from 'jose';
import { BoundedMap } from '../../protocol/bounded-collections.ts';
import type { Clock } from '../ports/clock.ts';
import type { JwksFetcher, TrustedOperator } from '../ports/operators.ts';
import { parseKeySetText } from './key-sets.ts';

/** Shortest a fetched key set is kept (also when the answer says `no-store` or gives no max-age). */
export const MIN_KEY_CACHE_SECONDS = 60;
/** Longest a fetched key set is kept, whatever its max-age: a rotated-out key stops verifying within this. */
export const MAX_KEY_CACHE_SECONDS = 3600;
/** How long a failed fetch is remembered before the next hello tries again. */
export const FAILURE_CACHE_MS = 10_000;
/** Key set URLs a process keeps; past it the least recently used is forgotten. */
export const MAX_KEY_SET_URLS = 1000;

export type OperatorKeys = { ok: true; keySet: JSONWebKeySet } | { ok: false; reason: string };

interface Entry {
  keys: OperatorKeys;
  untilMs: number;
}

export class OperatorKeyCache {
  /** Insertion-ordered, and a URL used again is moved to the end: the first is the least recently used. */
  private readonly entries = new BoundedMap<string, Entry>(MAX_KEY_SET_URLS);
  /** The fetch in flight per URL, which every hello that finds the URL cold waits on. */
  private readonly fetching = new Map<string, Promise<OperatorKeys>>();

  constructor(
    private readonly fetcher: JwksFetcher,
    private readonly now: Clock,
  ) {}

  async keysOf(operator: TrustedOperator): Promise<OperatorKeys> {
    if (operator.jwks !== undefined) return parseKeySetText(operator.jwks);
    const url = operator.jwksUrl as string;
    const cached = this.entries.get(url);
    if (cached !== undefined && cached.untilMs > this.now()) {
      this.entries.delete(url);
      this.entries.set(url, cached);
      return cached.keys;
    }
    let fetching = this.fetching.get(url);
    if (fetching === undefined) {
      fetching = this.fetchAndKeep(url).finally(() => this.fetching.delete(url));
      this.fetching.set(url, fetching);
    }
    return fetching;
  }

  private async fetchAndKeep(url: string): Promise<OperatorKeys> {
    const fetched = await this.fetcher(url);
    let entry: Entry;
    if (!fetched.ok) {
      entry = { keys: { ok: false, reason: `its key set could not be fetched: ${fetched.reason}` }, untilMs: this.now() + FAILURE_CACHE_MS };
    } else {
      const parsed = parseKeySetText(fetched.body);
      entry = parsed.ok
        ? { keys: parsed, untilMs: this.now() + keyCacheSeconds(fetched.maxAgeSeconds) * 1000 }
        : { keys: { ok: false, reason: `its key set URL answered something unusable: ${parsed.reason}` }, untilMs: this.now() + FAILURE_CACHE_MS };
    }
    this.entries.delete(url);
    this.entries.set(url, entry);
    return entry.keys;
  }
}

/** The answer's max-age within [MIN_KEY_CACHE_SECONDS, MAX_KEY_CACHE_SECONDS]. */
export function keyCacheSeconds(maxAgeSeconds: number | undefined): number {
  if (maxAgeSeconds === undefined || !Number.isFinite(maxAgeSeconds)) return MIN_KEY_CACHE_SECONDS;
  return Math.min(MAX_KEY_CACHE_SECONDS, Math.max(MIN_KEY_CACHE_SECONDS, Math.floor(maxAgeSeconds)));
}

/** The `max-age` of a `Cache-Control` header (`s-maxage` is for shared caches; this one is private); undefined when absent. */
export function maxAgeOf(cacheControl: string | undefined): number | undefined {
  if (cacheControl === undefined) return undefined;
  const directives = cacheControl.toLowerCase().split(',').map((part) => part.trim());
  if (directives.some((directive) => directive === 'no-store' || directive === 'no-cache')) return 0;
  for (const directive of directives) {
    const match = /^max-age\s*=\s*"?(\d+)"?$/.exec(directive);
    if (match !== null) return Number(match[1]);
  }
  return undefined;
}
