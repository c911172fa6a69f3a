/**
 * End of a disaggregated run (reference cluster.go Run/projectPDMetrics, blis-cluster.md §8.6): the cluster's
 * counts are corrected (a split request completes twice, once per half) and every per-request value is
 * projected onto the parent, so the cluster's per-request view holds parents only (INV-PD-6):
 *
 *   completed parent  <=> completionTime > 0 (drops at transfer start count too, as in the reference)
 *   E2E   = decode scheduling delay + decode's own E2E (just its own E2E after a re-prefill), else
 *           completionTime − arrival
 *   TTFT  = decode scheduling delay + the decode half's first ITL, else the prefill half's TTFT
 *   scheduling delay = the prefill half's; ITL = the decode half's; handled by the decode pod.
 *
 * Incomplete parents get no per-request values (nor, under corrected semantics, parents dropped at the decode
 * pod: the reference gives them an E2E up to the drop). The parent's lifecycle state is left untouched: the
 * reference's trace export records split requests as incomplete; corrected semantics export
 * {@link parentTraceOutcome} instead.
 */
import { RequestState, type Request } from '../../domain/request.js';
import type { Instance } from '../../instance/instance.js';
import type { PdCoordinator } from './coordinator.js';
import type { PdParent } from './parent.js';

/** Count corrections of the cluster aggregate. */
export interface PdCorrections {
  /** Subtracted from completed (prefill halves). */
  readonly completedDelta: number;
  /** Added to dropped-unservable (decode-side KV drops). */
  readonly droppedDelta: number;
  /** Added to still-running (requests between prefill and decode at the horizon). */
  readonly stillRunningDelta: number;
}

export function pdCorrections(pd: PdCoordinator): PdCorrections {
  const inTransfer = pd.inTransfer;
  return { completedDelta: -pd.prefillCompleted, droppedDelta: pd.droppedAtDecodeKV, stillRunningDelta: inTransfer > 0 ? inTransfer : 0 };
}

/** The first ITL (µs) of `r`'s current attempt on `inst`, or undefined when it decoded no token yet. */
function firstItl(r: Request, inst: Instance): number | undefined {
  if (r.itlCount === 0) return undefined;
  // Earlier runs of ITL steps (rare) come before the current one (Request.itlFirst).
  // Only stalled ITLs (prefill-first) leave no run of step ITLs: no step's value to report, as on main.
  if (r.itlRuns !== null && r.itlRuns.length > 0) return inst.metrics.stepItl.at((r.itlRuns[0] as number) - 1);
  if (r.itlFirst > r.itlLast) return undefined;
  const first = r.itlFirst;
  return inst.metrics.stepItl.at(first - 1);
}

/** Writes the parent-level values onto each parent request (idempotent; call once the instances are finalised). */
export function projectParents(pd: PdCoordinator, instances: readonly Instance[]): void {
  for (const p of pd.parents) projectOne(p, instances, pd.corrected);
}

function projectOne(p: PdParent, instances: readonly Instance[], corrected: boolean): void {
  const req = p.req;
  const pfx = p.prefill;
  const dec = p.decode;
  // Corrected semantics: a request dropped at the decode pod was not served (no latencies of its own).
  const completed = p.completionTime > 0 && !(corrected && p.dropped);
  req.registered = completed;
  req.hasTTFT = false;
  req.hasE2E = false;
  req.hasSchedulingDelay = false;
  req.itlMean = 0;
  if (!completed) return;
  const decodeInst = instances[p.decodeIndex] as Instance;
  req.assignedInstance = decodeInst.id;
  const hasDelay = dec !== null && dec.hasSchedulingDelay;
  const delay = hasDelay ? dec.schedulingDelay : 0;
  let e2e: number;
  if (hasDelay && dec.hasE2E) {
    // Own E2E is measured from the decode half's scheduling unless it re-prefilled after a preemption.
    e2e = dec.firstTokenTime !== 0 ? dec.e2e : dec.e2e + delay;
  } else {
    e2e = p.completionTime - req.arrivalTime;
  }
  if (e2e >= 0) {
    req.hasE2E = true;
    req.e2e = e2e;
  }
  if (pfx.hasTTFT) {
    const first = hasDelay ? firstItl(dec, decodeInst) : undefined;
    const ttft = first === undefined ? pfx.ttft : delay + first;
    req.hasTTFT = true;
    req.ttft = ttft < 0 ? pfx.ttft : ttft;
  }
  if (pfx.hasSchedulingDelay) {
    req.hasSchedulingDelay = true;
    req.schedulingDelay = pfx.schedulingDelay;
  }
  if (dec !== null && dec.hasE2E) req.itlMean = dec.itlMean;
}

/** How a split request ended, as the trace export records it (corrected semantics, D4; after the projection). */
export interface ParentTraceOutcome {
  readonly state: RequestState;
  readonly ttftSet: boolean;
  /** Arrival to the first token (the projected TTFT). */
  readonly firstTokenTime: number;
  /** First to last token: the decode half's token times after the first one. */
  readonly itlSum: number;
}

/**
 * The parent's outcome for its trace row: completed or timed out as its halves ended (a drop stays incomplete),
 * its first chunk at the projected TTFT and its last at the decode half's last token (without the post-decode
 * overhead, as for any request).
 */
export function parentTraceOutcome(p: PdParent): ParentTraceOutcome {
  const state = p.dropped ? RequestState.Queued : p.finalState ?? RequestState.Queued;
  const req = p.req;
  const dec = p.decode;
  const decoded = dec !== null && dec.itlCount > 0;
  if (!req.hasTTFT || state === RequestState.Queued || (state === RequestState.TimedOut && !decoded)) return { state, ttftSet: false, firstTokenTime: 0, itlSum: 0 };
  const last = dec !== null && dec.hasSchedulingDelay ? dec.schedulingDelay + dec.itlSum : req.ttft;
  return { state, ttftSet: true, firstTokenTime: req.ttft, itlSum: Math.max(0, last - req.ttft) };
}
