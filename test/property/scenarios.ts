/**
 * Random engine scenarios for the property tests: a plain-data spec (so fast-check can print a failing one)
 * and builders turning it into an EngineSetup and fresh Request objects.
 *
 * The spec keeps every request servable in isolation (input + output within the KV capacity when there is no
 * max-model-len, max-model-len within the capacity otherwise): a request that cannot fit even alone
 * self-preempts forever, a known reference behaviour (its rules.md R19) that the CLI avoids by capping
 * max-model-len to the KV capacity; it is not an invariant violation.
 */
import fc from 'fast-check';
import { findGpu } from '../../src/config/catalog/hardware.js';
import { findCatalogModel } from '../../src/config/catalog/models.js';
import { TRAINED_PHYSICS_COEFFICIENTS } from '../../src/config/defaults.js';
import { Request } from '../../src/domain/request.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import type { PreemptionPolicy, SchedulerName } from '../../src/instance/scheduler.js';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import { parseHFConfig } from '../../src/latency/hf-config.js';
import { createRooflineModel } from '../../src/latency/roofline.js';
import { createTrainedPhysicsModel } from '../../src/latency/trained-physics.js';
import type { LatencyModel } from '../../src/latency/types.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';

export interface ReqSpec {
  /** Ticks after the previous request's arrival. */
  readonly gap: number;
  readonly input: number;
  readonly output: number;
  /** Token alphabet size: tiny alphabets make requests share prefixes (cache hits, full-prefix hits). */
  readonly vocab: number;
  /** Requests of one family and alphabet draw the same token stream, so the shorter is a prefix of the longer. */
  readonly family: number;
  readonly slo: string;
  /** 0 = no deadline; else ticks after arrival (tiny values time out in the queue or mid-run). */
  readonly deadline: number;
  /** Client budget: 0 (auto-filled), the true output length, half of it, or -1 (unservable). */
  readonly maxOut: 'zero' | 'exact' | 'half' | 'negative';
}

export type LatencySpec =
  | { readonly kind: 'blackbox'; readonly alpha: readonly number[]; readonly beta: readonly number[] }
  | { readonly kind: 'roofline'; readonly alpha: readonly number[] }
  | { readonly kind: 'trained-physics' };

export interface EngineSpec {
  readonly numInstances: number;
  readonly blockSize: number;
  readonly totalBlocks: number;
  readonly cpuBlocks: number;
  readonly transferBandwidth: number;
  readonly transferBaseLatency: number;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly longPrefillTokenThreshold: number;
  readonly maxModelLen: number;
  readonly scheduler: SchedulerName;
  readonly preemptionPolicy: PreemptionPolicy;
  /** 0 = unbounded (MaxInt64). */
  readonly horizon: number;
  readonly admissionLatency: number;
  readonly routingLatency: number;
  readonly latency: LatencySpec;
  readonly requests: readonly ReqSpec[];
}

const SLO_CLASSES = ['', 'critical', 'standard', 'batch', 'sheddable', 'background', 'custom'] as const;

const reqArb = fc.record({
  // Mostly bursts (so requests overlap and compete for KV), sometimes idle gaps.
  gap: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 500 }) },
    { weight: 1, arbitrary: fc.integer({ min: 500, max: 50_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 50_000, max: 300_000 }) },
  ),
  input: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 64, max: 600 })),
  output: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 120 })),
  vocab: fc.constantFrom(1, 3, 128_000),
  family: fc.integer({ min: 0, max: 2 }),
  slo: fc.constantFrom(...SLO_CLASSES),
  deadline: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 20_000, max: 3_000_000 })),
  maxOut: fc.oneof(
    { weight: 8, arbitrary: fc.constant('zero' as const) },
    { weight: 6, arbitrary: fc.constant('exact' as const) },
    { weight: 3, arbitrary: fc.constant('half' as const) },
    { weight: 1, arbitrary: fc.constant('negative' as const) },
  ),
});

const latencyArb: fc.Arbitrary<LatencySpec> = fc.oneof(
  fc.record({
    kind: fc.constant('blackbox' as const),
    alpha: fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 8 }).map((x) => x / 4), fc.integer({ min: 0, max: 200 })),
    beta: fc.tuple(fc.integer({ min: 0, max: 8000 }), fc.integer({ min: 0, max: 80 }).map((x) => x / 4), fc.integer({ min: 0, max: 100 })),
  }),
  fc.record({ kind: fc.constant('roofline' as const), alpha: fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.constant(0), fc.integer({ min: 0, max: 100 })) }),
  fc.record({ kind: fc.constant('trained-physics' as const) }),
);

/** Random scenarios; `maxInstances` 1 gives single-instance runs. */
export function engineSpecArb(opts: { readonly maxInstances: number; readonly maxRequests: number }): fc.Arbitrary<EngineSpec> {
  return fc
    .record({
      numInstances: fc.integer({ min: 1, max: opts.maxInstances }),
      blockSize: fc.constantFrom(4, 16),
      // Mostly KV pressure (a handful of blocks), sometimes roomy.
      totalBlocks: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 2, max: 48 }) }, fc.constant(4000)),
      cpuBlocks: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 64 })),
      transferBandwidth: fc.constantFrom(0.2, 1, 100),
      transferBaseLatency: fc.constantFrom(0, 7),
      maxNumSeqs: fc.integer({ min: 1, max: 12 }),
      maxNumBatchedTokens: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constant(2048)),
      longPrefillTokenThreshold: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 100 })),
      /** Fraction of the KV capacity in percent; 0 = no max-model-len. */
      maxModelLenPct: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 100 })),
      scheduler: fc.constantFrom<SchedulerName>('fcfs', 'priority-fcfs', 'sjf', 'reverse-priority'),
      preemptionPolicy: fc.constantFrom<PreemptionPolicy>('fcfs', 'priority'),
      horizon: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 3_000_000 })),
      admissionLatency: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 5_000 })),
      routingLatency: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 5_000 })),
      latency: latencyArb,
      requests: fc.array(reqArb, { minLength: 1, maxLength: opts.maxRequests }),
    })
    .map(({ maxModelLenPct, ...s }) => {
      const capacity = s.totalBlocks * s.blockSize;
      const maxModelLen = maxModelLenPct === 0 ? 0 : Math.max(2, Math.floor((capacity * maxModelLenPct) / 100));
      const requests = s.requests.map((r) => {
        // Prompts longer than the whole cache would all be dropped by the KV guard; fold them into range.
        const input = 1 + ((r.input - 1) % capacity);
        const output = maxModelLen > 0 ? r.output : Math.max(0, Math.min(r.output, capacity - input));
        return { ...r, input, output };
      });
      return { ...s, maxModelLen, requests };
    });
}

const LLAMA = parseHFConfig(findCatalogModel('meta-llama/llama-3.1-8b-instruct')!.config, 'catalog');
const H100 = findGpu('H100')!;

function latencyModel(l: LatencySpec): LatencyModel {
  switch (l.kind) {
    case 'blackbox':
      return createBlackboxModel({ alpha: l.alpha, beta: l.beta });
    case 'roofline':
      return createRooflineModel({ model: LLAMA, hardware: H100, tp: 1, alpha: l.alpha });
    case 'trained-physics':
      return createTrainedPhysicsModel({ model: LLAMA, hardware: H100, tp: 1, ...TRAINED_PHYSICS_COEFFICIENTS });
  }
}

export function toSetup(s: EngineSpec): EngineSetup {
  return {
    numInstances: s.numInstances,
    horizon: s.horizon === 0 ? MAX_INT64 : s.horizon,
    admissionLatency: s.admissionLatency,
    routingLatency: s.routingLatency,
    maxNumSeqs: s.maxNumSeqs,
    maxNumBatchedTokens: s.maxNumBatchedTokens,
    longPrefillTokenThreshold: s.longPrefillTokenThreshold,
    maxModelLen: s.maxModelLen,
    scheduler: s.scheduler,
    preemptionPolicy: s.preemptionPolicy,
    kv: {
      totalBlocks: s.totalBlocks,
      blockSize: s.blockSize,
      cpuBlocks: s.cpuBlocks,
      transferBandwidth: s.transferBandwidth,
      transferBaseLatency: s.transferBaseLatency,
    },
    latency: latencyModel(s.latency),
  };
}

/** Deterministic token stream of a (family, alphabet) pair: an integer hash of (family, position). */
function tokens(family: number, vocab: number, n: number, salt: number): Int32Array {
  const out = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    let h = Math.imul(family + 1, 0x9e3779b1) ^ Math.imul(k + salt, 0x85ebca6b);
    h ^= h >>> 15;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 13;
    out[k] = (h >>> 0) % vocab;
  }
  return out;
}

/** Fresh Request objects for `s` (arrival-ordered, ids `request_<i>`). */
export function buildRequests(s: EngineSpec): Request[] {
  let t = 0;
  return s.requests.map((q, i) => {
    t += q.gap;
    const out = tokens(q.family, q.vocab, q.output, 1 << 20);
    const maxOut = q.maxOut === 'zero' ? 0 : q.maxOut === 'exact' ? q.output : q.maxOut === 'half' ? Math.floor(q.output / 2) : -1;
    const r = new Request(`request_${i}`, tokens(q.family, q.vocab, q.input, 0), out, t, maxOut, q.deadline === 0 ? 0 : t + q.deadline);
    r.sloClass = q.slo;
    return r;
  });
}
