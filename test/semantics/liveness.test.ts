/**
 * Nothing hangs, in reference mode too. A request whose KV must grow past the whole cache preempts itself and
 * restarts forever (the reference does the same): a bounded run keeps the reference's behaviour, an unbounded
 * one (no horizon, no deadline) is refused with one BlisError naming the fix, through the library, the CLI
 * and a P/D decode pool. Prefill-first steps (vLLM V0) admit a prompt only when all of it fits, so a prompt
 * split over steps can no longer starve the decodes that hold the cache. Every run here is bounded by an
 * event cap or a vitest timeout: a regression fails, it does not hang the suite.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import { BlisError } from '../../src/domain/errors.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { FUTILE_LIMIT } from '../../src/instance/never-fits.js';
import { buildCluster, type EngineSetup } from '../../src/sim/engine-setup.js';
import { simulate } from '../../src/sim/simulate.js';
import type { Request } from '../../src/domain/request.js';
import { collectViolations } from '../invariants/checkers.js';
import { runCli } from '../parity/harness.js';
import { engineSetup, MODES, req } from './helpers.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
/** 50 blocks of 16 tokens = 800 tokens of KV; 500-token prompts asking for 1,000 output tokens never fit. */
const NEVER_FITS = { mode: 'run', model: MODEL, totalKvBlocks: 50, maxModelLen: 0, numRequests: 2, promptTokens: 500, promptTokensStdev: 0, outputTokens: 1000, outputTokensStdev: 0, seed: 3 } as const;

class EventCap extends Error {}

/** Runs `requests` with at most `cap` events (a livelock throws EventCap instead of hanging). */
function capped(setup: EngineSetup, requests: Request[], cap = 300_000): ClusterSimulator {
  const cs = buildCluster(setup);
  let n = 0;
  cs.onEvent = () => {
    if (++n > cap) throw new EventCap(`more than ${cap} events`);
  };
  cs.run(requests);
  return cs;
}

async function rejection(p: Promise<unknown>): Promise<BlisError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return e as BlisError;
  }
  throw new Error('expected a rejection');
}

describe('a request that can never fit the cache', () => {
  it('library, reference mode, no horizon, no timeout: one BlisError naming the keys and the fix', async () => {
    const e = await rejection(simulate({ ...NEVER_FITS, timeout: -1 }));
    expect(e.code).toBe('never-fits');
    expect(e.field).toBe('maxModelLen');
    expect(e.message).toMatch(/^request request_0 \(500 prompt \+ 1000 output tokens\) needs more KV than the whole cache of instance_0 \(50 blocks of 16 tokens = 800 tokens\)/);
    expect(e.message).toMatch(/maxModelLen at most 800/);
    expect(e.message).toMatch(/totalKvBlocks/);
    expect(e.message).toMatch(/semantics corrected/);
    expect(e.message).not.toMatch(/--/);
  }, 30_000);

  it('library: bounded runs keep the reference behaviour (spin until the deadline or the horizon, every request counted)', async () => {
    // The default 300 s client timeout: both requests spin, then time out.
    const timed = await simulate({ ...NEVER_FITS });
    expect(timed.metrics.timed_out_requests).toBe(2);
    expect(timed.metrics.completed_requests).toBe(0);
    // A horizon: cut while spinning, still counted (running or queued).
    const cut = await simulate({ ...NEVER_FITS, timeout: -1, horizon: 10_000_000 });
    expect(cut.metrics.injected_requests).toBe(2);
    expect(cut.metrics.still_running + cut.metrics.still_queued).toBe(2);
    // Corrected semantics drop them at enqueue (reference-differences E3).
    const cor = await simulate({ ...NEVER_FITS, timeout: -1, semantics: 'corrected' });
    expect(cor.metrics.dropped_unservable).toBe(2);
  }, 60_000);

  it('CLI: exit 2, one error line naming the flags, empty stdout', async () => {
    const r = await runCli(['run', '--model', MODEL, '--hardware', 'H100', '--tp', '1', '--total-kv-blocks', '50', '--max-model-len', '0', '--timeout', '-1',
      '--num-requests', '2', '--prompt-tokens', '500', '--prompt-tokens-stdev', '0', '--output-tokens', '1000', '--output-tokens-stdev', '0']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    // (The harness collects the message the CLI prints after `error: `; warnings start with `warning:`.)
    const errors = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/--max-model-len at most 800.*--total-kv-blocks.*--horizon.*--timeout/);
  }, 30_000);

  it('engine: refused after the futile self-preemptions, not on the first one (the reference can escape once)', () => {
    // Prefix sharing: request_1's prompt is request_0's first block. request_0 preempts itself once at its last
    // decode step, is readmitted with its prompt cached, and completes (the E3 engine test's scenario).
    for (const m of MODES) {
      const ok = [req(0, 1600, 2, 0), req(1, 16, 2, 0)];
      capped({ ...engineSetup(), semantics: m }, ok);
      expect(ok.map((r) => r.outcome)).toEqual(m === 'reference' ? ['completed', 'completed'] : ['dropped_unservable', 'completed']);
    }
    // 300 + 600 tokens on 800 of KV, alone: the futile cycle repeats until the guard refuses the run.
    const steps: number[] = [];
    const cs = buildCluster({ ...engineSetup({ kv: { totalBlocks: 50, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 } }), semantics: 'reference' });
    cs.onEvent = () => {
      if (steps.length > 1_000_000) throw new EventCap('livelock');
    };
    cs.instances[0]!.onStep = (_i, info) => {
      if (info.preempted.length > 0) steps.push(info.clock);
    };
    expect(() => cs.run([req(0, 300, 600, 0)])).toThrow(/request_0 \(300 prompt \+ 600 output tokens\) needs more KV than the whole cache of instance_0/);
    // The last one throws before its step is observed.
    expect(steps).toHaveLength(FUTILE_LIMIT - 1);
  });

  it('P/D: a decode pool smaller than the prompt and output refuses the run naming --decode-max-model-len', async () => {
    const r = await runCli(['run', '--model', MODEL, '--hardware', 'H100', '--tp', '1', '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1',
      '--pd-decider', 'always', '--num-requests', '2', '--prompt-tokens', '300', '--prompt-tokens-stdev', '0', '--output-tokens', '40', '--output-tokens-stdev', '0', '--total-kv-blocks', '100']);
    expect(r.code, r.stderr).toBe(0);
    const sim = r.sims[0]!;
    const pd = sim.setup.pd!;
    // The decode pool keeps 25 blocks (400 tokens) and no max-model-len: 300 + 600 tokens never fit there.
    const setup: EngineSetup = { ...sim.setup, horizon: MAX_INT64, maxModelLen: 0, pd: { ...pd, decode: { latency: sim.setup.latency, kvTotalBlocks: 25, maxModelLen: 0, tp: 1, gpuType: 'H100' } } };
    const requests = [req(0, 300, 600, 0)];
    expect(() => capped(setup, requests)).toThrow(/request_0_decode .* needs more KV than the whole cache of decode pod instance_1 \(25 blocks of 16 tokens = 400 tokens\).*--decode-max-model-len at most 400/);
    // Corrected semantics cap the decode pod's max-model-len at its cache: the decode half stops there.
    const cor: EngineSetup = { ...setup, semantics: 'corrected' };
    const again = [req(0, 300, 600, 0)];
    const cs = capped(cor, again);
    const p = cs.pd?.parents[0];
    expect(p?.decode?.outcome).toBe('completed');
    expect(p?.decode?.lengthCapped).toBe(true);
    expect(collectViolations({ cs, requests: again, setup: cor })).toEqual([]);
  });
});

describe('prefill-first (vLLM V0) admits a prompt only when all of it fits', () => {
  // Found by a fuzz over small engines: request_0's 124-token prompt and request_1's 23 decode while request_2's
  // 167-token prompt is split over 7-token prefill-only steps; it runs out of KV midway, preempts itself, is
  // readmitted first, and the decodes holding the cache never get a step. Both modes livelocked.
  const setup = engineSetup({
    maxNumSeqs: 4, maxNumBatchedTokens: 7, schedulingMode: 'prefill-first', preemptionPolicy: 'priority',
    kv: { totalBlocks: 16, blockSize: 15, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
  });
  const requests = (): Request[] => [req(0, 124, 6, 100, { base: 1 }), req(1, 23, 79, 3147, { base: 5000 }), req(2, 167, 9, 3494, { base: 9000 })];
  for (const m of MODES) {
    it(`${m}: every request completes and every invariant holds`, () => {
      const reqs = requests();
      const cs = capped({ ...setup, semantics: m }, reqs);
      expect(reqs.map((r) => r.outcome)).toEqual(['completed', 'completed', 'completed']);
      expect(collectViolations({ cs, requests: reqs, setup: { ...setup, semantics: m } })).toEqual([]);
    });
  }
});
