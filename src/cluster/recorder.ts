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

/**
 * Where the request's prefix was when it was routed (`prefixAudit`): the chosen instance's cached leading
 * blocks against the best instance's, live at the routing instant.
 */
export interface PrefixAuditRecord {
  readonly timeUs: number;
  readonly requestId: string;
  readonly chosen: string;
  readonly chosenBlocks: number;
  readonly best: string;
  readonly bestBlocks: number;
  /** Full prompt blocks of the request. */
  readonly promptBlocks: number;
  /** Load (queue + batch + in-flight) of the chosen and of the best-prefix instance, router view. */
  readonly chosenLoad: number;
  readonly bestLoad: number;
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
  /** Record where each routed request's prefix was (reflection summaries); one cache lookup per instance per routing. */
  readonly prefixAudit?: boolean;
}

export class RunRecorder {
  readonly preemptions: PreemptionRecord[] = [];
  readonly routings: RoutingOutcomeRecord[] = [];
  readonly kvSamples: KvSampleRecord[] = [];
  readonly batches: BatchRecord[] = [];
  readonly prefixAudits: PrefixAuditRecord[] = [];
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
      if (this.opts.prefixAudit === true) this.audit(cs, o);
    };
    cs.instances.forEach((inst, i) => this.watch(inst, i));
    const prevAdded = cs.onInstanceAdded;
    cs.onInstanceAdded = (inst, i) => {
      prevAdded?.(inst, i);
      this.watch(inst, i);
    };
  }

  private watch(inst: Instance, i: number): void {
    this.lastSample.push(-Infinity);
    this.lastCounters.push({ offloads: 0, reloads: 0 });
    const prev = inst.onStep;
    inst.onStep = prev === null ? (_, info) => this.step(inst, i, info) : (x, info) => {
      prev(x, info);
      this.step(inst, i, info);
    };
  }

  private audit(cs: ClusterSimulator, o: RoutingObservation): void {
    const chosen = cs.instances[o.instanceIndex] as Instance;
    const promptBlocks = Math.floor(o.req.inputLen / chosen.kv.blockSize);
    if (promptBlocks === 0) return;
    let best = o.instanceIndex;
    let bestBlocks = chosen.kv.cachedPrefixBlocks(o.req);
    const chosenBlocks = bestBlocks;
    cs.instances.forEach((inst, i) => {
      const b = inst.kv.cachedPrefixBlocks(o.req);
      if (b > bestBlocks) {
        best = i;
        bestBlocks = b;
      }
    });
    const load = (i: number): number => {
      const inst = cs.instances[i] as Instance;
      return inst.queueDepth + inst.batchSize + (cs.inFlight[i] ?? 0);
    };
    this.prefixAudits.push({
      timeUs: o.clock, requestId: o.req.id, chosen: chosen.id, chosenBlocks, best: (cs.instances[best] as Instance).id, bestBlocks, promptBlocks,
      chosenLoad: load(o.instanceIndex), bestLoad: load(best),
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
