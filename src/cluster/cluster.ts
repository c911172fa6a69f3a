/**
 * The cluster orchestrator (reference blis-cluster.md §1): N instances on one shared clock, driven by ONE
 * event queue for both layers. The reference keeps a cluster heap plus one heap per instance and always takes
 * the cluster event on a time tie, then the lowest-index instance; encoding (layer, instance index, event
 * priority) in the queue's order key reproduces exactly that pop sequence with a single heap.
 *
 * Pipeline: ClusterArrival(t) -> AdmissionDecision(t + admissionLatency) -> RoutingDecision(+ routingLatency)
 * -> instance ArrivalEvent at the routing time (metrics still measure from the original arrival).
 */
import { RequestState, type Request } from '../domain/request.js';
import { EventQueue } from '../engine/event-queue.js';
import { EventKind, eventOrder, orderInstance } from '../instance/events.js';
import type { EventSink, Instance } from '../instance/instance.js';
import { routingSnapshot, type AdmissionPolicy, type RouterState, type RoutingPolicy, type RoutingSnapshot } from '../routing/types.js';

export interface ClusterConfig {
  readonly horizon: number;
  readonly admissionLatency: number;
  readonly routingLatency: number;
}

export interface ClusterPolicies {
  readonly admission: AdmissionPolicy;
  readonly routing: RoutingPolicy;
}

export type InstanceFactory = (index: number, sink: EventSink) => Instance;

export class ClusterSimulator {
  readonly instances: Instance[] = [];
  private readonly queue = new EventQueue<Request>(4096);
  clock = 0;
  /** Fresh arrivals in the order their ClusterArrival events executed (the trace export order). */
  readonly arrivals: Request[] = [];
  readonly inFlight: number[] = [];
  rejectedRequests = 0;
  routingRejections = 0;
  readonly shedByTier = new Map<string, number>();
  readonly injectedByClass = new Map<string, number>();
  /**
   * Test/diagnostic observer, called after every executed event with its time, kind and instance index
   * (-1 for cluster events). Lazily cancelled timeouts and the first event past the horizon are not
   * executed and not reported. Null by default so the loop pays one comparison per event.
   */
  onEvent: ((time: number, kind: EventKind, instanceIndex: number) => void) | null = null;
  private hasRun = false;
  private readonly indexById = new Map<string, number>();

  constructor(
    private readonly cfg: ClusterConfig,
    numInstances: number,
    makeInstance: InstanceFactory,
    private readonly policies: ClusterPolicies,
  ) {
    if (numInstances < 1) throw new RangeError('numInstances must be >= 1');
    for (let i = 0; i < numInstances; i++) {
      const sink: EventSink = { schedule: (time, kind, req) => this.queue.push(time, eventOrder(i, kind), kind, req) };
      const inst = makeInstance(i, sink);
      inst.onRequestDone = () => {
        this.inFlight[i] = Math.max(0, (this.inFlight[i] as number) - 1);
      };
      this.instances.push(inst);
      this.inFlight.push(0);
      this.indexById.set(inst.id, i);
    }
  }

  /** Runs the simulation over `requests` (non-decreasing arrival times). Single use. */
  run(requests: readonly Request[]): void {
    if (this.hasRun) throw new Error('ClusterSimulator.run() called twice');
    this.hasRun = true;
    const q = this.queue;
    const clusterOrder = eventOrder(-1, EventKind.ClusterArrival);
    for (const r of requests) q.push(r.arrivalTime, clusterOrder, EventKind.ClusterArrival, r);
    const horizon = this.cfg.horizon;
    while (q.length > 0) {
      const t = q.peekTime();
      const order = q.peekOrder();
      const kind = q.peekKind() as EventKind;
      const req = q.peekPayload();
      q.pop();
      if (t > horizon) break;
      const idx = orderInstance(order);
      if (idx < 0) {
        this.clock = t;
        this.executeCluster(kind, req as Request, t);
        if (this.onEvent !== null) this.onEvent(t, kind, idx);
        continue;
      }
      // A timeout for a request that already completed is cancelled lazily without moving any clock.
      if (kind === EventKind.Timeout && (req as Request).state === RequestState.Completed) continue;
      this.clock = t;
      const inst = this.instances[idx] as Instance;
      inst.clock = t;
      inst.handle(kind, req, t);
      if (this.onEvent !== null) this.onEvent(t, kind, idx);
    }
    for (const inst of this.instances) inst.finalize();
  }

  private executeCluster(kind: EventKind, req: Request, t: number): void {
    switch (kind) {
      case EventKind.ClusterArrival: {
        this.injectedByClass.set(req.sloClass, (this.injectedByClass.get(req.sloClass) ?? 0) + 1);
        this.arrivals.push(req);
        this.queue.push(t + this.cfg.admissionLatency, eventOrder(-1, EventKind.AdmissionDecision), EventKind.AdmissionDecision, req);
        return;
      }
      case EventKind.AdmissionDecision: {
        const d = this.policies.admission.admit(req, this.routerState());
        if (!d.admitted) {
          this.rejectedRequests++;
          req.outcome = 'rejected';
          const tier = req.sloClass === '' ? 'standard' : req.sloClass;
          this.shedByTier.set(tier, (this.shedByTier.get(tier) ?? 0) + 1);
          return;
        }
        this.queue.push(t + this.cfg.routingLatency, eventOrder(-1, EventKind.RoutingDecision), EventKind.RoutingDecision, req);
        return;
      }
      case EventKind.RoutingDecision: {
        const state = this.routerState();
        const d = this.policies.routing.route(req, state);
        const snap = state.snapshots[d.target];
        const index = snap === undefined ? undefined : this.indexById.get(snap.id);
        if (index === undefined) throw new Error(`routing policy ${this.policies.routing.name} chose invalid target ${d.target}`);
        const inst = this.instances[index] as Instance;
        req.assignedInstance = inst.id;
        this.inFlight[index] = (this.inFlight[index] as number) + 1;
        inst.injectArrivalAt(req, t);
        return;
      }
      default:
        throw new Error(`cluster: unexpected event kind ${kind}`);
    }
  }

  private routerState(): RouterState {
    const snapshots: RoutingSnapshot[] = this.instances.map((inst, i) => {
      const used = inst.kv.usedBlocks();
      const total = inst.kv.totalBlocks;
      return routingSnapshot(inst.id, {
        queueDepth: inst.queueDepth,
        batchSize: inst.batchSize,
        kvUtilization: used / Math.max(total, 1),
        freeKVBlocks: total - used,
        cacheHitRate: inst.kv.cacheHitRate(),
        inFlightRequests: this.inFlight[i] as number,
        preemptionCount: inst.metrics.preemptionCount,
        totalKvCapacityTokens: total * inst.kv.blockSize,
        kvTokensInUse: used * inst.kv.blockSize,
      });
    });
    return { snapshots, clock: this.clock };
  }
}
