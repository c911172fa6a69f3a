/**
 * CPU mirror tier: an LRU set of block identities with fixed capacity (reference `cpuTier` in
 * `sim/kv/tiered.go`). Only identities are kept: a reload needs to know that the content exists, and the
 * GPU cache reads token values from requests, never from stored blocks.
 *
 * The LRU order is an intrusive doubly linked list over slot indices rather than Map insertion order,
 * because repeatedly evicting the oldest entry of a JS Map scans the deleted holes left at its front.
 */
const NIL = -1;

export class CpuTier {
  readonly capacity: number;
  private readonly slotOf = new Map<number, number>();
  // Slot arrays grow on demand: configured capacities can be far larger than what a run ever mirrors.
  private slotHash: Float64Array;
  private prev: Int32Array;
  private next: Int32Array;
  private nextUnused = 0;
  private readonly freeSlots: number[] = [];
  private head = NIL;
  private tail = NIL;
  private evictions = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) {
      throw new RangeError(`CpuTier: capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    const initial = Math.min(capacity, 1024);
    this.slotHash = new Float64Array(initial);
    this.prev = new Int32Array(initial);
    this.next = new Int32Array(initial);
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
    if (this.slotOf.has(h)) return;
    if (this.slotOf.size >= this.capacity) this.evictHead();
    const s = this.freeSlots.pop() ?? this.newSlot();
    this.slotHash[s] = h;
    this.slotOf.set(h, s);
    this.linkTail(s);
  }

  /** Mark `h` most recent; returns false (and does nothing) if absent. */
  touch(h: number): boolean {
    const s = this.slotOf.get(h);
    if (s === undefined) return false;
    if (s !== this.tail) {
      this.unlink(s);
      this.linkTail(s);
    }
    return true;
  }

  evictHead(): void {
    const s = this.head;
    if (s === NIL) return;
    this.unlink(s);
    this.slotOf.delete(this.slotHash[s] as number);
    this.freeSlots.push(s);
    this.evictions++;
  }

  /** Identities oldest first (tests, debugging). */
  lruOrder(): number[] {
    const out: number[] = [];
    for (let s = this.head; s !== NIL; s = this.next[s] as number) out.push(this.slotHash[s] as number);
    return out;
  }

  private newSlot(): number {
    const s = this.nextUnused++;
    if (s === this.slotHash.length) {
      const n = Math.min(this.capacity, s * 2);
      const h = new Float64Array(n);
      h.set(this.slotHash);
      this.slotHash = h;
      const p = new Int32Array(n);
      p.set(this.prev);
      this.prev = p;
      const x = new Int32Array(n);
      x.set(this.next);
      this.next = x;
    }
    return s;
  }

  private linkTail(s: number): void {
    this.next[s] = NIL;
    this.prev[s] = this.tail;
    if (this.tail !== NIL) this.next[this.tail] = s;
    else this.head = s;
    this.tail = s;
  }

  private unlink(s: number): void {
    const p = this.prev[s] as number;
    const n = this.next[s] as number;
    if (p !== NIL) this.next[p] = n;
    else this.head = n;
    if (n !== NIL) this.prev[n] = p;
    else this.tail = p;
  }
}
