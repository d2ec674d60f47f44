/**
 * A compact fingerprint of an event's content, so the stream checker can tell an identical
 * redelivery of `(source, id)` (legal, AEP-0001 §7.4) from the same pair naming different
 * content (an emitter fault) without keeping a copy of every event.
 */

/**
 * A 64-bit digest of the event's canonical JSON (keys sorted at every depth), so two
 * deliveries that differ only in key order or whitespace count as the same event. Walks
 * iteratively, so deep nesting cannot overflow the stack, and marks cycles instead of looping.
 */
export function contentDigest(value: unknown): string {
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
