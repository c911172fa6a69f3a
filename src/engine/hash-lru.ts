/**
 * A fixed-capacity LRU set of non-zero integer keys below 2^53 (block identities), on typed arrays: a
 * {@link HashIndex} from key to slot plus an intrusive doubly linked recency list. Touch, insert, evict and
 * lookup are O(1) with no allocation. (A JS Map used as an insertion-ordered LRU degrades: every move leaves a
 * hole that `keys().next()` must skip when evicting.) A slot's links and key sit together (four int32s: prev,
 * next, key low and high words), so moving a slot touches one cache line of it.
 */
import { HashIndex } from './hash-index.js';

const NIL = -1;
const TWO32 = 4294967296;
const INV_TWO32 = 1 / 4294967296;
/** Keys room is made for before the first growth. */
const INITIAL_KEYS = 16;

export class HashLru {
  private readonly index: HashIndex;
  /** Slot s at [4s, 4s+3]: prev, next, key low word, key high word. Grows with use, up to the capacity. */
  private slots: Int32Array;
  private head = NIL; // least recently used
  private tail = NIL; // most recently used
  private count = 0;

  constructor(readonly capacity: number, index?: HashIndex, slots?: Int32Array) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`HashLru: capacity must be a positive integer, got ${capacity}`);
    // Both grow on demand (doubling): capacities are set for the worst case (a whole KV cache), runs often use a
    // fraction, and a router keeps one per instance of a cluster of up to 10,000 (192 KB each when they started
    // at 4,096 keys: issue 27).
    this.index = index ?? new HashIndex(Math.min(capacity, INITIAL_KEYS));
    this.slots = slots ?? new Int32Array(4 * Math.min(capacity, INITIAL_KEYS));
  }

  get size(): number {
    return this.count;
  }

  has(key: number): boolean {
    return this.index.get(key) !== NIL;
  }

  /** Marks `key` most recently used, inserting it (and evicting the least recently used when full). */
  touch(key: number): void {
    // One probe finds the key or claims, for a new key, the slot it will take: the next unused one, or the
    // least recently used one's (whose key is dropped from the index below).
    const full = this.count >= this.capacity;
    const s = full ? this.head : this.count;
    const found = this.index.getOrInsert(key, s);
    if (found !== NIL) {
      if (found !== this.tail) {
        this.unlink(found);
        this.append(found);
      }
      return;
    }
    let sl = this.slots;
    if (!full) {
      this.count++;
      if (4 * s >= sl.length) {
        const grown = new Int32Array(Math.min(2 * sl.length, 4 * this.capacity));
        grown.set(sl);
        this.slots = sl = grown;
      }
    } else {
      this.unlink(s);
      this.index.delete((sl[4 * s + 3] as number) * TWO32 + ((sl[4 * s + 2] as number) >>> 0));
    }
    sl[4 * s + 2] = key | 0;
    sl[4 * s + 3] = (key * INV_TWO32) | 0;
    this.append(s);
  }

  /**
   * An independent copy holding the same keys in the same recency order, with capacity `capacity` (at least
   * the current size): what another LRU fed the same touches would hold while neither has evicted.
   */
  clone(capacity: number = this.capacity): HashLru {
    if (capacity < this.count) throw new RangeError(`HashLru.clone: capacity ${capacity} is below the size ${this.count}`);
    const c = new HashLru(capacity, this.index.clone(), this.slots.slice(0, Math.min(this.slots.length, 4 * capacity)));
    c.head = this.head;
    c.tail = this.tail;
    c.count = this.count;
    return c;
  }

  /**
   * {@link touch} for every key of `keys`, in order. The loop lives here so that each 53-bit key goes from the
   * array into the probe as a raw double: passed one by one from elsewhere, every key was boxed on the heap.
   */
  touchAll(keys: ArrayLike<number>): void {
    for (let i = 0; i < keys.length; i++) this.touch(keys[i] as number);
  }

  /** Keys from least to most recently used (tests, debugging). */
  keys(): number[] {
    const out: number[] = [];
    const sl = this.slots;
    for (let s = this.head; s !== NIL; s = sl[4 * s + 1] as number) out.push((sl[4 * s + 3] as number) * TWO32 + ((sl[4 * s + 2] as number) >>> 0));
    return out;
  }

  private unlink(s: number): void {
    const sl = this.slots;
    const p = sl[4 * s] as number;
    const n = sl[4 * s + 1] as number;
    if (p !== NIL) sl[4 * p + 1] = n;
    else this.head = n;
    if (n !== NIL) sl[4 * n] = p;
    else this.tail = p;
  }

  private append(s: number): void {
    const sl = this.slots;
    sl[4 * s] = this.tail;
    sl[4 * s + 1] = NIL;
    if (this.tail !== NIL) sl[4 * this.tail + 1] = s;
    else this.head = s;
    this.tail = s;
  }
}
