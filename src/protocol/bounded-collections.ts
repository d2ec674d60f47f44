/**
 * Insertion-ordered collections with a hard size ceiling, so memory stays bounded on an endless
 * stream (the stream checker's state, fan-out's per-session ordering state). For the checker,
 * forgetting the oldest entry can only hide a violation, never invent one.
 */

/** A Map that forgets its oldest entry once it holds `limit` entries. */
export class BoundedMap<K, V> extends Map<K, V> {
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
export class BoundedSet<T> extends Set<T> {
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
