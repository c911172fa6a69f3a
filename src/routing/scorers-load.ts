/**
 * The stateless scorers (reference blis-cluster.md §3.2): each maps the snapshots to one value per instance,
 * aligned by position. Integer arithmetic happens before the single division, as in the reference, so the
 * values are bit-identical.
 *
 * The min-max scorers share one convention: lower load scores higher, the extremes map to 1 and 0, and when
 * every instance reads the same (a single instance included) every score is 1.0 — "no information" must not
 * penalise anyone. active-requests is the deliberate exception (see {@link activeRequestsScorer}).
 */
import type { Request } from '../domain/request.js';
import type { RoutingSnapshot, Scorer } from './types.js';
import { effectiveLoad } from './types.js';

/** Queue depth at and above which load-aware scores 0 (llm-d's default threshold). */
export const LOAD_AWARE_QUEUE_THRESHOLD = 128;

function stateless(name: string, score: (req: Request, snapshots: readonly RoutingSnapshot[]) => Float64Array): Scorer {
  return { name, score, observe: null };
}

/**
 * Inverted min-max over an integer signal: (max − v) / (max − min), all 1.0 when max == min. The running max
 * starts at 0 like the reference's (signals are never negative, so this only matters for an empty list).
 */
function invertedMinMax(snapshots: readonly RoutingSnapshot[], signal: (s: RoutingSnapshot) => number): Float64Array {
  const n = snapshots.length;
  const raw = new Float64Array(n);
  let min = Number.MAX_SAFE_INTEGER;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const v = signal(snapshots[i] as RoutingSnapshot);
    raw[i] = v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = max === min ? 1.0 : (max - (raw[i] as number)) / (max - min);
  return out;
}

function perInstance(snapshots: readonly RoutingSnapshot[], f: (s: RoutingSnapshot) => number): Float64Array {
  const out = new Float64Array(snapshots.length);
  for (let i = 0; i < snapshots.length; i++) out[i] = f(snapshots[i] as RoutingSnapshot);
  return out;
}

/** Fewer waiting requests is better (GIE queue scorer; reads QueueDepth only). */
export function queueDepthScorer(): Scorer {
  return stateless('queue-depth', (_req, snaps) => invertedMinMax(snaps, (s) => s.queueDepth));
}

/** Smaller running batch is better (GIE running-requests scorer). */
export function runningRequestsScorer(): Scorer {
  return stateless('running-requests', (_req, snaps) => invertedMinMax(snaps, (s) => s.batchSize));
}

/**
 * 1 − KV utilisation. The reference does not clamp here (a utilisation above 1 is clamped by the weighted
 * policy); `clamp` keeps the score in [0, 1] for every caller.
 */
export function kvUtilizationScorer(clamp = false): Scorer {
  if (clamp) return stateless('kv-utilization', (_req, snaps) => perInstance(snaps, (s) => Math.min(1, Math.max(0, 1.0 - s.kvUtilization))));
  return stateless('kv-utilization', (_req, snaps) => perInstance(snaps, (s) => 1.0 - s.kvUtilization));
}

/** 1 / (1 + effective load): keeps absolute load differences that min-max would flatten. */
export function loadBalanceScorer(): Scorer {
  return stateless('load-balance', (_req, snaps) => perInstance(snaps, (s) => 1.0 / (1.0 + effectiveLoad(s))));
}

/**
 * Max-only normalisation of in-flight requests: idle instances score 1.0, others (max − v) / max. So when
 * every instance carries the same non-zero count, all score 0.0 rather than 1.0 — llm-d's active-request
 * scorer behaves this way and the reference keeps it.
 */
export function activeRequestsScorer(): Scorer {
  return stateless('active-requests', (_req, snaps) => {
    let max = 0;
    for (const s of snaps) if (s.inFlightRequests > max) max = s.inFlightRequests;
    return perInstance(snaps, (s) => (s.inFlightRequests === 0 || max === 0 ? 1.0 : (max - s.inFlightRequests) / max));
  });
}

/** llm-d's load-aware scorer: 0.5 for an empty queue, falling linearly to 0 at the threshold; range [0, 0.5]. */
export function loadAwareScorer(): Scorer {
  return stateless('load-aware', (_req, snaps) =>
    perInstance(snaps, (s) => {
      if (s.queueDepth === 0) return 0.5;
      const clamped = Math.min(s.queueDepth, LOAD_AWARE_QUEUE_THRESHOLD);
      return 0.5 * (1.0 - clamped / LOAD_AWARE_QUEUE_THRESHOLD);
    }),
  );
}

/** vLLM's data-parallel balancer: raw = 4 × waiting + running, inverted min-max. */
export function vllmDpScorer(): Scorer {
  return stateless('vllm-dp', (_req, snaps) => invertedMinMax(snaps, (s) => s.queueDepth * 4 + s.batchSize));
}

/** The request's LoRA adapter id ('' for base-model requests). */
export function requestAdapter(req: Request): string {
  return req.adapter;
}

/**
 * Prefer instances that already hold the request's adapter: raw 1 (resident) or 0, min-max normalised.
 * Uniform raw values (base-model request, all warm, all cold, one instance) give 1.0 everywhere so routing
 * is unchanged when LoRA is not in play.
 */
export function loraAffinityScorer(): Scorer {
  return stateless('lora-affinity', (req, snaps) => {
    const adapter = requestAdapter(req);
    if (adapter === '') return perInstance(snaps, () => 1.0);
    const raw = perInstance(snaps, (s) => (s.residentAdapters?.has(adapter) === true ? 1.0 : 0.0));
    let min = 1.0;
    let max = 0.0;
    for (const r of raw) {
      if (r < min) min = r;
      if (r > max) max = r;
    }
    if (max === min) return perInstance(snaps, () => 1.0);
    return raw.map((r) => (r - min) / (max - min));
  });
}
