/**
 * Growable list of block ids owned by one request. Lists are recycled through a pool by the cache, so a
 * steady-state run allocates no per-request arrays once the pool has warmed up.
 */
export class BlockList {
  ids: Int32Array;
  len = 0;

  constructor(capacity = 8) {
    this.ids = new Int32Array(capacity);
  }

  push(id: number): void {
    if (this.len === this.ids.length) {
      const grown = new Int32Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.len++] = id;
  }

  /** Last id; only meaningful when `len > 0` (the cache never keeps empty lists). */
  last(): number {
    return this.ids[this.len - 1] as number;
  }

  at(i: number): number {
    return this.ids[i] as number;
  }

  toArray(): number[] {
    return Array.from(this.ids.subarray(0, this.len));
  }
}
