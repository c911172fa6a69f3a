/**
 * `--semantics`: routing and policy-bundle corrections (docs/reference-differences.md R1-R3, R6, P1-P4). Each test
 * runs the same input in both modes.
 */
import { describe, expect, it } from 'vitest';
import { parsePolicyBundle } from '../../src/policy/bundle.js';
import { PolicyConfigError } from '../../src/policy/errors.js';
import { resolvePolicySettings, type PolicyFlags } from '../../src/policy/resolve.js';
import { computeCounterfactual } from '../../src/routing/counterfactual.js';
import { leastLoaded, roundRobin } from '../../src/routing/policies.js';
import { makeScorer } from '../../src/routing/scorer-registry.js';
import { routingSnapshot } from '../../src/routing/types.js';
import { weighted } from '../../src/routing/weighted.js';
import { Request } from '../../src/domain/request.js';
import { DEFAULT_POLICY_SETUP } from '../../src/sim/engine-setup.js';
import { bothModes, engineSetup, req } from './helpers.js';

const REQ = new Request('request_0', new Int32Array(4), new Int32Array(1), 0);
const snaps = (...kv: number[]) => kv.map((k, i) => routingSnapshot(`instance_${i}`, { kvUtilization: k }));

function policyError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof PolicyConfigError) return e.message;
    throw e;
  }
  return 'no error';
}

const bundle = (yaml: string, corrected: boolean) => parsePolicyBundle(yaml, 'policy.yaml', { corrected });
const explicit = <T>(value: T) => ({ value, explicit: true });

describe('routing under --semantics', () => {
  it('R1: round-robin reasons print the call counter (reference) or the chosen instance (corrected)', () => {
    for (const corrected of [false, true]) {
      const p = roundRobin(corrected);
      const three = snaps(0, 0, 0);
      const reasons = [0, 1, 2, 3, 4].map(() => p.route(REQ, { snapshots: three, clock: 0 }).reason);
      expect(reasons).toEqual(corrected
        ? ['round-robin[0]', 'round-robin[1]', 'round-robin[2]', 'round-robin[0]', 'round-robin[1]']
        : ['round-robin[0]', 'round-robin[1]', 'round-robin[2]', 'round-robin[3]', 'round-robin[4]']);
    }
  });

  it('R2: NaN scores everywhere find no instance (reference: an error) or count as the lowest score (corrected)', () => {
    const route = (corrected: boolean) =>
      weighted({ scorers: [{ name: 'kv-utilization', weight: 1 }], blockSize: 16, rng: null, cachedBlocks: null, corrected }).route(REQ, { snapshots: snaps(NaN, NaN), clock: 0 });
    expect(() => route(false)).toThrow(/no candidates/);
    expect(route(true)).toMatchObject({ targetId: 'instance_0', reason: 'weighted-scoring (score=0.000)' });
  });

  it('R3: kv-utilization scores outside [0, 1] for an over-full cache (reference) or clamps itself (corrected)', () => {
    const score = (corrected: boolean) => makeScorer('kv-utilization', { blockSize: 16, cachedBlocks: null, corrected }).score(REQ, snaps(1.25, 0.25));
    expect([...score(false)]).toEqual([-0.25, 0.75]);
    expect([...score(true)]).toEqual([0, 0.75]);
  });

  it('R6: least-loaded regret is always 0 (reference) or the extra estimated wait over the least-queued instance (corrected)', () => {
    // instance_0 has fewer requests but a long prompt queued (40 ms expected wait); instance_1 has 5 ms.
    const s = [routingSnapshot('instance_0', { queueDepth: 1, estimatedWaitMs: 40 }), routingSnapshot('instance_1', { queueDepth: 2, estimatedWaitMs: 5 })];
    const regret = (corrected: boolean) => {
      const d = leastLoaded(null, corrected).route(REQ, { snapshots: s, clock: 0 });
      expect(d.targetId).toBe('instance_0');
      return { scores: d.scores === null ? null : [...d.scores.values()], regret: computeCounterfactual(d.targetId, d.regretScores ?? d.scores, s, 2).regret };
    };
    expect(regret(false)).toEqual({ scores: null, regret: 0 });
    expect(regret(true)).toEqual({ scores: [-1, -2], regret: 35 });
  });

  it('R6: in a traced run, the routing records carry the load scores and a non-zero regret (corrected only)', () => {
    // One seat per instance, 1 ms steps, 2048-token budget: estimated wait = queued prompt tokens / 2048 ms.
    // request_3 (1,600 tokens) queues behind request_1; request_4 ties on load (4 and 4) and the tie-break sends
    // it to that instance: (1600 - 16) / 2048 = 0.7734375 ms more than behind request_2's 16 tokens.
    // 200 blocks: request_3's 1,600-token prompt and its output fit the cache (with 100 blocks corrected mode
    // drops it as unservable: see the engine test of that guard).
    const setup = engineSetup({
      numInstances: 2,
      maxNumSeqs: 1,
      kv: { totalBlocks: 200, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
      policy: { ...DEFAULT_POLICY_SETUP, routingPolicy: 'least-loaded', snapshotRefreshInterval: 0, traceDecisions: true, counterfactualK: 2 },
    });
    const runs = bothModes(setup, () => [req(0, 16, 500, 0), req(1, 16, 500, 0), req(2, 16, 2, 1000), req(3, 1600, 2, 2000), req(4, 16, 2, 3000), req(5, 16, 2, 4000)]);
    const rec = (m: 'reference' | 'corrected') => runs[m].cs.routingRecords;
    expect(rec('reference').map((r) => r.regret)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(rec('corrected').map((r) => r.regret)).toEqual([0, 0, 0, 0, 0.7734375, 0]);
    expect(rec('reference')[4]!.scores).toBeNull();
    expect(rec('corrected')[4]!.scores).toEqual(new Map([['instance_0', -4], ['instance_1', -4]]));
    // The same decisions in both modes: only what the record says about them differs.
    expect(rec('corrected').map((r) => r.chosenInstance)).toEqual(rec('reference').map((r) => r.chosenInstance));
  });
});

describe('policy bundles and flags under --semantics', () => {
  it('P1: --admission-policy tier-shed alone leaves tier_shed_min_priority 0 (reference) or gives 3 as a bundle would (corrected)', () => {
    const flags: PolicyFlags = { 'admission-policy': explicit('tier-shed') };
    expect(resolvePolicySettings(null, flags).admission.tierShedMinPriority).toBe(0);
    expect(resolvePolicySettings(null, flags, { corrected: true }).admission.tierShedMinPriority).toBe(3);
    // A bundle that picks tier-shed gives 3 in both modes.
    const b = bundle('admission: {policy: tier-shed}', false);
    expect(resolvePolicySettings(b, {}).admission.tierShedMinPriority).toBe(3);
  });

  it('P2: --slo-targets without --flow-control is ignored (reference) or refused (corrected)', () => {
    const flags: PolicyFlags = { 'slo-targets': explicit('critical=100000') };
    expect(resolvePolicySettings(null, flags).sloTargets).toBeNull();
    expect(policyError(() => resolvePolicySettings(null, flags, { corrected: true }))).toMatch(/--slo-targets.*has no effect without --flow-control/);
  });

  it('P2: bundle slo_targets are not range-checked (reference) or must be > 0 (corrected)', () => {
    const yaml = 'admission:\n  slo_targets: {critical: -5}\n';
    expect(bundle(yaml, false).admission.sloTargets).toEqual(new Map([['critical', -5]]));
    expect(policyError(() => bundle(yaml, true))).toMatch(/policy\.yaml:2:\d+.*TTFT target for "critical" must be > 0/);
  });

  it('P3: an unknown priority.policy only warns (reference) or is refused (corrected)', () => {
    const yaml = 'priority:\n  policy: slo-weighted\n';
    expect(bundle(yaml, false).warnings.join('\n')).toMatch(/priority policy "slo-weighted" has no effect/);
    expect(policyError(() => bundle(yaml, true))).toMatch(/policy\.yaml:2:\d+.*unknown priority policy "slo-weighted"/);
  });

  it('P3: a malformed --routing-scorers only warns unless routing is weighted (reference) or is refused (corrected)', () => {
    const flags: PolicyFlags = { 'routing-policy': explicit('round-robin'), 'routing-scorers': explicit('queue-depth:abc') };
    expect(resolvePolicySettings(null, flags).warnings.join('\n')).toMatch(/--routing-scorers has no effect/);
    expect(policyError(() => resolvePolicySettings(null, flags, { corrected: true }))).toMatch(/invalid weight "abc"/);
  });

  it('P4: yaml.v3 number quirks are accepted (reference) or refused as not plain decimals (corrected)', () => {
    const truncated = 'admission:\n  tier_shed_min_priority: 2.9\n';
    expect(bundle(truncated, false).admission.tierShedMinPriority).toBe(2);
    expect(policyError(() => bundle(truncated, true))).toMatch(/policy\.yaml:2:\d+.*expected an integer, got 2\.9/);
    const octal = 'admission:\n  tier_shed_threshold: 010\n';
    expect(bundle(octal, false).admission.tierShedThreshold).toBe(8);
    expect(policyError(() => bundle(octal, true))).toMatch(/010 is not a plain decimal number/);
    const underscores = 'admission:\n  token_bucket_capacity: 1_000\n';
    expect(bundle(underscores, false).admission.tokenBucketCapacity).toBe(1000);
    expect(policyError(() => bundle(underscores, true))).toMatch(/1_000 is not a plain decimal number/);
    const nullEntry = 'admission:\n  slo_priorities:\n    critical:\n';
    expect(bundle(nullEntry, false).admission.sloPriorities).toEqual(new Map([['critical', 0]]));
    expect(policyError(() => bundle(nullEntry, true))).toMatch(/"critical" has no value/);
    // Plain decimals are read the same in both modes.
    const plain = 'admission:\n  token_bucket_capacity: 2.5e3\n  tier_shed_min_priority: 3\n';
    expect(bundle(plain, true).admission).toMatchObject({ tokenBucketCapacity: 2500, tierShedMinPriority: 3 });
  });
});
