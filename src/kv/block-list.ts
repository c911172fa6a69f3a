/**
 * Growable list of block ids owned by one request. Lists are recycled through a pool by the cache, so a
 * steady-state run allocates no per-request arrays once the pool has warmed up.
 *
 * The ids are a plain array of small integers (V8 keeps them unboxed), not an Int32Array: a request's list
 * grows to tens or hundreds of ids, and every typed array above 64 bytes gets its own off-heap buffer —
 * a malloc, external-memory accounting that hastens collections, and a copy per doubling. A short run grew
 * about 1,500 such buffers; the array grows in place on the JS heap.
 */
export class BlockList {
  ids: number[] = [];
  len = 0;

  /** Empties the list and makes room for `capacity` ids, so that pushing that many allocates nothing. */
  reset(capacity: number): void {
    this.len = 0;
    if (this.ids.length < capacity) this.ids = new Array<number>(capacity).fill(0);
  }

  push(id: number): void {
    // In bounds after a reset; past the reserved room (a caller that reserved too little) it appends.
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
    return this.ids.slice(0, this.len);
  }
}
