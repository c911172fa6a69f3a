/**
 * What every invariant checker receives, and the per-request classification they share: where each request
 * of the run ended up (a terminal outcome, an instance wait queue or batch, or still inside the pipeline at
 * the horizon). Classification is derived from the live engine objects, never from the counters it checks.
 */
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import { PdPart, RequestState, type Request, type RequestOutcome } from '../../src/domain/request.js';
import type { Instance } from '../../src/instance/instance.js';
import { TieredKVCache } from '../../src/kv/tiered.js';
import { instanceOverrides, type EngineSetup, type InstanceOverrides } from '../../src/sim/engine-setup.js';
import type { LatencyModel } from '../../src/latency/types.js';
import type { PdParent } from '../../src/cluster/pd/parent.js';
import type { EventRecorder } from './recorder.js';

export interface InvariantContext {
  /** The finished simulation. */
  readonly cs: ClusterSimulator;
  /** Exactly the request list given to `cs.run`. */
  readonly requests: readonly Request[];
  readonly setup: EngineSetup;
  /** Present when an {@link EventRecorder} observed the run; enables the per-event checks. */
  readonly log?: EventRecorder;
  /** Replica bounds per scaling target, when the run had them (scale_bounds). */
  readonly scalingBounds?: import('./scaling.js').ScalingBounds;
}

export type Bucket =
  /** Terminal outcomes: completed, timed_out, dropped_unservable, rejected, encode_rejected and the gateway ones. */
  | Exclude<RequestOutcome, ''>
  | 'still_queued'
  | 'still_running'
  /** Routed to an instance, but its instance Arrival/Queued event lies past the horizon. */
  | 'instance_pipeline'
  /** Never routed: its ClusterArrival/Admission/Routing event lies past the horizon. */
  | 'cluster_pipeline'
  /** Admitted into the gateway queue (flow control) and not yet routed at the horizon. */
  | 'gateway_queued'
  /** Waiting out an admission DELAY at the horizon (INV-1's delayed term). */
  | 'admission_delayed'
  /**
   * P/D: a decode half whose KV transfer started and had not ended at the horizon. It holds its reservation on
   * the decode pod but sits in no queue yet; its parent counts as still_running (the reference's in-transfer term).
   */
  | 'kv_transfer';

export const BUCKETS: readonly Bucket[] = [
  'completed', 'timed_out', 'dropped_unservable', 'rejected', 'encode_rejected', 'gateway_rejected', 'gateway_shed', 'gateway_expired',
  'gateway_evicted', 'drain_killed', 'still_queued', 'still_running', 'instance_pipeline', 'cluster_pipeline', 'gateway_queued',
  'admission_delayed', 'kv_transfer',
];

export interface Classification {
  /**
   * Every request's bucket: the run's requests and, with P/D, the prefill and decode halves too; a split
   * request's own bucket is derived from its halves (see {@link parentBucket}).
   */
  readonly bucket: Map<Request, Bucket>;
  /** P/D: the requests that were split (their halves did the work); empty without pools. */
  readonly split: ReadonlySet<Request>;
  /** Instance index each request sits in (queue or batch), for located requests only. */
  readonly where: Map<Request, number>;
  readonly violations: string[];
}

export const STATE_NAMES: Record<number, string> = {
  [RequestState.Queued]: 'queued',
  [RequestState.Running]: 'running',
  [RequestState.Completed]: 'completed',
  [RequestState.TimedOut]: 'timed_out',
};

/** Tick at which the request's instance QueuedEvent fires (routing time + the model's queueing delay). */
export function queuedTime(setup: EngineSetup, r: Request, latency: LatencyModel = setup.latency): number {
  return r.arrivalTime + setup.admissionLatency + setup.routingLatency + latency.queueingTime(r);
}

/** The per-pool overrides startup instance `index` was built with (deployment or P/D), or null for the cluster-wide setup. */
export function overridesOf(setup: EngineSetup, index: number): InstanceOverrides | null {
  return index < setup.numInstances ? instanceOverrides(setup, index) : null;
}

/** Latency model, max-model-len and KV size of instance `index` as it was built. */
export function limitsOf(ctx: InvariantContext, index: number): { latency: LatencyModel; maxModelLen: number; totalBlocks: number } {
  const o = overridesOf(ctx.setup, index);
  const inst = ctx.cs.instances[index];
  return {
    latency: o?.latency ?? ctx.setup.latency,
    // As the instance enforces it (corrected semantics cap it at the KV cache).
    maxModelLen: inst?.maxModelLen ?? o?.maxModelLen ?? ctx.setup.maxModelLen,
    totalBlocks: inst?.kv.totalBlocks ?? ctx.setup.kv.totalBlocks,
  };
}

/** Index of the instance `r` was routed to (-1 if none). */
export function indexOf(cs: ClusterSimulator, r: Request): number {
  return cs.instances.findIndex((i) => i.id === r.assignedInstance);
}

/**
 * Where a split request stands, from its halves only: the decode half's bucket once enqueued; dropped when
 * its KV could not be placed; between the halves ("in transfer") it counts as running, as the reference does.
 */
export function parentBucket(p: PdParent, bucket: ReadonlyMap<Request, Bucket>): Bucket | undefined {
  if (p.req.outcome !== '') return p.req.outcome;
  if (p.dropped) return 'dropped_unservable';
  if (p.decode !== null && p.decodeEnqueueTime > 0) return bucket.get(p.decode);
  const pb = bucket.get(p.prefill);
  if (pb === 'completed') return 'still_running';
  if (pb === undefined && p.prefill.assignedInstance === '') return 'cluster_pipeline';
  return pb;
}

/**
 * KV blocks a request outside the batch may legitimately hold. Zero, except one reference quirk kept for
 * parity: with a CPU tier, an admission attempt that reloads part of the prefix commits the reloaded blocks to
 * the request before allocating the tail, and when the tail then fails the request stays at the head of the
 * wait queue holding those (full, hashed prefix) blocks (reference sim/kv/tiered.go AllocateKVBlocks,
 * "partial improvement" branch). Nothing else may hold blocks while waiting.
 */
export function waitingBlockAllowance(inst: Instance, r: Request): number {
  return inst.kv instanceof TieredKVCache && !inst.kv.corrected && r.state === RequestState.Queued ? Math.floor(r.inputLen / inst.kv.blockSize) : 0;
}

export function instanceOf(cs: ClusterSimulator, r: Request): Instance | undefined {
  return cs.instances.find((i) => i.id === r.assignedInstance);
}

/**
 * Puts every request in exactly one bucket, reporting any request that sits in zero places or in more than
 * one (twice in a queue, in a queue and a batch, in a queue with a terminal outcome, ...).
 */
export function classify(ctx: InvariantContext): Classification {
  const { cs, setup } = ctx;
  const pd = cs.pd;
  const split = new Set<Request>();
  const requests: Request[] = [...ctx.requests];
  if (pd !== null) {
    for (const p of pd.parents) {
      split.add(p.req);
      if (p.prefill.assignedInstance !== '') requests.push(p.prefill);
      if (p.decode !== null) requests.push(p.decode);
    }
  }
  const violations: string[] = [];
  const places = new Map<Request, string[]>();
  const where = new Map<Request, number>();
  const note = (r: Request, place: string, idx: number): void => {
    const p = places.get(r);
    if (p) p.push(place);
    else places.set(r, [place]);
    where.set(r, idx);
  };
  cs.instances.forEach((inst, i) => {
    for (const r of inst.waitQ.toArray()) note(r, `${inst.id}.waitQ`, i);
    for (const r of inst.runningBatch) note(r, `${inst.id}.batch`, i);
  });
  const bucket = new Map<Request, Bucket>();
  const ids = new Set<string>();
  for (const r of requests) {
    if (ids.has(r.id)) violations.push(`INV-1: duplicate request id ${r.id} in the input`);
    ids.add(r.id);
    if (split.has(r)) continue;
    const p = places.get(r) ?? [];
    const held: string[] = [...p];
    if (r.outcome !== '') held.push(`outcome=${r.outcome}`);
    if (held.length > 1) {
      violations.push(`INV-1: ${r.id} is counted in ${held.length} states at once: ${held.join(', ')}`);
      continue;
    }
    let b: Bucket;
    if (cs.delayedNow.has(r)) {
      if (held.length > 0) {
        violations.push(`INV-1: ${r.id} is waiting out an admission DELAY and is also counted as ${held.join(', ')}`);
        continue;
      }
      b = 'admission_delayed';
    } else if (r.outcome !== '') b = r.outcome;
    else if (p.length === 1) b = (p[0] as string).endsWith('.waitQ') ? 'still_queued' : 'still_running';
    else if (inTransfer(ctx, r)) b = 'kv_transfer';
    else if (r.assignedInstance !== '') {
      const idx = indexOf(cs, r);
      if (queuedTime(setup, r, idx < 0 ? setup.latency : limitsOf(ctx, idx).latency) <= setup.horizon) {
        violations.push(`INV-1: ${r.id} was routed to ${r.assignedInstance} and enqueued before the horizon, but is in no queue, no batch and has no outcome (lost request)`);
        continue;
      }
      b = 'instance_pipeline';
    } else if (r.arrivalTime + setup.admissionLatency + setup.routingLatency > setup.horizon || r.admissionDelays > 0 || cs.pd?.encoding(r) === true) {
      // (Corrected semantics: a request served whole whose encode job was still running is in the cluster too.)
      // A request admitted after DELAYs has its routing event later than arrival + latencies.
      b = 'cluster_pipeline';
    } else if (cs.flowController !== null && r.arrivalTime + setup.admissionLatency <= setup.horizon) {
      b = 'gateway_queued';
    } else {
      violations.push(`INV-1: ${r.id} reached routing before the horizon but was neither routed nor rejected (lost request)`);
      continue;
    }
    bucket.set(r, b);
  }
  for (const r of places.keys()) {
    if (!ids.has(r.id)) violations.push(`INV-1: ${r.id} sits in an instance but was never given to run()`);
  }
  if (pd !== null) {
    for (const p of pd.parents) {
      if (places.has(p.req)) violations.push(`INV-PD-6: split request ${p.id} sits in an instance itself`);
      const b = parentBucket(p, bucket);
      if (b === undefined) violations.push(`INV-1: split request ${p.id} has no derivable state (prefill ${bucket.get(p.prefill) ?? '?'})`);
      else bucket.set(p.req, b);
    }
  }
  return { bucket, where, violations, split };
}

/**
 * A decode half between KVTransferStarted and KVTransferCompleted at the horizon: it is its parent's current
 * half, the transfer started no later than the horizon, and its completion (which enqueues it) did not run.
 */
function inTransfer(ctx: InvariantContext, r: Request): boolean {
  if (r.pdPart !== PdPart.Decode || r.assignedInstance !== '') return false;
  const p = ctx.cs.pd?.parentOf(r);
  return p !== undefined && p !== null && p.decode === r && !p.dropped && p.transferStartTime > 0 &&
    p.transferStartTime <= ctx.setup.horizon && p.transferCompleteTime === 0 && p.decodeEnqueueTime === 0;
}

/** The requests the cluster counts: the run's own (split ones included), not their halves. */
export function topLevel(r: Request): boolean {
  return r.pdPart === 0;
}

/** Number of requests per bucket, optionally restricted by `filter`. */
export function countBuckets(c: Classification, filter: (r: Request) => boolean = () => true): Record<Bucket, number> {
  const out = Object.fromEntries(BUCKETS.map((b) => [b, 0])) as Record<Bucket, number>;
  for (const [r, b] of c.bucket) if (filter(r)) out[b]++;
  return out;
}
