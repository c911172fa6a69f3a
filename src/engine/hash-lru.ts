/**
 * A fixed-capacity LRU set of non-zero integer keys below 2^53 (block identities), on typed arrays: a
 * {@link HashIndex} from key to slot plus an intrusive doubly linked recency list. Touch, insert, evict and
 * lookup are O(1) with no allocation. (A JS Map used as an insertion-ordered LRU degrades: every move leaves a
 * hole that `keys().next()` must skip when evicting.)
 */
import { HashIndex } from './hash-index.js';

const NIL = -1;

export class HashLru {
  private readonly index: HashIndex;
  private readonly keyOf: Float64Array;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private head = NIL; // least recently used
  private tail = NIL; // most recently used
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`HashLru: capacity must be a positive integer, got ${capacity}`);
    this.index = new HashIndex(capacity);
    this.keyOf = new Float64Array(capacity);
    this.prev = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  has(key: number): boolean {
    return this.index.get(key) !== NIL;
  }

  /** Marks `key` most recently used, inserting it (and evicting the least recently used when full). */
  touch(key: number): void {
    let s = this.index.get(key);
    if (s !== NIL) {
      if (s !== this.tail) {
        this.unlink(s);
        this.append(s);
      }
      return;
    }
    if (this.count < this.capacity) {
      s = this.count++;
    } else {
      s = this.head;
      this.unlink(s);
      this.index.delete(this.keyOf[s] as number);
    }
    this.keyOf[s] = key;
    this.index.set(key, s);
    this.append(s);
  }

  /** Keys from least to most recently used (tests, debugging). */
  keys(): number[] {
    const out: number[] = [];
    for (let s = this.head; s !== NIL; s = this.next[s] as number) out.push(this.keyOf[s] as number);
    return out;
  }

  private unlink(s: number): void {
    const p = this.prev[s] as number;
    const n = this.next[s] as number;
    if (p !== NIL) this.next[p] = n;
    else this.head = n;
    if (n !== NIL) this.prev[n] = p;
    else this.tail = p;
  }

  private append(s: number): void {
    this.prev[s] = this.tail;
    this.next[s] = NIL;
    if (this.tail !== NIL) this.next[this.tail] = s;
    else this.head = s;
    this.tail = s;
  }
}
