/**
 * The checkers must be able to fail: each test breaks one fact of a clean finished run (or injects a fault into
 * the engine through a test-only patch) and expects the matching violation.
 */
import { describe, expect, it } from 'vitest';
import { Request } from '../../src/domain/request.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import type { Instance } from '../../src/instance/instance.js';
import type { BatchFormer } from '../../src/instance/batch-formation.js';
import type { RunningBatch } from '../../src/instance/running-batch.js';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import { buildCluster, type EngineSetup } from '../../src/sim/engine-setup.js';
import { assertInvariants, collectViolations, type InvariantContext } from './checkers.js';
import { runChecked } from './harness.js';
import { EventRecorder, LivelockError } from './recorder.js';

const SETUP: EngineSetup = {
  numInstances: 2,
  horizon: MAX_INT64,
  admissionLatency: 0,
  routingLatency: 0,
  maxNumSeqs: 4,
  maxNumBatchedTokens: 64,
  longPrefillTokenThreshold: 0,
  maxModelLen: 0,
  scheduler: 'fcfs',
  preemptionPolicy: 'fcfs',
  kv: { totalBlocks: 24, blockSize: 4, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
  latency: createBlackboxModel({ alpha: [50, 0, 5], beta: [200, 1, 3] }),
};

function requests(n = 12): Request[] {
  return Array.from({ length: n }, (_, i) => {
    const ids = (len: number, off: number): Int32Array => Int32Array.from({ length: len }, (_, k) => i * 1000 + off + k);
    return new Request(`request_${i}`, ids(5 + ((i * 7) % 20), 0), ids(3 + ((i * 5) % 15), 500), i * 300);
  });
}

/** A clean, fully recorded run to tamper with. */
function cleanRun(): InvariantContext & { log: EventRecorder } {
  const reqs = requests();
  const { cs, log } = runChecked(SETUP, reqs, { deep: true });
  return { cs, requests: reqs, setup: SETUP, log };
}

function completed(ctx: InvariantContext): Request {
  const r = ctx.requests.find((q) => q.outcome === 'completed' && q.outputLen > 1);
  if (!r) throw new Error('fixture has no completed request');
  return r;
}

const violations = (ctx: InvariantContext): string => collectViolations(ctx).join('\n');

describe('invariant checkers detect broken runs', () => {
  it('a clean run has no violations', () => {
    const ctx = cleanRun();
    expect(collectViolations(ctx)).toEqual([]);
    expect(() => assertInvariants(ctx)).not.toThrow();
  });

  it('INV-1: a counter that disagrees with the requests', () => {
    const ctx = cleanRun();
    ctx.cs.instances[0]!.metrics.completedRequests++;
    expect(violations(ctx)).toMatch(/INV-1 instance_0: completed counter/);
    expect(() => assertInvariants(ctx)).toThrow(/invariant violation/);
  });

  it('INV-1: a request that vanished (given to run, found nowhere)', () => {
    const ctx = cleanRun();
    const ghost = new Request('ghost', new Int32Array(4), new Int32Array(2), 10);
    expect(violations({ ...ctx, requests: [...ctx.requests, ghost] })).toMatch(/INV-1: ghost reached routing before the horizon/);
  });

  it('INV-2: a completed request without an E2E', () => {
    const ctx = cleanRun();
    completed(ctx).hasE2E = false;
    expect(violations(ctx)).toMatch(/INV-2 .*completed without an E2E/);
  });

  it('INV-3: an event time going backwards', () => {
    const ctx = cleanRun();
    ctx.log.times.push(0);
    expect(violations(ctx)).toMatch(/INV-3: event #\d+ at 0 after/);
  });

  it('INV-4: blocks held by nobody (leak)', () => {
    const ctx = cleanRun();
    const inst = ctx.cs.instances[1]!;
    const phantom = new Request('phantom', new Int32Array(8), new Int32Array(0), 0);
    expect(inst.kv.allocate(phantom, 0, 8, [])).toBe(true);
    expect(violations(ctx)).toMatch(/INV-4 instance_1: 2 blocks in use but running requests hold only 0/);
  });

  it('INV-5: E2E shorter than TTFT', () => {
    const ctx = cleanRun();
    const r = completed(ctx);
    r.e2e = r.ttft - 1;
    expect(violations(ctx)).toMatch(new RegExp(`INV-5 ${r.id}: TTFT \\d+ > E2E`));
  });

  it('INV-8: work left in a queue with no step pending', () => {
    const ctx = cleanRun();
    const stranded = new Request('stranded', new Int32Array(4), new Int32Array(2), 0);
    ctx.cs.instances[0]!.waitQ.enqueue(stranded);
    expect(violations(ctx)).toMatch(/INV-8 instance_0: 1 queued \/ 0 running but no step pending/);
  });

  it('INV-9: a request served although the output-blind guard says unservable', () => {
    const ctx = cleanRun();
    const r = completed(ctx);
    ctx.log.initialMaxOutputLen.set(r, -1);
    const v = violations(ctx);
    expect(v).toMatch(new RegExp(`INV-9 ${r.id}: completed but the output-blind guard says unservable`));
    expect(v).toMatch(new RegExp(`INV-9 ${r.id}: client budget -1 became`));
  });

  it('token accounting: output tokens and ITL counts', () => {
    const ctx = cleanRun();
    ctx.cs.instances[0]!.metrics.totalOutputTokens++;
    ctx.cs.instances[1]!.metrics.ttftSum += 3;
    const v = violations(ctx);
    expect(v).toMatch(/tokens instance_0: total_output_tokens=/);
    expect(v).toMatch(/tokens instance_1: ttftSum=/);
  });
});

describe('per-event recorder detects engine faults (test-only patches)', () => {
  function patchedRun(patch: (inst: Instance) => void): EventRecorder {
    const reqs = requests(16);
    const cs = buildCluster(SETUP);
    cs.instances.forEach(patch);
    const log = new EventRecorder(cs, reqs, SETUP.maxModelLen, { deep: true, maxEvents: 20_000 });
    try {
      cs.run(reqs);
    } catch (e) {
      // A fault may well wedge the engine; the violations recorded up to then are what is checked.
      if (!(e instanceof LivelockError)) throw e;
    }
    log.finish();
    return log;
  }

  it('INV-12: a continuing request skipped while a later one gets tokens (index drift)', () => {
    const log = patchedRun((inst) => {
      const { former, run } = inst as unknown as { former: BatchFormer; run: RunningBatch };
      const form = former.form.bind(former);
      former.form = (step) => {
        const out = form(step);
        // Simulate the drift bug: the first decoding request loses its token, later ones keep theirs.
        for (let j = 0; j < run.length - 1; j++) {
          if ((run.pi[j] as number) >= (run.il[j] as number) && (run.nn[j] as number) > 0) {
            run.nn[j] = 0;
            run.ct[j] = (run.ct[j] as number) - 1;
            break;
          }
        }
        return out;
      };
    });
    expect(log.violations.join('\n')).toMatch(/INV-12 .* was skipped in Phase 1/);
  });

  it('INV-4/INV-2: a release that frees nothing', () => {
    const log = patchedRun((inst) => {
      inst.kv.release = () => undefined;
    });
    expect(log.violations.join('\n')).toMatch(/INV-4 .*leak/);
  });
});
