/**
 * What a pluggable autoscaling policy sees of one scaling target (policy-search-design §4 AutoScaleContext):
 * per-model arrival and completion windows kept by the autoscaler, the target's replicas from the router's
 * snapshots, and a short load history per target.
 */
import type { Request } from '../../domain/request.js';
import type { AutoScaleContext, DeploymentMetrics, LoadSample } from '../../routing/autoscale.js';
import type { ReplicaSignal } from '../../routing/autoscale-saturation.js';

/** Sliding window of (time, value) pairs, oldest first. */
class TimeWindow {
  private readonly t: number[] = [];
  private readonly v: number[] = [];
  private head = 0;

  push(time: number, value: number): void {
    this.t.push(time);
    this.v.push(value);
  }

  /** Drops entries older than `from` (compacting now and then). */
  prune(from: number): void {
    while (this.head < this.t.length && (this.t[this.head] as number) < from) this.head++;
    if (this.head > 1024 && this.head * 2 > this.t.length) {
      this.t.splice(0, this.head);
      this.v.splice(0, this.head);
      this.head = 0;
    }
  }

  get count(): number {
    return this.t.length - this.head;
  }

  values(): number[] {
    return this.v.slice(this.head);
  }
}

interface Completions {
  readonly latency: TimeWindow;
  /** Per SLO class: 1 = met its TTFT target, 0 = missed (requests with a target only). */
  readonly slo: Map<string, TimeWindow>;
}

export const SIGNAL_WINDOW_US = 10_000_000;
const HISTORY = 16;

export class ScalingSignals {
  private readonly arrivals = new Map<string, TimeWindow>();
  private readonly completions = new Map<string, Completions>();
  private readonly history = new Map<string, LoadSample[]>();

  constructor(private readonly windowUs: number = SIGNAL_WINDOW_US) {}

  onArrival(req: Request, clock: number): void {
    let w = this.arrivals.get(req.model);
    if (w === undefined) {
      w = new TimeWindow();
      this.arrivals.set(req.model, w);
    }
    w.push(clock, 1);
  }

  onCompleted(req: Request, tick: number): void {
    let c = this.completions.get(req.model);
    if (c === undefined) {
      c = { latency: new TimeWindow(), slo: new Map() };
      this.completions.set(req.model, c);
    }
    c.latency.push(tick, tick - req.arrivalTime);
    if (req.sloTargetUs > 0 && req.hasTTFT) {
      const cls = req.sloClass === '' ? 'default' : req.sloClass;
      let s = c.slo.get(cls);
      if (s === undefined) {
        s = new TimeWindow();
        c.slo.set(cls, s);
      }
      s.push(tick, req.ttft <= req.sloTargetUs ? 1 : 0);
    }
  }

  /** Arrivals per second of `model` over the window ending at `clock`. */
  requestRate(model: string, clock: number): number {
    const w = this.arrivals.get(model);
    if (w === undefined) return 0;
    w.prune(clock - this.windowUs);
    return w.count / (this.windowUs / 1e6);
  }

  /** Recent completed-request latency and SLO attainment of `model`. */
  latency(model: string, clock: number): { mean: number; p99: number; slo: Record<string, number> } {
    const c = this.completions.get(model);
    if (c === undefined) return { mean: 0, p99: 0, slo: {} };
    c.latency.prune(clock - this.windowUs);
    const vals = c.latency.values().sort((a, b) => a - b);
    const mean = vals.length === 0 ? 0 : vals.reduce((a, b) => a + b, 0) / vals.length / 1000;
    const p99 = vals.length === 0 ? 0 : (vals[Math.min(vals.length - 1, Math.ceil(0.99 * vals.length) - 1)] as number) / 1000;
    const slo: Record<string, number> = {};
    for (const cls of [...c.slo.keys()].sort()) {
      const w = c.slo.get(cls) as TimeWindow;
      w.prune(clock - this.windowUs);
      if (w.count > 0) slo[cls] = w.values().reduce((a, b) => a + b, 0) / w.count;
    }
    return { mean, p99, slo };
  }

  /** Records this tick's load of `target` and returns its history (oldest first). */
  sample(target: string, s: LoadSample): readonly LoadSample[] {
    let h = this.history.get(target);
    if (h === undefined) {
      h = [];
      this.history.set(target, h);
    }
    h.push(s);
    if (h.length > HISTORY) h.shift();
    return h;
  }
}

export interface TargetView {
  readonly id: string;
  readonly model: string;
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

/** The context of one target at `clock`. */
export function buildContext(
  sig: ScalingSignals,
  t: TargetView,
  clock: number,
  replicas: readonly ReplicaSignal[],
  pending: { count: number; capacityTokens: number },
  lastScaleAt: number | undefined,
): AutoScaleContext {
  const n = replicas.length;
  let q = 0;
  let u = 0;
  for (const r of replicas) {
    q += r.queueDepth;
    u += r.kvUtilization;
  }
  const rate = sig.requestRate(t.model, clock);
  const lat = sig.latency(t.model, clock);
  const metrics: DeploymentMetrics = {
    avgQueueDepth: n === 0 ? 0 : q / n,
    avgUtilization: n === 0 ? 0 : u / n,
    requestRate: rate,
    sloAttainment: lat.slo,
    avgLatencyMs: lat.mean,
    p99LatencyMs: lat.p99,
  };
  const history = sig.sample(t.id, { timeUs: clock, requestRate: rate, avgQueueDepth: metrics.avgQueueDepth });
  return {
    configId: t.id,
    currentReplicas: n + pending.count,
    minReplicas: t.minReplicas,
    maxReplicas: t.maxReplicas,
    metrics,
    loadHistory: [...history],
    pendingRequests: q,
    clock,
    timeSinceLastScaleUs: lastScaleAt === undefined ? clock : clock - lastScaleAt,
    replicas,
    pendingReplicas: pending.count,
    pendingCapacityTokens: pending.capacityTokens,
  };
}
