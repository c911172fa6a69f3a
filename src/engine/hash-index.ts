/**
 * Open-addressing map from block identity (a non-zero number below 2^53, see domain/block-hash.ts) to an
 * int32 (block id or slot). A JS Map boxes such keys as heap numbers on every insert; in the step loop the
 * KV cache inserts and deletes an identity per filled or reused block, and the profile showed those Map
 * operations as the largest cost after allocation itself. Linear probing with backward-shift deletion keeps
 * lookups short without tombstones, which matters because lazy hash deletion makes deletes as common as
 * inserts.
 *
 * One slot is four int32s — the key's low and high 32 bits, the value, padding — in a single array, so a probe
 * and the value it finds share one cache line (the tables are large and accessed at random: most probes miss
 * the CPU caches, and separate key and value arrays cost two misses).
 */
const GOLDEN = 0x9e3779b1 | 0;
const INV_TWO32 = 1 / 4294967296;
const TWO32 = 4294967296;
/** Largest table: 2^30 slots. Slots are addressed with 32-bit integer arithmetic (`>>>`, `&`, `1 << bits`). */
export const HASH_INDEX_MAX_BITS = 30;

/** log2 of the table size for `expected` entries at load <= 1/2; computed in floating point, so it cannot overflow. */
function tableBits(expected: number): number {
  let bits = 4;
  while (2 ** bits < expected * 2) bits++;
  if (bits > HASH_INDEX_MAX_BITS) throw new RangeError(`HashIndex: ${expected} entries exceed the largest table (2^${HASH_INDEX_MAX_BITS} slots at load 1/2)`);
  return bits;
}

export class HashIndex {
  /** Slot i at [4i, 4i+3]: key low word, key high word (both 0 = empty), value, unused. */
  private table: Int32Array;
  private shift: number;
  private mask: number;
  private count = 0;

  /** `expected`: the most entries the caller will hold; sized so the table never needs to grow for it. */
  constructor(expected: number) {
    const bits = tableBits(expected);
    this.table = new Int32Array(4 << bits);
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
  }

  get size(): number {
    return this.count;
  }

  private slotOf(lo: number, hi: number): number {
    return Math.imul(lo ^ hi, GOLDEN) >>> this.shift;
  }

  /** Slot index holding `k` (split as lo/hi), or -1. */
  private find(lo: number, hi: number): number {
    const t = this.table;
    for (let i = this.slotOf(lo, hi); ; i = (i + 1) & this.mask) {
      const a = t[4 * i] as number;
      const b = t[4 * i + 1] as number;
      if (a === lo && b === hi) return lo === 0 && hi === 0 ? -1 : i;
      if (a === 0 && b === 0) return -1;
    }
  }

  /** Value stored under `k`, or -1. */
  get(k: number): number {
    // `| 0` keeps the low 32 bits of an integral double exactly (and cheaply, unlike `%`).
    return this.getParts(k | 0, (k * INV_TWO32) | 0);
  }

  has(k: number): boolean {
    return this.find(k | 0, (k * INV_TWO32) | 0) >= 0;
  }

  // The *Parts methods take a key as its low and high 32-bit words (`k | 0`, `(k / 2^32) | 0`). Hot callers that
  // keep identities as word pairs (the KV cache's per-block state) use them: a double passed to a call V8 does
  // not inline is boxed on the heap, and those boxes were a fifth of what a run allocated.

  /** {@link get} of the key with words (lo, hi). */
  getParts(lo: number, hi: number): number {
    const i = this.find(lo, hi);
    return i < 0 ? -1 : (this.table[4 * i + 2] as number);
  }

  /** {@link has} of the key with words (lo, hi). */
  hasParts(lo: number, hi: number): boolean {
    return this.find(lo, hi) >= 0;
  }

  /** The slot holding key (lo, hi), or else the empty slot where it would go (the caller tells them apart). */
  private probe(lo: number, hi: number): number {
    const t = this.table;
    let i = this.slotOf(lo, hi);
    for (; ; i = (i + 1) & this.mask) {
      const a = t[4 * i] as number;
      const b = t[4 * i + 1] as number;
      if ((a === lo && b === hi) || (a === 0 && b === 0)) return i;
    }
  }

  set(k: number, v: number): void {
    this.setParts(k | 0, (k * INV_TWO32) | 0, v);
  }

  /** {@link set} of the key with words (lo, hi). */
  setParts(lo: number, hi: number, v: number): void {
    if (lo === 0 && hi === 0) throw new RangeError('HashIndex: key 0 is reserved');
    const t = this.table;
    const i = this.probe(lo, hi);
    if (t[4 * i] === lo && t[4 * i + 1] === hi) t[4 * i + 2] = v;
    else this.fill(i, lo, hi, v);
  }

  /**
   * The value stored under `k`; when there is none, stores `v` under it and returns -1 (one probe for what
   * {@link get} then {@link set} would do with two).
   */
  getOrInsert(k: number, v: number): number {
    if (k === 0) throw new RangeError('HashIndex: key 0 is reserved');
    const lo = k | 0;
    const hi = (k * INV_TWO32) | 0;
    const t = this.table;
    const i = this.probe(lo, hi);
    if (t[4 * i] === lo && t[4 * i + 1] === hi) return t[4 * i + 2] as number;
    this.fill(i, lo, hi, v);
    return -1;
  }

  /** Stores a new key in empty slot `i` (found by {@link probe}), growing the table past load 1/2. */
  private fill(i: number, lo: number, hi: number, v: number): void {
    const t = this.table;
    t[4 * i] = lo;
    t[4 * i + 1] = hi;
    t[4 * i + 2] = v;
    if (++this.count * 2 > this.mask + 1) this.grow();
  }

  delete(k: number): boolean {
    return this.deleteParts(k | 0, (k * INV_TWO32) | 0);
  }

  /** {@link delete} of the key with words (lo, hi). */
  deleteParts(lo: number, hi: number): boolean {
    let i = this.find(lo, hi);
    if (i < 0) return false;
    const t = this.table;
    const mask = this.mask;
    // Pull later members of the probe run back over the hole so no lookup ever stops early.
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const a = t[4 * j] as number;
      const b = t[4 * j + 1] as number;
      if (a === 0 && b === 0) break;
      const home = this.slotOf(a, b);
      const stays = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!stays) {
        t[4 * i] = a;
        t[4 * i + 1] = b;
        t[4 * i + 2] = t[4 * j + 2] as number;
        i = j;
      }
    }
    t[4 * i] = 0;
    t[4 * i + 1] = 0;
    this.count--;
    return true;
  }

  /** An independent copy (same table layout, so the same probe order and iteration order). */
  clone(): HashIndex {
    const c = Object.create(HashIndex.prototype) as HashIndex;
    c.table = this.table.slice();
    c.shift = this.shift;
    c.mask = this.mask;
    c.count = this.count;
    return c;
  }

  /**
   * Removes every entry. A table much larger than what it held shrinks to fit that (a caller that clears often,
   * after one burst of entries, would otherwise zero the burst's table every time).
   */
  clear(): void {
    if (this.count === 0) return;
    const slots = this.mask + 1;
    if (slots > 1024 && this.count * 8 < slots) {
      const bits = tableBits(this.count);
      this.table = new Int32Array(4 << bits);
      this.shift = 32 - bits;
      this.mask = (1 << bits) - 1;
    } else {
      this.table.fill(0);
    }
    this.count = 0;
  }

  /** All (key, value) pairs, in table order. */
  entries(): [number, number][] {
    const out: [number, number][] = [];
    const t = this.table;
    for (let i = 0; i <= this.mask; i++) {
      const lo = t[4 * i] as number;
      const hi = t[4 * i + 1] as number;
      if (lo !== 0 || hi !== 0) out.push([hi * TWO32 + (lo >>> 0), t[4 * i + 2] as number]);
    }
    return out;
  }

  private grow(): void {
    const old = this.table;
    const bits = 32 - this.shift + 1;
    if (bits > HASH_INDEX_MAX_BITS) throw new RangeError(`HashIndex: more than 2^${HASH_INDEX_MAX_BITS - 1} entries`);
    const t = new Int32Array(4 << bits);
    const shift = 32 - bits;
    const mask = (1 << bits) - 1;
    this.table = t;
    this.shift = shift;
    this.mask = mask;
    // Re-inserted in table order, as set() would place them (the keys are distinct: no comparisons needed).
    for (let i = 0; i < old.length; i += 4) {
      const lo = old[i] as number;
      const hi = old[i + 1] as number;
      if (lo === 0 && hi === 0) continue;
      let j = Math.imul(lo ^ hi, GOLDEN) >>> shift;
      while ((t[4 * j] as number) !== 0 || (t[4 * j + 1] as number) !== 0) j = (j + 1) & mask;
      t[4 * j] = lo;
      t[4 * j + 1] = hi;
      t[4 * j + 2] = old[i + 2] as number;
    }
  }
}
