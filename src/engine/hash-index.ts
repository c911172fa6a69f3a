/**
 * Open-addressing map from block identity (a non-zero number below 2^53, see domain/block-hash.ts) to an
 * int32 (block id or slot). A JS Map boxes such keys as heap numbers on every insert; in the step loop the
 * KV cache inserts and deletes an identity per filled or reused block, and the profile showed those Map
 * operations as the largest cost after allocation itself. Linear probing with backward-shift deletion keeps
 * lookups short without tombstones, which matters because lazy hash deletion makes deletes as common as
 * inserts.
 */
const EMPTY = 0;
const GOLDEN = 0x9e3779b1 | 0;
const INV_TWO32 = 1 / 4294967296;
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
  private keys: Float64Array;
  private vals: Int32Array;
  private shift: number;
  private mask: number;
  private count = 0;

  /** `expected`: the most entries the caller will hold; sized so the table never needs to grow for it. */
  constructor(expected: number) {
    const bits = tableBits(expected);
    this.keys = new Float64Array(1 << bits);
    this.vals = new Int32Array(1 << bits);
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
  }

  get size(): number {
    return this.count;
  }

  private slot(k: number): number {
    // `| 0` keeps the low 32 bits of an integral double exactly (and cheaply, unlike `%`).
    const lo = k | 0;
    const hi = (k * INV_TWO32) | 0;
    return Math.imul(lo ^ hi, GOLDEN) >>> this.shift;
  }

  /** Value stored under `k`, or -1. */
  get(k: number): number {
    const keys = this.keys;
    for (let i = this.slot(k); ; i = (i + 1) & this.mask) {
      const x = keys[i] as number;
      if (x === EMPTY) return -1;
      if (x === k) return this.vals[i] as number;
    }
  }

  has(k: number): boolean {
    return this.get(k) !== -1;
  }

  set(k: number, v: number): void {
    if (k === EMPTY) throw new RangeError('HashIndex: key 0 is reserved');
    const keys = this.keys;
    let i = this.slot(k);
    for (; ; i = (i + 1) & this.mask) {
      const x = keys[i] as number;
      if (x === k) {
        this.vals[i] = v;
        return;
      }
      if (x === EMPTY) break;
    }
    keys[i] = k;
    this.vals[i] = v;
    if (++this.count * 2 > keys.length) this.grow();
  }

  delete(k: number): boolean {
    const keys = this.keys;
    const vals = this.vals;
    const mask = this.mask;
    let i = this.slot(k);
    for (; ; i = (i + 1) & mask) {
      const x = keys[i] as number;
      if (x === EMPTY) return false;
      if (x === k) break;
    }
    // Pull later members of the probe run back over the hole so no lookup ever stops early.
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const x = keys[j] as number;
      if (x === EMPTY) break;
      const home = this.slot(x);
      const stays = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!stays) {
        keys[i] = x;
        vals[i] = vals[j] as number;
        i = j;
      }
    }
    keys[i] = EMPTY;
    this.count--;
    return true;
  }

  /** All (key, value) pairs, in table order. */
  entries(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i] as number;
      if (k !== EMPTY) out.push([k, this.vals[i] as number]);
    }
    return out;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldVals = this.vals;
    const bits = 32 - this.shift + 1;
    if (bits > HASH_INDEX_MAX_BITS) throw new RangeError(`HashIndex: more than 2^${HASH_INDEX_MAX_BITS - 1} entries`);
    this.keys = new Float64Array(1 << bits);
    this.vals = new Int32Array(1 << bits);
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) {
      const k = oldKeys[i] as number;
      if (k !== EMPTY) this.set(k, oldVals[i] as number);
    }
  }
}
