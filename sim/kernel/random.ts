/**
 * The schedule's one source of randomness: a seeded sfc32 generator (Chris Doty-Humphrey's
 * small fast counter, 128 bits of state), so a seed replays a schedule exactly.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d = 1;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = seed >>> 0;
    // Mix the seed in before the first draw.
    for (let round = 0; round < 15; round += 1) this.word();
  }

  /** Uniform in [0, 1). */
  next(): number {
    // 53 bits from two 32-bit words, as Math.random gives.
    return ((this.word() >>> 5) * 2 ** 26 + (this.word() >>> 6)) / 2 ** 53;
  }

  private word(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A delay in ms: usually near `typicalMs`, with a long tail up to `tailMs`. */
  latency(typicalMs: number, tailMs: number, tailChance = 0.02): number {
    if (this.chance(tailChance)) return typicalMs + this.next() * tailMs;
    return typicalMs * (0.5 + this.next());
  }

  /** A new generator whose draws do not disturb this one's sequence afterwards (one draw taken). */
  fork(): Random {
    return new Random(Math.floor(this.next() * 2 ** 31));
  }
}
