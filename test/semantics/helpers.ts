/**
 * Small fixed scenarios for the `--semantics` tests: an engine setup with a blackbox latency model (each step
 * costs a known number of µs, so expected times can be written down) and requests with chosen token streams.
 */
import { Request } from '../../src/domain/request.js';
import type { Semantics } from '../../src/domain/semantics.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import { runEngine, type EngineSetup } from '../../src/sim/engine-setup.js';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';

export const MODES: readonly Semantics[] = ['reference', 'corrected'];

/** One instance, 100 blocks of 16 tokens, every step 1,000 µs (blackbox β0), no queueing overhead. */
export function engineSetup(overrides: Partial<EngineSetup> = {}): EngineSetup {
  return {
    numInstances: 1,
    horizon: MAX_INT64,
    admissionLatency: 0,
    routingLatency: 0,
    maxNumSeqs: 8,
    maxNumBatchedTokens: 2048,
    longPrefillTokenThreshold: 0,
    maxModelLen: 0,
    scheduler: 'fcfs',
    preemptionPolicy: 'fcfs',
    kv: { totalBlocks: 100, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
    latency: createBlackboxModel({ alpha: [0, 0, 0], beta: [1000, 0, 0] }),
    ...overrides,
  };
}

/** Tokens `base, base+1, ...` (distinct streams for distinct bases; equal bases share prefixes). */
export function seq(n: number, base = 1): Int32Array {
  return Int32Array.from({ length: n }, (_, i) => base + i);
}

export interface ReqOptions {
  readonly base?: number;
  readonly deadline?: number;
  readonly maxOut?: number;
  readonly slo?: string;
  readonly tenant?: string;
  readonly model?: string;
}

export function req(id: number, input: number, output: number, arrival: number, o: ReqOptions = {}): Request {
  const r = new Request(`request_${id}`, seq(input, o.base ?? 1), seq(output, 1_000_000), arrival, o.maxOut ?? 0, o.deadline ?? 0);
  if (o.slo !== undefined) r.sloClass = o.slo;
  if (o.tenant !== undefined) r.tenantId = o.tenant;
  if (o.model !== undefined) r.model = o.model;
  return r;
}

/** Runs fresh `requests()` in both modes on `setup`; returns the finished clusters and their requests. */
export function bothModes(setup: EngineSetup, requests: () => Request[]): Record<Semantics, { cs: ClusterSimulator; reqs: Request[] }> {
  const out = {} as Record<Semantics, { cs: ClusterSimulator; reqs: Request[] }>;
  for (const m of MODES) {
    const reqs = requests();
    out[m] = { cs: runEngine({ ...setup, semantics: m }, reqs), reqs };
  }
  return out;
}
