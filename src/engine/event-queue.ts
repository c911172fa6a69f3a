/**
 * The discrete-event kernel's priority queue.
 *
 * A binary min-heap over parallel typed arrays, ordered by the explicit key (time, order, seq):
 * - `time`: the event's tick;
 * - `order`: a small integer that encodes same-tick precedence (the owner packs layer, instance index and
 *   event priority into it);
 * - `seq`: a push counter assigned here, so equal (time, order) events pop in push order.
 * The key is a strict total order, so the pop sequence is independent of the heap's internal layout — the
 * property the reference relies on (container/heap with a (timestamp, priority, seqID) Less).
 *
 * Hand-rolled rather than a library heap: this is the hottest structure in the simulator (several pushes
 * and pops per simulated step), parallel Float64Arrays avoid per-event key objects, and the tie order must be
 * explicit (a popular heap package pops tied events in a different order; see dependencies.md).
 */
export class EventQueue<P> {
  private times: Float64Array;
  private orders: Float64Array;
  private seqs: Float64Array;
  private kinds: Uint8Array;
  private payloads: (P | null)[];
  private size = 0;
  private seqCounter = 0;

  constructor(initialCapacity = 1024) {
    const cap = Math.max(16, initialCapacity);
    this.times = new Float64Array(cap);
    this.orders = new Float64Array(cap);
    this.seqs = new Float64Array(cap);
    this.kinds = new Uint8Array(cap);
    this.payloads = new Array<P | null>(cap).fill(null);
  }

  get length(): number {
    return this.size;
  }

  /** Time of the earliest event; +Infinity when empty. */
  peekTime(): number {
    return this.size > 0 ? (this.times[0] as number) : Infinity;
  }

  peekOrder(): number {
    return this.size > 0 ? (this.orders[0] as number) : Infinity;
  }

  peekKind(): number {
    return this.size > 0 ? (this.kinds[0] as number) : -1;
  }

  peekPayload(): P | null {
    return this.size > 0 ? (this.payloads[0] as P | null) : null;
  }

  push(time: number, order: number, kind: number, payload: P | null): void {
    if (this.size === this.times.length) this.grow();
    const seq = ++this.seqCounter;
    let i = this.size++;
    // Sift up with a hole: move parents down until the new key's place is found.
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(time, order, seq, p)) break;
      this.move(p, i);
      i = p;
    }
    this.set(i, time, order, seq, kind, payload);
  }

  /** Removes the earliest event; read it first with the peek methods. */
  pop(): void {
    const n = --this.size;
    if (n < 0) {
      this.size = 0;
      throw new Error('EventQueue.pop on an empty queue');
    }
    this.payloads[0] = null;
    if (n === 0) return;
    const t = this.times[n] as number;
    const o = this.orders[n] as number;
    const s = this.seqs[n] as number;
    const k = this.kinds[n] as number;
    const pl = this.payloads[n] as P | null;
    this.payloads[n] = null;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.lessIdx(r, l) ? r : l;
      if (!this.lessAt(c, t, o, s)) break;
      this.move(c, i);
      i = c;
    }
    this.set(i, t, o, s, k, pl);
  }

  clear(): void {
    this.payloads.fill(null, 0, this.size);
    this.size = 0;
  }

  /** Key (time, order, seq) strictly less than slot j's key. */
  private less(t: number, o: number, s: number, j: number): boolean {
    const tj = this.times[j] as number;
    if (t !== tj) return t < tj;
    const oj = this.orders[j] as number;
    if (o !== oj) return o < oj;
    return s < (this.seqs[j] as number);
  }

  /** Slot c's key strictly less than (t, o, s). */
  private lessAt(c: number, t: number, o: number, s: number): boolean {
    const tc = this.times[c] as number;
    if (tc !== t) return tc < t;
    const oc = this.orders[c] as number;
    if (oc !== o) return oc < o;
    return (this.seqs[c] as number) < s;
  }

  private lessIdx(a: number, b: number): boolean {
    return this.lessAt(a, this.times[b] as number, this.orders[b] as number, this.seqs[b] as number);
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from] as number;
    this.orders[to] = this.orders[from] as number;
    this.seqs[to] = this.seqs[from] as number;
    this.kinds[to] = this.kinds[from] as number;
    this.payloads[to] = this.payloads[from] as P | null;
  }

  private set(i: number, t: number, o: number, s: number, k: number, p: P | null): void {
    this.times[i] = t;
    this.orders[i] = o;
    this.seqs[i] = s;
    this.kinds[i] = k;
    this.payloads[i] = p;
  }

  private grow(): void {
    const cap = this.times.length * 2;
    const grow64 = (a: Float64Array): Float64Array => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.times = grow64(this.times);
    this.orders = grow64(this.orders);
    this.seqs = grow64(this.seqs);
    const k = new Uint8Array(cap);
    k.set(this.kinds);
    this.kinds = k;
    const old = this.payloads;
    this.payloads = new Array<P | null>(cap).fill(null);
    for (let i = 0; i < old.length; i++) this.payloads[i] = old[i] as P | null;
  }
}
