/**
 * Golden: the reference's iter29 cluster datasets (blis-core.md §10) — 15 inference-perf multi-turn experiments
 * each for the roofline and the trained-physics backends, run through the cluster with one instance and a
 * SessionManager (closed-loop follow-ups at completion + think time). Integer totals and the TTFT sum must match
 * exactly, TTFT mean/p90/p99, E2E mean/p90/p99 and ITL mean to 1e-9 relative; every run must also satisfy the
 * session invariants (INV-10, INV-11) and finish every request.
 *
 * The full set takes over two minutes on one core (tiered-KV mirroring in the long Llama-2-7B runs dominates),
 * so by default a representative subset of 8 runs (about 15 s of CPU): MoE (Scout FP8, TP2) and dense models (70B TP4,
 * Mistral-Nemo TP1/TP2, Yi-34B), single- and multi-stage workloads, 23×1 and 9×5 prompt/user layouts, tiered
 * and GPU-only KV, mnbt 1024/2048/8192, both backends. `BLIS_FULL_GOLDEN=1` runs all 30.
 * The datasets are read from the shared reference folder; the suite skips when it is absent.
 */
import { describe, expect, it } from 'vitest';
import { checkSessionCausality, checkSessionCompleteness } from '../../src/workload/sessions/invariants.js';
import { HAS_ITER29, ITER29_DIR, loadIter29, runIter29, type Iter29Dataset } from './iter29-runner.js';

const FULL = process.env['BLIS_FULL_GOLDEN'] === '1';

/** Default subset per dataset (experiment ids). */
const SUBSET: Readonly<Record<string, readonly string[]>> = {
  'roofline_goldendataset.json': ['17', '21', '48', '60'],
  'trained_physics_iter29.json': ['20', '62', '63', '65'],
};

const scope = FULL ? 'all 30 experiments (BLIS_FULL_GOLDEN=1)' : 'representative subset; BLIS_FULL_GOLDEN=1 runs all 30';
const title = HAS_ITER29 ? `iter29 golden datasets, ${scope}` : `iter29 golden datasets (skipped: ${ITER29_DIR} not found)`;

function datasetSuite(file: string): void {
  const ds: Iter29Dataset | null = HAS_ITER29 ? loadIter29(file) : null;
  const experiments = ds === null ? [] : ds.experiments.filter((e) => FULL || SUBSET[file]!.includes(e.id));
  describe(file, () => {
    it.skipIf(ds === null)('holds 15 experiments', () => {
      expect(ds!.experiments).toHaveLength(15);
    });
    for (const exp of experiments) {
      it(`exp ${exp.id} (${exp.model}, tp ${exp.tp}, mnbt ${exp.max_num_batched_tokens}, kv ${exp.total_kv_blocks}+${exp.cpu_kv_blocks})`, () => {
        const r = runIter29(ds!, exp);
        expect(r.mismatches).toEqual([]);
        expect(r.anomalies).toEqual({ still_queued: 0, still_running: 0, dropped_unservable: 0, timed_out_requests: 0, preemption_count: 0, rejected_requests: 0 });
        const log = r.sessions.log();
        expect(checkSessionCausality(r.requests, log)).toEqual([]);
        expect(checkSessionCompleteness(r.requests, log)).toEqual([]);
        // Every session ran all its rounds.
        expect([...log.sessions.values()].every((s) => s.state === 'completed')).toBe(true);
        expect(r.requests).toHaveLength(exp.expected.completed_requests);
      });
    }
  });
}

describe(title, () => {
  datasetSuite('roofline_goldendataset.json');
  datasetSuite('trained_physics_iter29.json');
});
