/**
 * Collects the raw event records of a run that anomaly detection and `--trace-level full` need:
 * preemptions, routings with ShadowKV's prediction and the actual cache state, KV transfer counters sampled
 * over time, and (full traces only) one record per batch formation. Attaching installs hooks on the cluster
 * and its instances; nothing here changes what the simulation does.
 */
import type { Request } from '../domain/request.js';
import type { Instance, StepInfo } from '../instance/instance.js';
import type { ClusterSimulator, RoutingObservation } from './cluster.js';

export interface PreemptionRecord {
  readonly timeUs: number;
  readonly instance: string;
  readonly requestId: string;
}

export interface RoutingOutcomeRecord {
  readonly timeUs: number;
  readonly requestId: string;
  readonly instance: string;
  readonly expectedHit: boolean;
  readonly actualHit: boolean;
}

export interface KvSampleRecord {
  readonly timeUs: number;
  readonly instance: string;
  readonly offloads: number;
  readonly reloads: number;
}

/** One batch formation (`--trace-level full`). */
export interface BatchRecord {
  readonly timeUs: number;
  readonly instance: string;
  readonly step: number;
  /** Requests computing this step with their new tokens. */
  readonly scheduled: readonly { readonly id: string; readonly tokens: number }[];
  readonly newlyScheduled: readonly string[];
  readonly preempted: readonly string[];
  readonly durationUs: number;
  /** KV blocks offloaded GPU->CPU and reloaded CPU->GPU since the previous step (tiered KV). */
  readonly offloads: number;
  readonly reloads: number;
}

export interface RecorderOptions {
  /** Keep one record per batch formation (can be large: one per step per instance). */
  readonly batches: boolean;
  /** Minimum spacing of KV counter samples per instance (µs). */
  readonly kvSampleIntervalUs: number;
}

export class RunRecorder {
  readonly preemptions: PreemptionRecord[] = [];
  readonly routings: RoutingOutcomeRecord[] = [];
  readonly kvSamples: KvSampleRecord[] = [];
  readonly batches: BatchRecord[] = [];
  /** First time each request was scheduled into a batch (µs). */
  readonly firstScheduled = new Map<Request, number>();
  private readonly lastSample: number[] = [];
  private readonly lastCounters: { offloads: number; reloads: number }[] = [];

  constructor(private readonly opts: RecorderOptions) {}

  attach(cs: ClusterSimulator): void {
    const prev = cs.onRouting;
    cs.onRouting = (o: RoutingObservation) => {
      prev?.(o);
      if (o.expectedCacheHit !== null && o.cacheHit !== null) {
        this.routings.push({ timeUs: o.clock, requestId: o.req.id, instance: (cs.instances[o.instanceIndex] as Instance).id, expectedHit: o.expectedCacheHit, actualHit: o.cacheHit });
      }
    };
    cs.instances.forEach((inst, i) => {
      this.lastSample.push(-Infinity);
      this.lastCounters.push({ offloads: 0, reloads: 0 });
      inst.onStep = (_, info) => this.step(inst, i, info);
    });
  }

  private step(inst: Instance, i: number, info: StepInfo): void {
    for (const r of info.newlyScheduled) if (!this.firstScheduled.has(r)) this.firstScheduled.set(r, info.clock);
    for (const v of info.preempted) this.preemptions.push({ timeUs: info.clock, instance: inst.id, requestId: v.id });
    const st = inst.kv.tierStats();
    const last = this.lastCounters[i] as { offloads: number; reloads: number };
    if (this.opts.batches) {
      const scheduled: { id: string; tokens: number }[] = [];
      for (const r of info.batch) if (r.numNewTokens > 0) scheduled.push({ id: r.id, tokens: r.numNewTokens });
      this.batches.push({
        timeUs: info.clock,
        instance: inst.id,
        step: info.step,
        scheduled,
        newlyScheduled: info.newlyScheduled.map((r) => r.id),
        preempted: info.preempted.map((r) => r.id),
        durationUs: info.duration,
        offloads: st.offloads - last.offloads,
        reloads: st.reloads - last.reloads,
      });
    }
    last.offloads = st.offloads;
    last.reloads = st.reloads;
    if (info.clock - (this.lastSample[i] as number) >= this.opts.kvSampleIntervalUs && (st.offloads > 0 || st.reloads > 0)) {
      this.lastSample[i] = info.clock;
      this.kvSamples.push({ timeUs: info.clock, instance: inst.id, offloads: st.offloads, reloads: st.reloads });
    }
  }
}
