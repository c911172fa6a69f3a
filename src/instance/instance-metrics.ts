/**
 * Raw per-instance counters and samples (the reference's `sim.Metrics`), recorded cheaply during the run and
 * reduced once at the end (metrics/). Per-request values live on the Request objects; `requests` lists every
 * request injected here in injection order.
 */
import type { Request } from '../domain/request.js';

/** A growable Float64Array, so per-token samples never become boxed JS numbers in a huge array. */
export class GrowableF64 {
  data: Float64Array;
  length = 0;
  constructor(cap = 1024) {
    this.data = new Float64Array(cap);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const d = new Float64Array(this.data.length * 2);
      d.set(this.data);
      this.data = d;
    }
    this.data[this.length++] = v;
  }
  pushAll(vs: readonly number[]): void {
    const need = this.length + vs.length;
    if (need > this.data.length) {
      let cap = this.data.length * 2;
      while (cap < need) cap *= 2;
      const d = new Float64Array(cap);
      d.set(this.data.subarray(0, this.length));
      this.data = d;
    }
    for (let i = 0; i < vs.length; i++) this.data[this.length++] = vs[i] as number;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
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
  /** Every ITL of every completed request (AllITLs). */
  readonly allITLs = new GrowableF64(4096);
  /** Wait-queue length sampled at every step (for HOL-blocking detection). */
  readonly waitQSamples = new GrowableF64(1024);
  readonly runningSamples = new GrowableF64(1024);
  /** Requests injected into this instance, in injection order. */
  readonly requests: Request[] = [];
}
