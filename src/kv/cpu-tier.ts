/**
 * CPU mirror tier: an LRU set of block identities with fixed capacity (reference `cpuTier` in
 * `sim/kv/tiered.go`). Only identities are kept: a reload needs to know that the content exists, and the
 * GPU cache reads token values from requests, never from stored blocks.
 *
 * Mirroring touches every full block of every running request after every step, so touch must be cheap.
 * Instead of relinking a doubly linked list, each touch gives the entry a fresh stamp and appends a
 * (slot, stamp) record to a queue; the LRU entry is the oldest queue record whose stamp is still current.
 * Ordering entries by last stamp is exactly the order the reference's move-to-tail list keeps. Stale
 * records are dropped when they reach the queue front or when the queue is compacted.
 */
import { HashIndex } from '../engine/hash-index.js';

const FREE = 0; // slotHash value of an unused slot (identities are never 0)

export class CpuTier {
  readonly capacity: number;
  private readonly slotOf: HashIndex;
  // Slot arrays grow on demand: configured capacities can be far larger than what a run ever mirrors.
  private slotHash: Float64Array;
  private stamp: Float64Array;
  private nextUnused = 0;
  private readonly freeSlots: number[] = [];
  private clock = 0;
  private qSlot: Int32Array;
  private qStamp: Float64Array;
  private qHead = 0;
  private qTail = 0;
  private evictions = 0;
  /** Told each identity the LRU evicts (the storage tier below writes it back); null = nobody listens. */
  onEvict: ((h: number) => void) | null = null;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) {
      throw new RangeError(`CpuTier: capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    const initial = Math.min(capacity, 1024);
    this.slotOf = new HashIndex(initial);
    this.slotHash = new Float64Array(initial);
    this.stamp = new Float64Array(initial);
    this.qSlot = new Int32Array(initial * 4);
    this.qStamp = new Float64Array(initial * 4);
  }

  get used(): number {
    return this.slotOf.size;
  }

  get evictionCount(): number {
    return this.evictions;
  }

  has(h: number): boolean {
    return this.slotOf.has(h);
  }

  /** Insert `h` as most recent, evicting the oldest entry when full. A present `h` is left untouched. */
  store(h: number): void {
    if (!this.slotOf.has(h)) this.insert(h);
  }

  /** Mark `h` most recent; returns false (and does nothing) if absent. */
  touch(h: number): boolean {
    const s = this.slotOf.get(h);
    if (s < 0) return false;
    this.bump(s);
    return true;
  }

  /** Mirror step for one block: refresh `h` if present, else store it. Returns true if it was stored. */
  touchOrStore(h: number): boolean {
    const s = this.slotOf.get(h);
    if (s >= 0) {
      this.bump(s);
      return false;
    }
    this.insert(h);
    return true;
  }

  /**
   * Slot-level access for the mirror loop, which remembers each GPU block's slot so that it can skip the
   * identity lookup: `touchSlot(s, h)` refreshes slot `s` if it still holds `h` and reports whether it did;
   * `touchOrStoreSlot(h)` is {@link touchOrStore} returning the slot (see {@link lastStored}).
   */
  touchSlot(s: number, h: number): boolean {
    if (s < 0 || this.slotHash[s] !== h) return false;
    this.bump(s);
    return true;
  }

  /** Whether the last {@link touchOrStoreSlot} stored (rather than touched). */
  lastStored = false;

  touchOrStoreSlot(h: number): number {
    let s = this.slotOf.get(h);
    this.lastStored = s < 0;
    if (s >= 0) this.bump(s);
    else s = this.insert(h);
    return s;
  }

  evictHead(): void {
    while (this.qHead < this.qTail) {
      const s = this.qSlot[this.qHead] as number;
      const st = this.qStamp[this.qHead] as number;
      this.qHead++;
      const h = this.slotHash[s] as number;
      if (h === FREE || this.stamp[s] !== st) continue;
      this.slotOf.delete(h);
      this.slotHash[s] = FREE;
      this.freeSlots.push(s);
      this.evictions++;
      if (this.onEvict !== null) this.onEvict(h);
      return;
    }
  }

  /** Identities oldest first (tests, debugging). */
  lruOrder(): number[] {
    const out: number[] = [];
    for (let i = this.qHead; i < this.qTail; i++) {
      const s = this.qSlot[i] as number;
      if (this.slotHash[s] !== FREE && this.stamp[s] === this.qStamp[i]) out.push(this.slotHash[s] as number);
    }
    return out;
  }

  private insert(h: number): number {
    if (this.slotOf.size >= this.capacity) this.evictHead();
    const s = this.freeSlots.pop() ?? this.newSlot();
    this.slotHash[s] = h;
    this.slotOf.set(h, s);
    this.bump(s);
    return s;
  }

  private bump(s: number): void {
    const st = ++this.clock;
    this.stamp[s] = st;
    if (this.qTail === this.qSlot.length) this.compact();
    this.qSlot[this.qTail] = s;
    this.qStamp[this.qTail] = st;
    this.qTail++;
  }

  /** Drop stale records; grow when live records would still fill over a quarter of the queue (bounds compaction work per touch). */
  private compact(): void {
    let w = 0;
    for (let i = this.qHead; i < this.qTail; i++) {
      const s = this.qSlot[i] as number;
      const st = this.qStamp[i] as number;
      if (this.slotHash[s] !== FREE && this.stamp[s] === st) {
        this.qSlot[w] = s;
        this.qStamp[w] = st;
        w++;
      }
    }
    this.qHead = 0;
    this.qTail = w;
    if (w * 4 > this.qSlot.length) {
      const slots = new Int32Array(this.qSlot.length * 2);
      slots.set(this.qSlot.subarray(0, w));
      const stamps = new Float64Array(this.qSlot.length * 2);
      stamps.set(this.qStamp.subarray(0, w));
      this.qSlot = slots;
      this.qStamp = stamps;
    }
  }

  private newSlot(): number {
    const s = this.nextUnused++;
    if (s === this.slotHash.length) {
      const n = Math.min(this.capacity, s * 2);
      const h = new Float64Array(n);
      h.set(this.slotHash);
      this.slotHash = h;
      const st = new Float64Array(n);
      st.set(this.stamp);
      this.stamp = st;
    }
    return s;
  }
}
