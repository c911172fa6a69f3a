/**
 * Dedicated invariant scenarios (the ones a random search hits too rarely to rely on) and self-tests showing
 * that every checker can fail. INV-6 determinism of the CLI is in test/property/determinism.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Request, RequestState } from '../../src/domain/request.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { EventKind } from '../../src/instance/events.js';
import { BatchFormer } from '../../src/instance/batch-formation.js';
import { RunningBatch } from '../../src/instance/running-batch.js';
import { WaitQueue } from '../../src/instance/wait-queue.js';
import { BlockKVCache } from '../../src/kv/block-cache.js';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import { buildCluster, type EngineSetup } from '../../src/sim/engine-setup.js';
import { checkDeterminism, runChecked } from './harness.js';

function setup(over: Partial<EngineSetup> = {}): EngineSetup {
  return {
    numInstances: 1,
    horizon: MAX_INT64,
    admissionLatency: 0,
    routingLatency: 0,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 2048,
    longPrefillTokenThreshold: 0,
    maxModelLen: 0,
    scheduler: 'fcfs',
    preemptionPolicy: 'fcfs',
    kv: { totalBlocks: 1000, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
    latency: createBlackboxModel({ alpha: [100, 0.5, 10], beta: [1000, 2, 5] }),
    ...over,
  };
}

/** Distinct token ids per request (`seed` apart), so no two requests share a cached prefix. */
function req(id: string, input: number, output: number, arrival: number, opts: { maxOut?: number; slo?: string; deadline?: number; seed?: number } = {}): Request {
  const base = (opts.seed ?? id.length * 7919) * 1000;
  const ids = (n: number, off: number): Int32Array => Int32Array.from({ length: n }, (_, k) => (base + off + k) % 128000);
  const r = new Request(id, ids(input, 0), ids(output, 500), arrival, opts.maxOut ?? 0, opts.deadline ?? 0);
  r.sloClass = opts.slo ?? '';
  return r;
}

describe('ClusterSimulator.onEvent contract', () => {
  it('announces every executed event before it runs, and nothing else', () => {
    const s = setup({ latency: createBlackboxModel({ alpha: [0, 0, 0], beta: [10, 0, 0] }) });
    const r = req('a', 8, 3, 5, { deadline: 1_000_000 });
    const cs = buildCluster(s);
    const seen: string[] = [];
    cs.onEvent = (t, kind, idx) => {
      const inst = cs.instances[0]!;
      if (kind === EventKind.Queued) expect(inst.waitQ.length).toBe(0);
      seen.push(`${t}:${kind}:${idx}`);
    };
    cs.run([r]);
    // The lazily cancelled timeout (request completed first) is not announced.
    expect(seen.filter((e) => e.endsWith(`:${EventKind.Timeout}:0`))).toEqual([]);
    expect(seen[0]).toBe(`5:${EventKind.ClusterArrival}:-1`);
    expect(seen).toContain(`5:${EventKind.Queued}:0`);
    expect(seen.at(-1)).toMatch(new RegExp(`:${EventKind.RequestLeft}:0$`));
  });
});

describe('INV-8 work-conserving', () => {
  it('restarts the step loop while the wait queue is non-empty (max-num-seqs 1, simultaneous arrivals)', () => {
    const { cs, log } = runChecked(setup({ maxNumSeqs: 1 }), [req('a', 20, 5, 0), req('b', 20, 5, 0)], { deep: true });
    expect(cs.instances[0]!.metrics.completedRequests).toBe(2);
    expect(log.violations).toEqual([]);
  });
});

describe('INV-9 oracle boundary', () => {
  it('does not drop at enqueue a request whose oracle output exceeds max-model-len when MaxOutputLen is 0', () => {
    const r = req('r', 200, 1000, 0);
    const { cs } = runChecked(setup({ maxModelLen: 512 }), [r], { deep: true });
    expect(r.outcome).toBe('completed');
    expect(r.maxOutputLen).toBe(312);
    expect(r.lengthCapped).toBe(true);
    expect(cs.instances[0]!.metrics.droppedUnservable).toBe(0);
  });

  it('enqueue decisions do not change when only the oracle outputs change', () => {
    const make = (outLen: (i: number) => number): Request[] =>
      Array.from({ length: 24 }, (_, i) => req(`request_${i}`, 50 + ((i * 37) % 500), outLen(i), i * 1000, { maxOut: i % 3 === 0 ? 0 : 100 + ((i * 53) % 400), seed: i + 1 }));
    const s = setup({ maxModelLen: 512, kv: { ...setup().kv, totalBlocks: 40 } });
    const a = make((i) => (i * 29) % 300);
    const b = make((i) => 1 + ((i * 71) % 900));
    runChecked(s, a);
    runChecked(s, b);
    const dropped = (rs: Request[]): string[] => rs.filter((r) => r.outcome === 'dropped_unservable').map((r) => r.id);
    expect(dropped(a).length).toBeGreaterThan(0);
    expect(dropped(b)).toEqual(dropped(a));
  });
});

describe('INV-12 Phase-1 completeness under priority preemption', () => {
  /**
   * Three running requests own one full block each and one block is free, so the second request's allocation
   * evicts `bg` (least urgent, index 0) from below the loop index; `std`, shifted down to index 1, must still
   * be visited (reference TestPreemption_Priority_Phase1Completeness), in decode and in chunked prefill.
   */
  for (const phase of ['decode', 'chunked prefill'] as const) {
    it(`visits the request shifted down by a victim evicted below the loop index ([bg, crit, std], ${phase})`, () => {
      const input = phase === 'decode' ? 4 : 12;
      const kv = new BlockKVCache(4, 4);
      const waitQ = new WaitQueue();
      const limits = { maxNumSeqs: 8, maxNumBatchedTokens: 100, longPrefillTokenThreshold: 4, maxModelLen: 0, preemptionPolicy: 'priority' as const };
      const run = new RunningBatch(kv);
      const former = new BatchFormer(limits, kv, waitQ, run);
      const mk = (id: string, priority: number, arrival: number, seed: number): Request => {
        const r = req(id, input, 10, arrival, { seed });
        expect(kv.allocate(r, 0, 4, [])).toBe(true);
        r.progressIndex = 4;
        r.computedTokens = 4;
        r.state = RequestState.Running;
        r.priority = priority;
        return r;
      };
      const bg = mk('bg', 7, 0, 1);
      const crit = mk('crit', 0, 1, 2);
      const std = mk('std', 1, 2, 3);
      for (const r of [bg, crit, std]) run.push(r);
      const out = former.form(2);
      run.syncAll();
      const want = phase === 'decode' ? 1 : 4;
      expect(out.preemptions).toBe(1);
      expect(run.reqs).toEqual([crit, std]);
      expect(crit.numNewTokens).toBe(want);
      expect(std.numNewTokens).toBe(want);
      expect(bg.state).toBe(RequestState.Queued);
      expect(waitQ.peekAt(0)).toBe(bg);
    });
  }

  it('every request completes under priority preemption and KV pressure, never both waiting and running', () => {
    const classes = ['background', 'critical', 'standard', 'batch', 'sheddable', 'critical', ''];
    const reqs = Array.from({ length: 28 }, (_, i) => req(`request_${i}`, 6 + ((i * 13) % 40), 8 + ((i * 17) % 60), Math.floor(i / 4) * 50, { slo: classes[i % classes.length]!, seed: i + 1 }));
    const s = setup({ preemptionPolicy: 'priority', scheduler: 'priority-fcfs', maxNumSeqs: 8, kv: { ...setup().kv, blockSize: 4, totalBlocks: 40 } });
    const { cs, log } = runChecked(s, reqs, { deep: true, maxEvents: 200_000 });
    const m = cs.instances[0]!.metrics;
    expect(m.preemptionCount).toBeGreaterThan(0);
    expect(m.completedRequests).toBe(reqs.length);
    expect(log.violations).toEqual([]);
  });
});

describe('INV-6 determinism helper', () => {
  it('reports no difference for repeated runs of a multi-instance setup', () => {
    const make = (): Request[] => Array.from({ length: 30 }, (_, i) => req(`request_${i}`, 10 + i * 7, 5 + i, i * 2000, { seed: i + 1 }));
    expect(checkDeterminism(setup({ numInstances: 3, kv: { ...setup().kv, totalBlocks: 40, blockSize: 8 } }), make, 3)).toEqual([]);
  });
});
