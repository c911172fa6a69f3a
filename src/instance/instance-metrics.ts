/**
 * Raw per-instance counters and samples (the reference's `sim.Metrics`), recorded cheaply during the run and
 * reduced once at the end (metrics/). Per-request values live on the Request objects; `requests` lists every
 * request injected here in injection order.
 */
import type { Request } from '../domain/request.js';

/** The empty array stores start with (length 0, so never written). */
const NO_SAMPLES = new Int32Array(0);

/**
 * Append-only storage for per-token samples (every ITL of every request: millions of values). Chunked, so
 * growth never copies, and 32-bit while every value fits, which halves memory against a Float64Array; it
 * switches to 64-bit floats the first time a value does not fit an int32.
 */
export class SampleStore {
  private static readonly CHUNK = 1 << 16;
  /**
   * First chunk size: a short run's stores hold a few hundred values, and 4 stores per instance at full size were
   * megabytes to zero per run; an idle instance of a large cluster holds none (issue 27).
   */
  private static readonly FIRST = 16;
  private chunks: (Int32Array | Float64Array)[] = [];
  // Grows by doubling (copying at most CHUNK values in all) until it is a full chunk; every chunk in `chunks` is full.
  // Empty (shared, never written) until the first push: an idle instance holds no sample arrays (issue 27).
  private cur: Int32Array | Float64Array = NO_SAMPLES;
  private pos = 0;
  private wide = false;
  length = 0;

  push(v: number): void {
    if (!this.wide && (v | 0) !== v) this.widen();
    if (this.pos === this.cur.length) this.nextChunk();
    this.cur[this.pos++] = v;
    this.length++;
  }

  private nextChunk(): void {
    const n = this.cur.length;
    if (n < SampleStore.CHUNK) {
      const c = Math.max(SampleStore.FIRST, 2 * n);
      const grown = this.wide ? new Float64Array(c) : new Int32Array(c);
      grown.set(this.cur);
      this.cur = grown;
      return;
    }
    this.chunks.push(this.cur);
    this.cur = this.wide ? new Float64Array(SampleStore.CHUNK) : new Int32Array(SampleStore.CHUNK);
    this.pos = 0;
  }

  pushAll(vs: readonly number[]): void {
    for (let i = 0; i < vs.length; i++) this.push(vs[i] as number);
  }

  /** The `i`-th sample (0-based, i < length). */
  at(i: number): number {
    const k = Math.floor(i / SampleStore.CHUNK);
    const c = k < this.chunks.length ? (this.chunks[k] as Int32Array | Float64Array) : this.cur;
    return c[i - k * SampleStore.CHUNK] as number;
  }

  /** A contiguous copy of every sample, in insertion order. */
  toArray(): Int32Array | Float64Array {
    const out = this.wide ? new Float64Array(this.length) : new Int32Array(this.length);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    out.set(this.cur.subarray(0, this.pos), o);
    return out;
  }

  private widen(): void {
    this.wide = true;
    this.chunks = this.chunks.map((c) => Float64Array.from(c));
    this.cur = Float64Array.from(this.cur);
  }
}

/**
 * Growable per-index counters (one per step), kept as a difference array: a completed request adds one use to
 * every step it decoded in, a range as long as its output, so a range costs O(1) here and the counts are
 * summed once when read.
 */
export class CountStore {
  /** Doubles as steps are counted, from 64 at the first; empty (shared) while none is (issue 27). */
  private diff = NO_SAMPLES;
  private summed: Int32Array | null = null;

  /** Adds one to every index in [first, last] (1-based step numbers). */
  addRange(first: number, last: number): void {
    if (last >= this.diff.length) {
      let cap = Math.max(64, this.diff.length * 2);
      while (cap <= last) cap *= 2;
      const d = new Int32Array(cap);
      d.set(this.diff);
      this.diff = d;
    }
    const d = this.diff;
    d[first - 1] = (d[first - 1] as number) + 1;
    d[last] = (d[last] as number) - 1;
    this.summed = null;
  }

  /** The count of every index (index s-1 for step s); do not mutate. */
  get counts(): Int32Array {
    if (this.summed === null) {
      const d = this.diff;
      const out = new Int32Array(d.length);
      let run = 0;
      for (let i = 0; i < d.length; i++) {
        run += d[i] as number;
        out[i] = run;
      }
      this.summed = out;
    }
    return this.summed;
  }
}

export class InstanceMetrics {
  completedRequests = 0;
  totalInputTokens = 0;
  totalOutputTokens = 0;
  simEndedTime = 0;
  kvBlocksUsed = 0;
  peakKVBlocksUsed = 0;
  preemptionCount = 0;
  kvAllocationFailures = 0;
  cacheHitRate = 0;
  kvThrashingRate = 0;
  stillQueued = 0;
  stillRunning = 0;
  droppedUnservable = 0;
  lengthCappedRequests = 0;
  timedOutRequests = 0;
  ttftSum = 0;
  /**
   * The ITL multiset of completed requests (the reference's AllITLs) as step value × use count: every request
   * that decodes in step s records ITL stepItl[s-1]; at completion it adds one use to each of its steps.
   */
  readonly stepItl = new SampleStore();
  readonly stepItlUses = new CountStore();
  /** ITLs that are no single step's value (prefill-first stalls), one entry per token, of completed requests. */
  readonly extraItl = new SampleStore();
  /** Wait-queue length sampled at every step (for HOL-blocking detection). */
  readonly waitQSamples = new SampleStore();
  readonly runningSamples = new SampleStore();
  /** Requests injected into this instance, in injection order. */
  readonly requests: Request[] = [];
  /** LoRA: cold loads and evictions per adapter id (empty when LoRA is off). */
  readonly adapterLoads = new Map<string, number>();
  readonly adapterEvictions = new Map<string, number>();
}
