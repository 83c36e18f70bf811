/**
 * Seeded randomness for the sandbox: a stable 32-bit string hash (FNV-1a with a murmur3 finaliser), a way to
 * combine hashes, and mulberry32, a tiny fast PRNG. Everything synthetic derives from these, so the same seed
 * always yields the same data.
 */

/** murmur3's 32-bit finaliser: spreads every input bit over the output. */
export function fmix32(h: number): number {
  let x = h >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Stable 32-bit hash of a string, salted by `salt` (for example the sandbox seed). */
export function hashString(s: string, salt = 0): number {
  let h = (0x811c9dc5 ^ fmix32(salt + 0x9e3779b9)) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h ^ s.length);
}

/** Combines two 32-bit values into a new well-mixed 32-bit value (order matters). */
export function hash2(a: number, b: number): number {
  return fmix32(Math.imul(a ^ 0x27d4eb2f, 0x9e3779b1) ^ fmix32(b + 0x165667b1));
}

/** Combines any number of 32-bit values. */
export function hashN(...parts: number[]): number {
  let h = 0x2545f491;
  for (const p of parts) h = hash2(h, p);
  return h;
}

/** Uniform float in [0, 1) from a 32-bit hash (one-shot decisions without a generator). */
export function unit(h: number): number {
  return (h >>> 0) / 4294967296;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** 8 lower-case hex digits of a 32-bit value. */
export function hex8(n: number): string {
  const x = n >>> 0;
  return HEX[x >>> 24]! + HEX[(x >>> 16) & 0xff]! + HEX[(x >>> 8) & 0xff]! + HEX[x & 0xff]!;
}

/** mulberry32: a small, fast, seedable generator with good enough statistics for synthetic data. */
export class Rng {
  state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Next raw 32-bit unsigned value. */
  u32(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Uniform float in [lo, hi). */
  float(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `n` distinct items (or all of them when there are fewer), in a random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const pool = items.slice();
    const out: T[] = [];
    const k = Math.min(n, pool.length);
    for (let i = 0; i < k; i++) {
      const j = i + Math.floor(this.next() * (pool.length - i));
      const tmp = pool[i]!;
      pool[i] = pool[j]!;
      pool[j] = tmp;
      out.push(pool[i]!);
    }
    return out;
  }

  /** Index chosen with probability proportional to `weights[i]` (cumulative weights are faster: see pickCumulative). */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i]!;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** 32 * n bits of hex. */
  hex(words: number): string {
    let s = '';
    for (let i = 0; i < words; i++) s += hex8(this.u32());
    return s;
  }
}

/** Index into a cumulative weight table (last entry = total) for a uniform `u` in [0, 1). */
export function pickCumulative(cumulative: readonly number[], u: number): number {
  const r = u * cumulative[cumulative.length - 1]!;
  for (let i = 0; i < cumulative.length; i++) if (r < cumulative[i]!) return i;
  return cumulative.length - 1;
}

/** Running sums of `weights`. */
export function cumulate(weights: readonly number[]): number[] {
  const out: number[] = [];
  let sum = 0;
  for (const w of weights) {
    sum += w;
    out.push(sum);
  }
  return out;
}
