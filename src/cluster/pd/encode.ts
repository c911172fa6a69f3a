/**
 * The E/P/D encode stage (reference executeDisaggregatedRouting step 4, blis-cluster.md §8.2): after the decode
 * pod is chosen and the P/D decider has spoken, a request the encode decider picks is routed among the encode
 * pods with the main routing policy (one shared object, so a round-robin counter advances for it too; corrected
 * semantics hand in the pool's own instance) and the choice recorded. The stage takes no time and no encode work runs: encode pods stay idle. An encode pool with
 * no routable pod loses the request there (INV-1's encode_routing_rejections term).
 */
import type { EncodeRoutingRecord } from '../../domain/decision-records.js';
import type { Request } from '../../domain/request.js';
import { computeCounterfactual } from '../../routing/counterfactual.js';
import type { EncodeDecider } from '../../routing/encode-decider.js';
import type { RoutingPolicy } from '../../routing/types.js';
import type { PdHost } from './host.js';
import { PoolRole } from './pools.js';

/** One decision of a policy-bundle encode decider (the built-ins are not recorded: their rule is their name). */
export interface EncodeDecisionRecord {
  readonly requestId: string;
  readonly clock: number;
  readonly encode: boolean;
  readonly decodeInstance: string;
  readonly reason: string;
}

export class EncodeStage {
  readonly records: EncodeRoutingRecord[] = [];
  readonly decisions: EncodeDecisionRecord[] = [];
  /** Requests routed through the encode pool. */
  routed = 0;
  /** Corrected semantics: when each encode pod's last job ends (µs), by instance index. */
  private readonly busyUntil = new Map<number, number>();
  /** Encode jobs run (corrected semantics) and their summed duration (µs). */
  jobs = 0;
  busyUs = 0;

  constructor(
    private readonly host: PdHost,
    readonly decider: EncodeDecider,
    private readonly mainRouting: () => RoutingPolicy,
  ) {}

  /** The encode pod's index (-1 = the decider skipped the stage), or null when the request was lost there. */
  route(req: Request, decodeId: string, model: string | null): number | null {
    const h = this.host;
    if (this.decider.decide !== undefined) {
      const d = this.decider.decide(req, decodeId, { encodeState: () => h.poolState(PoolRole.Encode, model), clock: h.clock });
      if (h.traceDecisions) this.decisions.push({ requestId: req.id, clock: h.clock, encode: d.encode, decodeInstance: decodeId, reason: d.reason });
      if (!d.encode) return -1;
    } else if (!this.decider.shouldEncode(req, decodeId)) {
      return -1;
    }
    const state = h.poolState(PoolRole.Encode, model);
    if (state.snapshots.length === 0) {
      h.rejectAtEncode(req);
      return null;
    }
    const d = this.mainRouting().route(req, state);
    const index = h.instanceIndex(d.targetId);
    if (index < 0) throw new RangeError(`encode routing chose unknown instance ${d.targetId}`);
    this.routed++;
    if (h.traceDecisions) {
      const cf = computeCounterfactual(d.targetId, d.scores, state.snapshots, h.counterfactualK);
      this.records.push({
        parentRequestId: req.id, clock: h.clock, chosenInstance: d.targetId,
        scores: d.scores === null ? null : new Map(d.scores), candidates: cf.candidates, regret: cf.regret,
      });
    }
    return index;
  }

  /**
   * Corrected semantics: queues `req`'s encode job on pod `index` at `now`; returns when it ends (µs). The
   * pod counts it in flight until {@link finish}.
   */
  run(req: Request, index: number, now: number): number {
    const media = req.imageTokens + req.audioTokens + req.videoTokens;
    if (media <= 0) return now;
    const inst = this.host.instances[index];
    if (inst === undefined) return now;
    const d = inst.loneStepTimeUs(media);
    const end = Math.max(now, this.busyUntil.get(index) ?? 0) + d;
    this.busyUntil.set(index, end);
    this.jobs++;
    this.busyUs += d;
    this.host.inFlight[index] = (this.host.inFlight[index] ?? 0) + 1;
    return end;
  }

  /** The job on pod `index` ended: it no longer counts in flight there. */
  finish(index: number): void {
    this.host.inFlight[index] = Math.max(0, (this.host.inFlight[index] ?? 0) - 1);
  }
}
