/**
 * An instance's running batch: the requests in batch order and, in parallel typed arrays ("slots"), the fields a
 * step reads and writes for every one of them — progress, new tokens, computed tokens, the current ITL run and
 * its sum, and the KV decode room. A step touches each running request; as objects scattered over the heap
 * that costs cache misses per request per step, while the slots are read sequentially.
 *
 * While a request is in the batch its slot, not the Request object, holds those fields. The object is brought
 * up to date ({@link sync}) whenever anything else may read it: when it leaves the batch, before a KV call for
 * it, before observers, policy hooks and invariant checks. Decode tokens that fit the request's partial KV
 * block are counted in the slot and handed to the KV store in one call before its next use of the request
 * (KVStore.decodeRoom / commitDecodeAppends).
 *
 * Lazy decode slots: a request in a steady decode (one token per step, room left in its partial KV block, not
 * finishing) changes only by +1 per step in progress, computed tokens, ITL count and pending appends, by -1 in
 * decode room, and by the step's ITL value in its ITL sum. Such a slot can be marked lazy at the end of step
 * `a` (its anchor): its stored fields stay as they were, and its true fields after step `done` are the stored
 * ones plus (done - a) — and, for the ITL sum, plus the ITL values of steps a+1..done, read from a running sum
 * ({@link psum}). Every ITL value is an integer number of ticks, so that running sum is exact and the result is
 * bit-identical to adding the values one by one. Its `due` step is the first step that must see it as an
 * ordinary slot (its room runs out, it finishes, or it reaches max-model-len); the step loop skips a lazy slot
 * before that step and {@link materialize}s it on it. Everything that reads slots outside the step loop goes
 * through {@link sync}, which materializes first.
 *
 * Most of a long batch is lazy at any step, so the step loop does not visit every slot to find the few that are
 * not: a bitmap ({@link act}) marks the ordinary slots ({@link nextActive} walks it), and a ring of buckets
 * indexed by due step lists the requests that become due then ({@link materializeDue}).
 */
import type { Request } from '../domain/request.js';
import type { KVStore } from '../kv/types.js';
import type { StepBatch } from '../latency/types.js';

type SlotArray = Int32Array | Float64Array | Uint8Array;

/** Due-step buckets (a power of two): a slot is made lazy for at most RING - 1 steps at a time. */
const RING = 64;

/** The ring of a batch that never held a request (never read: no slot is lazy; never written). */
const NO_RING: Request[][] = [];
/** The slot arrays of a batch that never held a request (length 0: nothing reads or writes them). */
const NONE_I32 = new Int32Array(0);
const NONE_F64 = new Float64Array(0);
const NONE_U8 = new Uint8Array(0);

/** A copy of `a` with room for `c` slots. */
function widen<T extends SlotArray>(a: T, c: number): T {
  const b = new (a.constructor as new (n: number) => T)(c);
  b.set(a);
  return b;
}

export class RunningBatch {
  /** The running requests in batch order (slot j is reqs[j]). */
  reqs: Request[] = [];
  /** The previous step's array, reused for the next split. */
  spare: Request[] = [];
  pi: Int32Array;
  il: Int32Array;
  ol: Int32Array;
  nn: Int32Array;
  ct: Int32Array;
  /** ITL count, current run's first and last step, sum. */
  itc: Int32Array;
  itf: Int32Array;
  itl: Int32Array;
  its: Float64Array;
  /** Decode tokens that may still be appended without a KV call, and those appended since the last commit. */
  room: Int32Array;
  pend: Int32Array;
  /** Lazy decode slots (see above): 1 = lazy; anchor step; running ITL sum at the anchor; due step. */
  lz: Uint8Array;
  ag: Int32Array;
  ap: Float64Array;
  due: Int32Array;
  /** The last step whose execution is reflected in {@link psum} (lazy slots' fields are as of this step). */
  done = 0;
  /** Running sum of every executed step's ITL value (integers, so exact). */
  psum = 0;
  /** Lazy slots, and the sum over them of (stored progress - anchor): their progress sum is lazyBase + n * done. */
  lazyCount = 0;
  lazyBase = 0;
  /** {@link slotArrays}, rebuilt when they grow. */
  private slots: SlotArray[];
  /** Bit j set: slot j is ordinary (not lazy); no bits past the batch's length. */
  private act: Int32Array;
  /**
   * Requests made lazy with due step s, in bucket s % RING (entries may be stale: checked when read). Made by
   * the first {@link push}: until then nothing is lazy, and an idle instance of a large cluster does without
   * its 64 arrays (issue 27).
   */
  private ring: Request[][] = NO_RING;
  private readonly ringLen = new Int32Array(RING);
  /** The step's scheduled requests for the latency model (filled by {@link scheduled}). */
  readonly step: { count: number; progress: Int32Array; newTokens: Int32Array; inputLen: Int32Array; outputLen: Int32Array };

  /** Slots of the first growth (the arrays start empty: see the constructor). */
  private readonly first: number;

  /**
   * `capacity`: slots made room for by the first {@link push}. Until then every slot array is a shared empty one:
   * an instance that never runs a request (most of a 10,000-instance cluster under light load) holds none of
   * its 21 arrays (issue 27).
   */
  constructor(private readonly kv: KVStore, capacity = 64) {
    this.first = Math.max(1, capacity);
    this.pi = this.il = this.ol = this.nn = this.ct = this.itc = this.itf = this.itl = this.room = this.pend = this.ag = this.due = NONE_I32;
    this.its = this.ap = NONE_F64;
    this.lz = NONE_U8;
    this.step = { count: 0, progress: NONE_I32, newTokens: NONE_I32, inputLen: NONE_I32, outputLen: NONE_I32 };
    this.slots = this.slotArrays();
    this.act = NONE_I32;
  }

  get length(): number {
    return this.reqs.length;
  }

  private grow(): void {
    const c = Math.max(this.first, this.pi.length * 2);
    this.pi = widen(this.pi, c);
    this.il = widen(this.il, c);
    this.ol = widen(this.ol, c);
    this.nn = widen(this.nn, c);
    this.ct = widen(this.ct, c);
    this.itc = widen(this.itc, c);
    this.itf = widen(this.itf, c);
    this.itl = widen(this.itl, c);
    this.its = widen(this.its, c);
    this.room = widen(this.room, c);
    this.pend = widen(this.pend, c);
    this.lz = widen(this.lz, c);
    this.ag = widen(this.ag, c);
    this.ap = widen(this.ap, c);
    this.due = widen(this.due, c);
    this.slots = this.slotArrays();
    this.act = widen(this.act, (c + 31) >>> 5);
    const st = this.step;
    st.progress = new Int32Array(c);
    st.newTokens = new Int32Array(c);
    st.inputLen = new Int32Array(c);
    st.outputLen = new Int32Array(c);
  }

  /** Appends `r` (its fields as they are on the object) as the batch's last slot. */
  push(r: Request): void {
    const j = this.reqs.length;
    if (j === this.pi.length) this.grow();
    if (this.ring === NO_RING) this.ring = Array.from({ length: RING }, () => []);
    this.reqs.push(r);
    r.batchSlot = j;
    this.load(j, r);
    this.setAct(j);
  }

  /**
   * Copies `r`'s fields into slot j. A request re-prefilling its outputs after a recompute preemption (E13,
   * `replayTokens` > 0) is seen as vLLM sees it: a prompt of inputLen + replayTokens and that many outputs fewer
   * (same end position), so the step loop and the latency model price the re-prefill as one prefill.
   */
  private load(j: number, r: Request): void {
    const replay = r.replayTokens;
    this.pi[j] = r.progressIndex;
    this.il[j] = r.inputLen + replay;
    this.ol[j] = r.outputLen - replay;
    this.nn[j] = r.numNewTokens;
    this.ct[j] = r.computedTokens;
    this.itc[j] = r.itlCount;
    this.itf[j] = r.itlFirst;
    this.itl[j] = r.itlLast;
    this.its[j] = r.itlSum;
    this.room[j] = 0;
    this.pend[j] = 0;
    this.lz[j] = 0;
  }

  /**
   * Marks slot j lazy after step `step` executed (its values are this step's), if it is in a steady decode that
   * lasts at least one more step: it decoded this step, continuing its ITL run, and has decode room left.
   */
  lazify(j: number, step: number, maxModelLen: number): void {
    const p = this.pi[j] as number;
    const inLen = this.il[j] as number;
    const ol = this.ol[j] as number;
    const room = this.room[j] as number;
    if (room <= 0 || ol <= 0 || p <= inLen || this.itl[j] !== step || (this.nn[j] as number) !== 1 || (this.itc[j] as number) <= 0) return;
    let d = inLen + ol - 1 - p;
    if (room + 1 < d) d = room + 1;
    if (maxModelLen > 0 && maxModelLen - 1 - p < d) d = maxModelLen - 1 - p;
    if (d < 2) return;
    if (d >= RING) d = RING - 1;
    this.lz[j] = 1;
    this.ag[j] = step;
    this.ap[j] = this.psum;
    this.due[j] = step + d;
    this.lazyCount++;
    this.lazyBase += p - step;
    this.act[j >>> 5] = (this.act[j >>> 5] as number) & ~(1 << (j & 31));
    const b = (step + d) & (RING - 1);
    const n = this.ringLen[b] as number;
    const bucket = this.ring[b] as Request[];
    if (n < bucket.length) bucket[n] = this.reqs[j] as Request;
    else bucket.push(this.reqs[j] as Request);
    this.ringLen[b] = n + 1;
  }

  /** Materializes the lazy slots due at `step` (the step about to form), and empties their bucket. */
  materializeDue(step: number): void {
    const b = step & (RING - 1);
    const n = this.ringLen[b] as number;
    if (n === 0) return;
    const bucket = this.ring[b] as Request[];
    const reqs = this.reqs;
    for (let k = 0; k < n; k++) {
      const r = bucket[k] as Request;
      const j = r.batchSlot;
      // A stale entry: the request left, or was materialized (and maybe made lazy again) since.
      if (reqs[j] === r && this.lz[j] === 1 && (this.due[j] as number) <= step) this.materialize(j);
    }
    this.ringLen[b] = 0;
  }

  /** The first ordinary slot at or after `i` (the batch's length if none). */
  nextActive(i: number): number {
    const n = this.reqs.length;
    if (this.lazyCount === 0 || i >= n) return i;
    const act = this.act;
    let w = i >>> 5;
    let bits = (act[w] as number) & (-1 << (i & 31));
    while (bits === 0) {
      w++;
      if (w << 5 >= n) return n;
      bits = act[w] as number;
    }
    return (w << 5) + (31 - Math.clz32(bits & -bits));
  }

  private setAct(j: number): void {
    this.act[j >>> 5] = (this.act[j >>> 5] as number) | (1 << (j & 31));
  }

  /** Rebuilds {@link act} from the lazy flags of slots `from` on (after the slots there moved). */
  private rebuildAct(from: number): void {
    const act = this.act;
    const lz = this.lz;
    const n = this.reqs.length;
    const w0 = from >>> 5;
    act.fill(0, w0);
    for (let j = w0 << 5; j < n; j++) if (lz[j] === 0) this.setAct(j);
  }

  /** Makes lazy slot j ordinary again, with its fields as of step {@link done}. */
  materialize(j: number): void {
    const a = this.ag[j] as number;
    const p = this.pi[j] as number;
    this.lz[j] = 0;
    this.setAct(j);
    this.lazyCount--;
    this.lazyBase -= p - a;
    const d = this.done - a;
    if (d > 0) {
      this.pi[j] = p + d;
      this.ct[j] = (this.ct[j] as number) + d;
      this.itc[j] = (this.itc[j] as number) + d;
      this.itl[j] = this.done;
      this.pend[j] = (this.pend[j] as number) + d;
      this.room[j] = (this.room[j] as number) - d;
      this.its[j] = (this.its[j] as number) + (this.psum - (this.ap[j] as number));
    }
  }

  /** Makes every lazy slot ordinary. */
  materializeAll(): void {
    if (this.lazyCount === 0) return;
    const lz = this.lz;
    for (let j = 0; j < this.reqs.length; j++) if (lz[j] === 1) this.materialize(j);
  }

  /** The sum of the lazy slots' progress as of step {@link done}. */
  lazyProgress(): number {
    return this.lazyBase + this.lazyCount * this.done;
  }

  /** Hands slot j's counted decode tokens to the KV store. */
  commitKv(j: number): void {
    const n = this.pend[j] as number;
    if (n > 0) {
      this.pend[j] = 0;
      this.kv.commitDecodeAppends(this.reqs[j] as Request, n);
    }
  }

  /** Brings request j's object up to date (fields and KV), e.g. before anything else reads it. */
  sync(j: number): Request {
    if (this.lz[j] === 1) this.materialize(j);
    const r = this.reqs[j] as Request;
    r.progressIndex = this.pi[j] as number;
    r.numNewTokens = this.nn[j] as number;
    r.computedTokens = this.ct[j] as number;
    r.itlCount = this.itc[j] as number;
    r.itlFirst = this.itf[j] as number;
    r.itlLast = this.itl[j] as number;
    r.itlSum = this.its[j] as number;
    this.commitKv(j);
    return r;
  }

  syncAll(): void {
    for (let j = 0; j < this.reqs.length; j++) this.sync(j);
  }

  /** Re-reads slot j from its request after something changed the object (rare paths). */
  reload(j: number): void {
    if (this.lz[j] === 1) this.materialize(j);
    const room = this.room[j] as number;
    const pend = this.pend[j] as number;
    this.load(j, this.reqs[j] as Request);
    this.room[j] = room;
    this.pend[j] = pend;
  }

  indexOf(r: Request): number {
    return this.reqs.indexOf(r);
  }

  /** Removes slot j (synced first) and returns its request; later slots move up one. */
  removeAt(j: number): Request {
    const r = this.sync(j);
    const n = this.reqs.length;
    this.reqs.splice(j, 1);
    for (const a of this.slots) a.copyWithin(j, j + 1, n);
    for (let k = j; k < n - 1; k++) (this.reqs[k] as Request).batchSlot = k;
    this.rebuildAct(j);
    return r;
  }

  /**
   * Removes the slots `gone[0..count)` (ascending), keeping the others in order: the slot arrays close each gap
   * with one block copy, and the requests go to a fresh array (the old one, which a step's observers still read
   * as the pre-split batch, becomes {@link spare}).
   */
  removeSlots(gone: readonly number[], count: number): void {
    const reqs = this.reqs;
    const n = reqs.length;
    // Written by index over the spare array's old contents, then cut to length: emptying it first (length = 0)
    // dropped its backing store, and the pushes that regrew it were most of the step loop's garbage.
    const out = this.spare;
    let to = gone[0] as number;
    for (let j = 0; j < to; j++) out[j] = reqs[j] as Request;
    for (let g = 0; g < count; g++) {
      const from = (gone[g] as number) + 1;
      const end = g + 1 < count ? (gone[g + 1] as number) : n;
      const len = end - from;
      if (len <= 0) continue;
      for (const a of this.slots) a.copyWithin(to, from, end);
      for (let j = from; j < end; j++) {
        const r = reqs[j] as Request;
        r.batchSlot = to;
        out[to++] = r;
      }
    }
    out.length = to;
    this.spare = reqs;
    this.reqs = out;
    this.rebuildAct(gone[0] as number);
  }

  /** Every per-slot array, for block moves ({@link slots} holds the current list). */
  private slotArrays(): SlotArray[] {
    return [this.pi, this.il, this.ol, this.nn, this.ct, this.itc, this.itf, this.itl, this.its, this.room, this.pend, this.lz, this.ag, this.ap, this.due];
  }

  /**
   * Fills {@link step} with the slots that have new tokens, in batch order, leaving out lazy slots (a step with
   * lazy slots prices them from {@link lazyCount} and {@link lazyProgress}).
   */
  scheduled(): StepBatch {
    const st = this.step;
    const nn = this.nn;
    let c = 0;
    const n = this.reqs.length;
    for (let j = this.nextActive(0); j < n; j = this.nextActive(j + 1)) {
      const t = nn[j] as number;
      if (t > 0) {
        st.progress[c] = this.pi[j] as number;
        st.newTokens[c] = t;
        st.inputLen[c] = this.il[j] as number;
        st.outputLen[c] = this.ol[j] as number;
        c++;
      }
    }
    st.count = c;
    return st;
  }
}
