import { describe, expect, it } from 'vitest';
import { Request } from '../domain/request.js';
import type { LatencyModel, StepBatch } from '../latency/types.js';
import { buildCluster, type EngineSetup } from '../sim/engine-setup.js';
import { engineSetup } from '../../test/semantics/helpers.js';
import type { Instance } from './instance.js';
import type { LockstepGroup, LockstepStepInfo } from './lockstep.js';

function tokensOf(b: StepBatch): number {
  let t = 0;
  for (let i = 0; i < b.count; i++) t += b.newTokens[i]!;
  return t;
}

/**
 * A stand-in latency model whose lockstep price is easy to compute by hand: 100 µs per step, 5 µs per padded
 * token (1 for the dense part, 2 × 2 for the MoE part over dp = 2 ranks' padded tokens), 10 µs per request and
 * 1 µs per own token (the attention-like part that stays the rank's own). stepTime (independent ranks) has
 * the same terms on the rank's own tokens.
 */
function stub(): LatencyModel {
  const price = (b: StepBatch, padTo: number): number => {
    if (b.count === 0 && padTo === 0) return 1;
    const own = tokensOf(b);
    return 100 + 5 * Math.max(own, padTo) + 10 * b.count + own;
  };
  return {
    name: 'stub',
    stepTime: (b) => price(b, 0),
    queueingTime: () => 0,
    outputTokenProcessingTime: () => 0,
    postDecodeFixedOverhead: () => 0,
    lockstep: { tokens: tokensOf, stepTime: price },
  };
}

function setup(over: Partial<EngineSetup> = {}): EngineSetup {
  return engineSetup({ numInstances: 2, lockstepRanks: 2, maxNumSeqs: 256, kv: { totalBlocks: 1000, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 }, latency: stub(), ...over });
}

function req(id: string, input: number, output: number, arrival: number, seed: number): Request {
  const ids = (n: number, off: number): Int32Array => Int32Array.from({ length: n }, (_, k) => (seed * 10_000 + off + k) % 128000);
  return new Request(id, ids(input, 0), ids(output, 5000), arrival, 0, 0);
}

function groupOf(inst: Instance): LockstepGroup {
  return inst.lockstep as LockstepGroup;
}

/** Runs and records every group step (copies: the arrays are reused). */
function run(s: EngineSetup, reqs: Request[]): { steps: LockstepStepInfo[]; insts: readonly Instance[] } {
  const cs = buildCluster(s);
  const steps: LockstepStepInfo[] = [];
  groupOf(cs.instances[0]!).onGroupStep = (i) => steps.push({ ...i, rankTimes: [...i.rankTimes], working: [...i.working] });
  cs.run(reqs);
  return { steps, insts: cs.instances };
}

describe('DP ranks in lockstep (a MoE model\'s --dp ranks under corrected-physics)', () => {
  it('a decoding rank\'s step ends at the prefill rank\'s end; the forward is padded to the largest rank\'s tokens', () => {
    // b (10 in, 50 out) reaches rank 0 at 0; a (2000 in, 2 out) reaches rank 1 at 1, mid-step.
    const b = req('b', 10, 50, 0, 1);
    const a = req('a', 2000, 2, 1, 2);
    const { steps, insts } = run(setup(), [b, a]);
    expect(b.assignedInstance).toBe('instance_0');
    expect(a.assignedInstance).toBe('instance_1');
    // Step at 0: b's 10-token prefill (100 + 5·10 + 10 + 10 = 170); rank 1 runs a dummy forward padded to 10
    // tokens (100 + 5·10 = 150).
    expect(steps[0]).toEqual({ clock: 0, padTo: 10, duration: 170, rankTimes: [170, 150], working: [true, false] });
    // a arrived at 1, mid-step: it waits for the group's next step, at 170. There rank 1 prefills 2000 tokens
    // (100 + 5·2000 + 10 + 2000 = 12110) and rank 0 decodes b's one token padded to 2000 (100 + 10000 + 10 + 1).
    expect(steps[1]).toEqual({ clock: 170, padTo: 2000, duration: 12110, rankTimes: [10111, 12110], working: [true, true] });
    expect(a.schedulingDelay).toBe(170 - 1);
    expect(a.ttft).toBe(170 + 12110 - 1);
    // b's first inter-token gap is the prefill rank's step: 12110, not its own 10111 (nor 116 alone).
    expect([insts[0]!.metrics.stepItl.at(0), insts[0]!.metrics.stepItl.at(1)]).toEqual([170, 12110]);
    // Both decode at 12280: padded to 1 token, 100 + 5 + 10 + 1 = 116 each; a finishes there.
    expect(steps[2]).toEqual({ clock: 12280, padTo: 1, duration: 116, rankTimes: [116, 116], working: [true, true] });
    expect(a.e2e).toBe(12280 + 116 - 1);
    // Then b alone, rank 1 in a dummy step each time (100 + 5 = 105 against b's 116).
    expect(steps[3]).toEqual({ clock: 12396, padTo: 1, duration: 116, rankTimes: [116, 105], working: [true, false] });
    // b: 170 (TTFT), 12110, then 48 steps of 116.
    expect(b.ttft).toBe(170);
    expect(b.e2e).toBe(170 + 12110 + 48 * 116);
    expect(steps.length).toBe(2 + 48);
  });

  it('independent ranks (no group) price the same requests on their own tokens: the decode is not held back', () => {
    const b = req('b', 10, 50, 0, 1);
    const a = req('a', 2000, 2, 1, 2);
    const s = setup();
    const { lockstepRanks: _, ...free } = s;
    const cs = buildCluster(free);
    cs.run([b, a]);
    expect(cs.instances[0]!.lockstep).toBeNull();
    // b alone on rank 0: prefill 10 tokens (100 + 50 + 10 + 10 = 170), then 49 decodes of 100 + 5 + 10 + 1 = 116.
    expect(b.e2e).toBe(170 + 49 * 116);
    // a alone on rank 1 from its arrival at 1: 100 + 10000 + 10 + 2000.
    expect(a.ttft).toBe(12110);
  });

  it('a lone request on one rank: the group wakes at its arrival, steps with a dummy rank, then goes idle', () => {
    const x = req('x', 100, 3, 1000, 3);
    const y = req('y', 50, 1, 1_000_000, 4);
    const { steps, insts } = run(setup(), [x, y]);
    // x: prefill 100 tokens (100 + 500 + 10 + 100 = 710; dummy 100 + 500 = 600), then two decodes (116; dummy 105).
    expect(steps.slice(0, 3)).toEqual([
      { clock: 1000, padTo: 100, duration: 710, rankTimes: [710, 600], working: [true, false] },
      { clock: 1710, padTo: 1, duration: 116, rankTimes: [116, 105], working: [true, false] },
      { clock: 1826, padTo: 1, duration: 116, rankTimes: [116, 105], working: [true, false] },
    ]);
    expect(x.e2e).toBe(710 + 116 + 116);
    // Nothing between x's end and y's arrival: the group was idle, and y (rank 1) woke it at its arrival.
    expect(steps[3]).toEqual({ clock: 1_000_000, padTo: 50, duration: 410, rankTimes: [350, 410], working: [false, true] });
    expect(steps.length).toBe(4);
    expect(y.ttft).toBe(410);
    for (const inst of insts) expect(inst.isStepPending).toBe(false);
  });

  it('E14: a request arriving during the group\'s final step waits for it to end (no overlapping group steps)', () => {
    // x's last step (a decode) runs [1826, 1942); y arrives on rank 1 at 1900, while it runs.
    const x = req('x', 100, 3, 1000, 3);
    const y = req('y', 50, 1, 1900, 4);
    const { steps } = run(setup(), [x, y]);
    expect(steps[2]).toMatchObject({ clock: 1826, duration: 116 });
    // y's prefill (50 tokens: 100 + 250 + 10 + 50 = 410) starts at 1942, not at 1900: TTFT 42 + 410.
    expect(steps[3]).toEqual({ clock: 1942, padTo: 50, duration: 410, rankTimes: [350, 410], working: [false, true] });
    expect(y.ttft).toBe(452);
  });

  it('is deterministic: the same run twice gives the same group steps', () => {
    const make = (): Request[] => Array.from({ length: 40 }, (_, i) => req(`r${i}`, 50 + ((i * 37) % 400), 5 + ((i * 13) % 30), i * 700, i + 10));
    const one = run(setup(), make()).steps;
    const two = run(setup(), make()).steps;
    expect(one.length).toBeGreaterThan(40);
    expect(two).toEqual(one);
  });

  it('refuses a second group over the same rank (an internal error, not a configuration one)', async () => {
    const cs = buildCluster(setup());
    const { LockstepGroup: G } = await import('./lockstep.js');
    expect(() => new G(cs.instances, stub().lockstep!)).toThrow(/already a rank/);
  });
});
