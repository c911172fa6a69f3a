/**
 * Runs one experiment of the reference's iter29 golden datasets (roofline_goldendataset.json,
 * trained_physics_iter29.json; blis-core.md §10) the way the reference's cluster golden tests do:
 *
 * - workload: the experiment's inference_perf spec (seed 42, its num_requests cap), expanded and generated as
 *   GenerateWorkload does — round 0 of every closed-loop session plus blueprints — with a SessionManager
 *   producing the later rounds at completion + think time through the full cluster pipeline;
 * - one instance, horizon unbounded, always-admit / round-robin, zero admission and routing latency;
 * - KV: the experiment's GPU blocks, block 16, its CPU blocks (tiered when > 0), transfer bandwidth 0.2 tokens
 *   per tick (80 µs per reloaded block), base latency 0; max-num-seqs and max-num-batched-tokens from the
 *   experiment, no chunking threshold, max-model-len 0 (unlimited), DP 1;
 * - latency: the catalog model named by `model_config_dir` (no name-based weight-precision fallback) on the
 *   catalog H100; roofline with α = 0, or trained-physics with the file's α and 10 β.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findGpu } from '../../src/config/catalog/hardware.js';
import { MODEL_CATALOG } from '../../src/config/catalog/models.js';
import type { Request } from '../../src/domain/request.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { parseHFConfig } from '../../src/latency/hf-config.js';
import { createRooflineModel } from '../../src/latency/roofline.js';
import { createTrainedPhysicsModel } from '../../src/latency/trained-physics.js';
import type { LatencyModel } from '../../src/latency/types.js';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import { runEngine, type EngineSetup } from '../../src/sim/engine-setup.js';
import { buildReport } from '../../src/sim/report.js';
import { SessionManager } from '../../src/workload/sessions/manager.js';
import { generateWorkload } from '../../src/workload/sessions/workload.js';
import { parseWorkloadSpec } from '../../src/workload/spec/parse.js';
import { SHARED_DIR } from '../parity/workload-fixtures.js';

export const ITER29_DIR = path.join(SHARED_DIR, 'groundtruth', 'blis-reference-configs');
export const HAS_ITER29 = existsSync(path.join(ITER29_DIR, 'roofline_goldendataset.json'));

export interface Iter29Expected {
  readonly completed_requests: number;
  readonly total_input_tokens: number;
  readonly total_output_tokens: number;
  readonly ttft_sum_us: number;
  readonly ttft_mean_ms: number;
  readonly ttft_p90_ms: number;
  readonly ttft_p99_ms: number;
  readonly e2e_mean_ms: number;
  readonly e2e_p90_ms: number;
  readonly e2e_p99_ms: number;
  readonly itl_mean_ms: number;
}

export interface Iter29Experiment {
  readonly id: string;
  readonly model: string;
  readonly model_config_dir: string;
  readonly hardware: string;
  readonly tp: number;
  readonly max_num_seqs: number;
  readonly max_num_batched_tokens: number;
  readonly total_kv_blocks: number;
  readonly cpu_kv_blocks: number;
  readonly workload: unknown;
  readonly expected: Iter29Expected;
}

export interface Iter29Dataset {
  readonly file: string;
  readonly backend: 'roofline' | 'trained-physics';
  readonly alpha_coeffs?: number[];
  readonly beta_coeffs?: number[];
  readonly experiments: Iter29Experiment[];
}

export function loadIter29(file: string): Iter29Dataset {
  const raw = JSON.parse(readFileSync(path.join(ITER29_DIR, file), 'utf8')) as Omit<Iter29Dataset, 'file'>;
  return { ...raw, file };
}

/** Integer fields compared exactly; the rest to 1e-9 relative. */
export const EXACT_FIELDS = ['completed_requests', 'total_input_tokens', 'total_output_tokens', 'ttft_sum_us'] as const;
export const FLOAT_FIELDS = ['ttft_mean_ms', 'ttft_p90_ms', 'ttft_p99_ms', 'e2e_mean_ms', 'e2e_p90_ms', 'e2e_p99_ms', 'itl_mean_ms'] as const;

function latencyFor(ds: Iter29Dataset, exp: Iter29Experiment): LatencyModel {
  const key = path.basename(exp.model_config_dir);
  const entry = (MODEL_CATALOG as Record<string, { config: unknown } | undefined>)[key];
  if (entry === undefined) throw new Error(`model ${key} is not in the embedded catalog`);
  const model = parseHFConfig(entry.config, `catalog:${key}`);
  const hardware = findGpu(exp.hardware);
  if (hardware === undefined) throw new Error(`GPU ${exp.hardware} is not in the catalog`);
  if (ds.backend === 'roofline') return createRooflineModel({ model, hardware, tp: exp.tp, alpha: [0, 0, 0] });
  return createTrainedPhysicsModel({ model, hardware, tp: exp.tp, dp: 1, alpha: ds.alpha_coeffs ?? [], beta: ds.beta_coeffs ?? [] });
}

export interface Iter29Result {
  readonly got: Iter29Expected;
  /** Human-readable mismatches, first differing field first; empty = pass. */
  readonly mismatches: string[];
  readonly cluster: ClusterSimulator;
  /** Every request of the run: initial plus follow-ups. */
  readonly requests: readonly Request[];
  readonly sessions: SessionManager;
  readonly anomalies: Record<string, number>;
}

function relErr(got: number, want: number): number {
  return want === 0 ? Math.abs(got) : Math.abs(got - want) / Math.abs(want);
}

export function runIter29(ds: Iter29Dataset, exp: Iter29Experiment): Iter29Result {
  const spec = parseWorkloadSpec(JSON.stringify(exp.workload), `${ds.file}#${exp.id}`);
  const wl = generateWorkload(spec, { numRequests: spec.numRequests, horizon: MAX_INT64 });
  const sessions = new SessionManager(wl.sessions);
  if (wl.followUpBudget >= 0) sessions.setFollowUpBudget(wl.followUpBudget);
  const setup: EngineSetup = {
    seed: spec.seed,
    numInstances: 1,
    horizon: MAX_INT64,
    admissionLatency: 0,
    routingLatency: 0,
    maxNumSeqs: exp.max_num_seqs,
    maxNumBatchedTokens: exp.max_num_batched_tokens,
    longPrefillTokenThreshold: 0,
    maxModelLen: 0,
    scheduler: 'fcfs',
    preemptionPolicy: 'fcfs',
    kv: { totalBlocks: exp.total_kv_blocks, blockSize: 16, cpuBlocks: exp.cpu_kv_blocks, transferBandwidth: 0.2, transferBaseLatency: 0 },
    latency: latencyFor(ds, exp),
  };
  const cs = runEngine(setup, wl.requests, wl.sessions.length > 0 ? sessions.hook : null);
  const out = buildReport(cs).clusterOutput as Record<string, unknown>;
  const num = (k: string): number => {
    const v = out[k];
    return typeof v === 'number' ? v : NaN;
  };
  const got: Iter29Expected = {
    completed_requests: num('completed_requests'),
    total_input_tokens: num('total_input_tokens'),
    total_output_tokens: num('total_output_tokens'),
    ttft_sum_us: cs.instances.reduce((a, i) => a + i.metrics.ttftSum, 0),
    ttft_mean_ms: num('ttft_mean_ms'),
    ttft_p90_ms: num('ttft_p90_ms'),
    ttft_p99_ms: num('ttft_p99_ms'),
    e2e_mean_ms: num('e2e_mean_ms'),
    e2e_p90_ms: num('e2e_p90_ms'),
    e2e_p99_ms: num('e2e_p99_ms'),
    itl_mean_ms: num('itl_mean_ms'),
  };
  const mismatches: string[] = [];
  for (const k of EXACT_FIELDS) if (got[k] !== exp.expected[k]) mismatches.push(`${k}: got ${got[k]}, want ${exp.expected[k]}`);
  for (const k of FLOAT_FIELDS) {
    const e = relErr(got[k], exp.expected[k]);
    if (!(e <= 1e-9)) mismatches.push(`${k}: got ${got[k]}, want ${exp.expected[k]} (rel ${e.toExponential(2)})`);
  }
  const anomalies: Record<string, number> = {};
  for (const k of ['still_queued', 'still_running', 'dropped_unservable', 'timed_out_requests', 'preemption_count']) anomalies[k] = num(k);
  anomalies['rejected_requests'] = cs.rejectedRequests;
  return { got, mismatches, cluster: cs, requests: [...wl.requests, ...sessions.log().followUps], sessions, anomalies };
}
