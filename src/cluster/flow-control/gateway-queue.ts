/**
 * The gateway queue: admitted requests wait here, grouped into priority bands (by SLO class priority) of
 * per-tenant FIFO flows, until the saturation gate lets them through to routing (reference
 * `sim/cluster/gateway_queue.go`, blis-cluster.md §2.4).
 *
 * Behaviours that look surprising but are the reference's and matter for parity (`corrected`, from
 * --semantics corrected, fixes both):
 * - A band is created by the first request that maps to it, *before* the capacity checks, so even a rejected
 *   request adds its band for good — and the band count sets every usage-limit ceiling. Corrected: only an
 *   enqueued request creates its band.
 * - `dequeueGated` (the only dequeue the cluster uses) always visits bands highest-priority first; dispatch
 *   order "fifo" therefore does not mean global arrival order under gating. The ungated {@link dequeue} with
 *   true FIFO exists for the order's own semantics and tests. Corrected: "fifo" takes the earliest arrival
 *   among the bands the saturation gate lets through.
 * - Per-band capacity never displaces anything; only the global depth limit can shed, and only with shedding
 *   enabled.
 */
import type { Request } from '../../domain/request.js';
import type { SloPriorityMap } from '../../domain/slo.js';
import { Band, globalStrictPolicy, type FairnessPolicy, type Flow, type FlowEntry } from './bands.js';

export const DISPATCH_ORDERS = ['fifo', 'priority', 'slo-deadline'] as const;
export type DispatchOrder = (typeof DISPATCH_ORDERS)[number];

export type EnqueueOutcome = 'enqueued' | 'shed-victim' | 'rejected';

export interface EnqueueResult {
  readonly outcome: EnqueueOutcome;
  /** The displaced queued request when `outcome` is 'shed-victim'; null otherwise. */
  readonly victim: Request | null;
}

/** Tenant flow of requests without a tenant. */
export const DEFAULT_TENANT = 'default';

const REJECTED: EnqueueResult = { outcome: 'rejected', victim: null };
const ENQUEUED: EnqueueResult = { outcome: 'enqueued', victim: null };

interface Location {
  readonly band: Band;
  readonly flow: Flow;
}

export class GatewayQueue {
  private readonly bands: Band[] = []; // descending priority
  private readonly where = new Map<string, Location>(); // request id → its flow, for TTL removal
  private readonly priorities: SloPriorityMap;
  private readonly order: DispatchOrder;
  private readonly maxDepth: number;
  private perBandCapacity = 0;
  private usageLimit = 1.0;
  private shedding = false;
  private fairness: FairnessPolicy = globalStrictPolicy();
  private sloTargets: ReadonlyMap<string, number> | null = null;
  private total = 0;
  private shed = 0;
  private rejected = 0;

  /** `maxDepth` 0 = unlimited. */
  constructor(order: DispatchOrder, maxDepth: number, priorities: SloPriorityMap, private readonly corrected = false) {
    if (!(DISPATCH_ORDERS as readonly string[]).includes(order)) {
      throw new RangeError(`gateway queue: unknown dispatch order ${JSON.stringify(order)} (must be fifo, priority, or slo-deadline)`);
    }
    if (!Number.isInteger(maxDepth) || maxDepth < 0) throw new RangeError(`gateway queue: max depth must be an integer >= 0, got ${maxDepth}`);
    this.order = order;
    this.maxDepth = maxDepth;
    this.priorities = priorities;
  }

  /** Per-class TTFT targets (µs) used by slo-deadline when a request carries no target of its own. */
  setSloTargets(targets: ReadonlyMap<string, number> | null): void {
    this.sloTargets = targets;
  }

  setFairnessPolicy(p: FairnessPolicy): void {
    this.fairness = p;
  }

  /** 0 = unlimited. */
  setPerBandCapacity(n: number): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`gateway queue: per-band capacity must be an integer >= 0, got ${n}`);
    this.perBandCapacity = n;
  }

  setSheddingEnabled(on: boolean): void {
    this.shedding = on;
  }

  /** Ceiling of the lowest band; the highest stays 1.0 and bands between are interpolated by position. */
  setUsageLimitThreshold(t: number): void {
    if (!(t > 0 && t <= 1.0)) throw new RangeError(`gateway queue: usage limit threshold must be in (0, 1.0], got ${t}`);
    this.usageLimit = t;
  }

  get length(): number {
    return this.total;
  }

  get shedCount(): number {
    return this.shed;
  }

  get rejectedCount(): number {
    return this.rejected;
  }

  lengthOfBand(priority: number): number {
    return this.bands.find((b) => b.priority === priority)?.total ?? 0;
  }

  /** Band priorities in queue order (highest first), including empty bands. */
  bandPriorities(): number[] {
    return this.bands.map((b) => b.priority);
  }

  /** Whether a band of non-negative priority (a non-sheddable class) holds a request: the eviction trigger. */
  hasNonSheddableWaiting(): boolean {
    return this.bands.some((b) => b.priority >= 0 && b.total > 0);
  }

  /** The band of `priority`, created when absent. */
  private bandFor(priority: number): Band {
    return this.findBand(priority, true) as Band;
  }

  /** The band of `priority`; created when absent if `create`, else null then. */
  private findBand(priority: number, create: boolean): Band | null {
    let lo = 0;
    let hi = this.bands.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.bands[mid] as Band).priority > priority) lo = mid + 1;
      else hi = mid;
    }
    const found = this.bands[lo];
    if (found !== undefined && found.priority === priority) return found;
    if (!create) return null;
    const band = new Band(priority);
    this.bands.splice(lo, 0, band);
    return band;
  }

  /**
   * Per-band capacity first (full → rejected), then the global depth: full → rejected, or with shedding the
   * most evictable sheddable entry is displaced when the newcomer outranks it.
   */
  enqueue(req: Request, seq: number): EnqueueResult {
    const priority = this.priorities.priority(req.sloClass);
    const existing = this.findBand(priority, !this.corrected);
    if (this.perBandCapacity > 0 && existing !== null && existing.total >= this.perBandCapacity) {
      this.rejected++;
      return REJECTED;
    }
    let victim: Request | null = null;
    if (this.maxDepth > 0 && this.total >= this.maxDepth) {
      const found = this.shedding ? this.findShedVictim(priority, seq) : null;
      if (found === null) {
        this.rejected++;
        return REJECTED;
      }
      // The victim has the largest seq among its flow's entries, so it is the flow's tail.
      if (found.index !== found.loc.flow.length - 1) throw new Error(`gateway queue: shed victim is not its flow's tail`);
      victim = this.takeAt(found.loc, found.index).request;
      this.shed++;
    }
    const band = existing ?? this.bandFor(priority);
    const flow = band.flowFor(req.tenantId === '' ? DEFAULT_TENANT : req.tenantId);
    flow.push({ request: req, seq });
    band.total++;
    this.total++;
    this.where.set(req.id, { band, flow });
    return victim === null ? ENQUEUED : { outcome: 'shed-victim', victim };
  }

  /**
   * The globally most evictable sheddable entry — lowest priority, then newest (largest seq) — provided the
   * newcomer has strictly higher priority, or equal priority and an earlier seq.
   */
  private findShedVictim(incomingPriority: number, incomingSeq: number): { loc: Location; index: number } | null {
    let best: { loc: Location; index: number; entry: FlowEntry; priority: number } | null = null;
    for (const band of this.bands) {
      for (const tid of band.order) {
        const flow = band.flows.get(tid) as Flow;
        for (let i = 0; i < flow.length; i++) {
          const entry = flow.at(i);
          const p = this.priorities.priority(entry.request.sloClass);
          if (p >= 0) continue;
          if (best === null || p < best.priority || (p === best.priority && entry.seq > best.entry.seq)) {
            best = { loc: { band, flow }, index: i, entry, priority: p };
          }
        }
      }
    }
    if (best === null) return null;
    if (incomingPriority > best.priority || (incomingPriority === best.priority && incomingSeq < best.entry.seq)) return best;
    return null;
  }

  private takeAt(loc: Location, index: number): FlowEntry {
    const e = loc.band.take(loc.flow, index);
    this.total--;
    this.where.delete(e.request.id);
    return e;
  }

  /**
   * Gated dispatch: bands in descending priority with position i of B (empty bands count), ceiling
   * 1 − i·(1 − usageLimit)/(B − 1) (1.0 for a single band). Saturation at or above a band's ceiling halts the
   * whole scan — checked before the band's emptiness, so an empty high band still blocks when saturated.
   */
  dequeueGated(saturation: number): Request | null {
    if (this.total === 0) return null;
    const n = this.bands.length;
    const fifo = this.corrected && this.order === 'fifo';
    let open = 0;
    for (let i = 0; i < n; i++) {
      const band = this.bands[i] as Band;
      const ceiling = n > 1 ? 1.0 - (i * (1.0 - this.usageLimit)) / (n - 1) : 1.0;
      if (saturation >= ceiling) break;
      open = i + 1;
      if (band.total === 0 || fifo) continue;
      return this.takeFromBand(band);
    }
    return fifo ? this.dequeueFifoAmong(open) : null;
  }

  /** The earliest admitted request among the first `open` bands (the ones the gate lets through). */
  private dequeueFifoAmong(open: number): Request | null {
    let best: Location | null = null;
    let bestSeq = 0;
    for (let i = 0; i < open; i++) {
      const band = this.bands[i] as Band;
      if (band.total === 0) continue;
      for (const tid of band.order) {
        const flow = band.flows.get(tid) as Flow;
        if (flow.length > 0 && (best === null || flow.at(0).seq < bestSeq)) {
          best = { band, flow };
          bestSeq = flow.at(0).seq;
        }
      }
    }
    return best === null ? null : this.takeAt(best, 0).request;
  }

  /** Ungated dequeue (not used by the cluster): true FIFO for "fifo", else highest non-empty band first. */
  dequeue(): Request | null {
    if (this.total === 0) return null;
    if (this.order === 'fifo') return this.dequeueGlobalFifo();
    const band = this.bands.find((b) => b.total > 0);
    return band === undefined ? null : this.takeFromBand(band);
  }

  private dequeueGlobalFifo(): Request | null {
    let best: Location | null = null;
    let bestSeq = 0;
    for (const band of this.bands) {
      for (const tid of band.order) {
        const flow = band.flows.get(tid) as Flow;
        if (flow.length > 0 && (best === null || flow.at(0).seq < bestSeq)) {
          best = { band, flow };
          bestSeq = flow.at(0).seq;
        }
      }
    }
    return best === null ? null : this.takeAt(best, 0).request;
  }

  /** The fairness policy picks the flow; slo-deadline then takes that flow's earliest deadline, else its head. */
  private takeFromBand(band: Band): Request {
    const flow = this.fairness.pick(band);
    if (flow === null) throw new Error(`gateway queue: band ${band.priority} holds ${band.total} requests but no flow was picked`);
    const index = this.order === 'slo-deadline' ? this.earliestDeadline(flow) : 0;
    return this.takeAt({ band, flow }, index).request;
  }

  private earliestDeadline(flow: Flow): number {
    let bestIdx = 0;
    let best = this.deadline(flow.at(0).request);
    let bestSeq = flow.at(0).seq;
    for (let i = 1; i < flow.length; i++) {
      const e = flow.at(i);
      const d = this.deadline(e.request);
      if (d < best || (d === best && e.seq < bestSeq)) {
        bestIdx = i;
        best = d;
        bestSeq = e.seq;
      }
    }
    return bestIdx;
  }

  /** Enqueue time + (the request's own target, else its class target); +∞ without either. */
  private deadline(req: Request): number {
    if (req.sloTargetUs > 0) return req.gatewayEnqueueTime + req.sloTargetUs;
    const t = this.sloTargets?.get(req.sloClass);
    return t === undefined ? Infinity : req.gatewayEnqueueTime + t;
  }

  /** Removes a still-queued request (TTL expiry); null when it already left (dispatched or shed). */
  remove(requestId: string): Request | null {
    const loc = this.where.get(requestId);
    if (loc === undefined) return null;
    for (let i = 0; i < loc.flow.length; i++) {
      if (loc.flow.at(i).request.id === requestId) return this.takeAt(loc, i).request;
    }
    throw new Error(`gateway queue: index lists ${requestId} but its flow does not hold it`);
  }
}
