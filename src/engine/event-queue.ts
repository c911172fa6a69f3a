/**
 * The discrete-event kernel's priority queue.
 *
 * Binary min-heaps ordered by the explicit key (time, order, seq):
 * - `time`: the event's tick;
 * - `order`: a small integer that encodes same-tick precedence (the owner packs layer, instance index and
 *   event priority into it);
 * - `seq`: a push counter assigned here, so equal (time, order) events pop in push order.
 * The key is a strict total order, so the pop sequence is independent of the heaps' internal layout — the
 * property the reference relies on (container/heap with a (timestamp, priority, seqID) Less).
 *
 * Events of one kind may be kept in a second heap (`sideKind`): the simulator's client timeouts are one per
 * request, live for minutes of simulated time and are almost all cancelled lazily, so in the main heap they
 * would make it tens of thousands deep and every step's push and pop walk it. Both heaps share the sequence
 * counter and the queue pops whichever top has the smaller full key: the same order as one heap.
 *
 * Hand-rolled rather than a library heap: this is the hottest structure in the simulator (several pushes
 * and pops per simulated step), the keys sit interleaved in one Float64Array (a heap level touches one cache
 * line, not one per field), and the tie order must be explicit (a popular heap package pops tied events in
 * a different order; see dependencies.md).
 */
class Heap<P> {
  /** Entry i at [4i, 4i+3]: time, order, seq, kind. */
  keys: Float64Array;
  payloads: (P | null)[];
  size = 0;

  constructor(capacity: number) {
    this.keys = new Float64Array(4 * capacity);
    this.payloads = new Array<P | null>(capacity).fill(null);
  }

  push(time: number, order: number, seq: number, kind: number, payload: P | null): void {
    if (this.size === this.payloads.length) this.grow();
    const k = this.keys;
    const pl = this.payloads;
    let i = this.size++;
    // Sift up with a hole: move parents down until the new key's place is found.
    while (i > 0) {
      const p = (i - 1) >> 1;
      const tp = k[4 * p] as number;
      if (time > tp || (time === tp && (order > (k[4 * p + 1] as number) || (order === k[4 * p + 1] && seq > (k[4 * p + 2] as number))))) break;
      k[4 * i] = tp;
      k[4 * i + 1] = k[4 * p + 1] as number;
      k[4 * i + 2] = k[4 * p + 2] as number;
      k[4 * i + 3] = k[4 * p + 3] as number;
      pl[i] = pl[p] as P | null;
      i = p;
    }
    k[4 * i] = time;
    k[4 * i + 1] = order;
    k[4 * i + 2] = seq;
    k[4 * i + 3] = kind;
    pl[i] = payload;
  }

  pop(): void {
    const n = --this.size;
    const k = this.keys;
    const pl = this.payloads;
    pl[0] = null;
    if (n === 0) return;
    const t = k[4 * n] as number;
    const o = k[4 * n + 1] as number;
    const s = k[4 * n + 2] as number;
    const kd = k[4 * n + 3] as number;
    const last = pl[n] as P | null;
    pl[n] = null;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      const r = c + 1;
      if (r < n && less(k, r, c)) c = r;
      const tc = k[4 * c] as number;
      // Stop when the last entry's key is not greater than the smaller child's.
      if (tc > t || (tc === t && ((k[4 * c + 1] as number) > o || (k[4 * c + 1] === o && (k[4 * c + 2] as number) > s)))) break;
      k[4 * i] = tc;
      k[4 * i + 1] = k[4 * c + 1] as number;
      k[4 * i + 2] = k[4 * c + 2] as number;
      k[4 * i + 3] = k[4 * c + 3] as number;
      pl[i] = pl[c] as P | null;
      i = c;
    }
    k[4 * i] = t;
    k[4 * i + 1] = o;
    k[4 * i + 2] = s;
    k[4 * i + 3] = kd;
    pl[i] = last;
  }

  private grow(): void {
    const cap = this.payloads.length * 2;
    const k = new Float64Array(4 * cap);
    k.set(this.keys);
    this.keys = k;
    const old = this.payloads;
    this.payloads = new Array<P | null>(cap).fill(null);
    for (let i = 0; i < old.length; i++) this.payloads[i] = old[i] as P | null;
  }
}

/** Entry a's key strictly less than entry b's. */
function less(k: Float64Array, a: number, b: number): boolean {
  const ta = k[4 * a] as number;
  const tb = k[4 * b] as number;
  if (ta !== tb) return ta < tb;
  const oa = k[4 * a + 1] as number;
  const ob = k[4 * b + 1] as number;
  if (oa !== ob) return oa < ob;
  return (k[4 * a + 2] as number) < (k[4 * b + 2] as number);
}

export class EventQueue<P> {
  private readonly main: Heap<P>;
  /** Events of `sideKind`, or null when every event shares the main heap. */
  private readonly side: Heap<P> | null;
  private seqCounter = 0;
  /** The heap holding the earliest event (valid while both are non-empty). */
  private first: Heap<P>;

  /** `sideKind`: an event kind kept in its own heap (see the module comment); -1 = none. */
  constructor(initialCapacity = 1024, private readonly sideKind = -1) {
    const cap = Math.max(16, initialCapacity);
    this.main = new Heap<P>(cap);
    this.side = sideKind >= 0 ? new Heap<P>(cap) : null;
    this.first = this.main;
  }

  get length(): number {
    return this.main.size + (this.side === null ? 0 : this.side.size);
  }

  /** Picks the heap whose top comes first (after every change). */
  private choose(): void {
    const side = this.side;
    if (side === null || side.size === 0) {
      this.first = this.main;
      return;
    }
    if (this.main.size === 0) {
      this.first = side;
      return;
    }
    const a = this.main.keys;
    const b = side.keys;
    const ta = a[0] as number;
    const tb = b[0] as number;
    let mainFirst: boolean;
    if (ta !== tb) mainFirst = ta < tb;
    else if (a[1] !== b[1]) mainFirst = (a[1] as number) < (b[1] as number);
    else mainFirst = (a[2] as number) < (b[2] as number);
    this.first = mainFirst ? this.main : side;
  }

  /** Time of the earliest event; +Infinity when empty. */
  peekTime(): number {
    const h = this.first;
    return h.size > 0 ? (h.keys[0] as number) : Infinity;
  }

  peekOrder(): number {
    const h = this.first;
    return h.size > 0 ? (h.keys[1] as number) : Infinity;
  }

  peekKind(): number {
    const h = this.first;
    return h.size > 0 ? (h.keys[3] as number) : -1;
  }

  peekPayload(): P | null {
    const h = this.first;
    return h.size > 0 ? (h.payloads[0] as P | null) : null;
  }

  push(time: number, order: number, kind: number, payload: P | null): void {
    const seq = ++this.seqCounter;
    (kind === this.sideKind && this.side !== null ? this.side : this.main).push(time, order, seq, kind, payload);
    this.choose();
  }

  /** Removes the earliest event; read it first with the peek methods. */
  pop(): void {
    if (this.length === 0) throw new Error('EventQueue.pop on an empty queue');
    this.first.pop();
    this.choose();
  }

  clear(): void {
    for (const h of [this.main, this.side]) {
      if (h === null) continue;
      h.payloads.fill(null, 0, h.size);
      h.size = 0;
    }
    this.first = this.main;
  }
}
