/**
 * The routing-policy contract, run against every registered policy and against the weighted policy with each
 * registered scorer alone: a valid target whose id matches; one instance handled; empty input refused; the
 * RNG drawn exactly once, as intn(number tied), when and only when the best value is tied, and the draw
 * mapped onto the tied positions in snapshot order; positional choice without an RNG; determinism; and for
 * scoring policies a composite that is exactly the weighted sum of its breakdown.
 */
import { describe, expect, it } from 'vitest';
import { GoRand } from '../gocompat/go-rand.js';
import { makeRoutingPolicy, ROUTING_POLICY_NAMES, type RoutingPolicyOptions } from './registry.js';
import { SCORER_NAMES } from './scorer-registry.js';
import { makeRequest, scenarioCachedBlocks, scenarioSnapshots, scenarioTokens, snaps } from './test-fixtures.js';
import type { RoutingDecision, RoutingPolicy, RoutingSnapshot, TieBreakRng } from './types.js';
import { effectiveLoad } from './types.js';

interface Draw {
  readonly n: number;
  readonly value: number;
}

function recordingRng(seed: bigint): { rng: TieBreakRng; draws: Draw[] } {
  const g = new GoRand(seed);
  const draws: Draw[] = [];
  return {
    draws,
    rng: {
      intn(n: number): number {
        const value = g.intn(n);
        draws.push({ n, value });
        return value;
      },
    },
  };
}

/**
 * The value each policy maximises, for finding ties; null when a policy never draws (round-robin has no
 * objective, always-busiest breaks ties positionally).
 */
type Objective = ((d: RoutingDecision, s: readonly RoutingSnapshot[]) => number[]) | null;

interface Subject {
  readonly label: string;
  readonly make: (rng: TieBreakRng | null) => RoutingPolicy;
  readonly objective: Objective;
  readonly positionalFirst: boolean;
}

const baseOpts = (rng: TieBreakRng | null): RoutingPolicyOptions => ({ scorers: null, blockSize: 16, rng, cachedBlocks: scenarioCachedBlocks });
const byScores: Objective = (d, s) => s.map((x) => d.scores?.get(x.id) ?? NaN);

const subjects: Subject[] = [
  ...ROUTING_POLICY_NAMES.map(
    (name): Subject => ({
      label: name,
      make: (rng) => makeRoutingPolicy(name, baseOpts(rng)),
      objective: name === 'least-loaded' ? (_d, s) => s.map((x) => -effectiveLoad(x)) : name === 'weighted' ? byScores : null,
      positionalFirst: name !== 'round-robin',
    }),
  ),
  ...SCORER_NAMES.map(
    (scorer): Subject => ({
      label: `weighted[${scorer}]`,
      make: (rng) => makeRoutingPolicy('weighted', { ...baseOpts(rng), scorers: [{ name: scorer, weight: 1 }] }),
      objective: byScores,
      positionalFirst: true,
    }),
  ),
];

function tiedPositions(values: number[]): number[] {
  const best = Math.max(...values);
  return values.flatMap((v, i) => (v === best ? [i] : []));
}

/** Routes the scenario on 4 instances, calling `check` with every decision. */
function drive(policy: RoutingPolicy, n: number, check: (d: RoutingDecision, s: RoutingSnapshot[], i: number) => void): void {
  const inFlight = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    const s = scenarioSnapshots(i, inFlight, i % 2 === 0);
    const d = policy.route(makeRequest(`request_${i}`, scenarioTokens(i)), { snapshots: s, clock: i * 100 });
    check(d, s, i);
    inFlight[d.target] = (inFlight[d.target] as number) + 1;
  }
}

describe.each(subjects)('routing policy contract: $label', ({ make, objective, positionalFirst }) => {
  it('returns a valid target whose id matches its snapshot', () => {
    drive(make(recordingRng(1n).rng), 40, (d, s) => {
      expect(Number.isInteger(d.target)).toBe(true);
      expect(d.target).toBeGreaterThanOrEqual(0);
      expect(d.target).toBeLessThan(s.length);
      expect(d.targetId).toBe(s[d.target]?.id);
      expect(d.reason).not.toBe('');
    });
  });

  it('routes a single instance to it without drawing', () => {
    const { rng, draws } = recordingRng(2n);
    const p = make(rng);
    for (let i = 0; i < 3; i++) {
      const d = p.route(makeRequest(`r${i}`, scenarioTokens(i)), { snapshots: snaps(['only', { queueDepth: i }]), clock: 0 });
      expect(d.target).toBe(0);
      expect(d.targetId).toBe('only');
    }
    expect(draws).toEqual([]);
  });

  it('refuses an empty instance list', () => {
    expect(() => make(null).route(makeRequest('r'), { snapshots: [], clock: 0 })).toThrow();
  });

  it('draws once, as intn(tied), exactly when the best value is tied, and picks that tied position', () => {
    const { rng, draws } = recordingRng(3n);
    let seen = 0;
    drive(make(rng), 40, (d, s) => {
      const before = seen;
      seen = draws.length;
      const made = draws.slice(before);
      if (objective === null) {
        expect(made).toEqual([]);
        return;
      }
      const tied = tiedPositions(objective(d, s));
      if (tied.length <= 1) {
        expect(made).toEqual([]);
        expect(d.target).toBe(tied[0]);
      } else {
        expect(made.map((m) => m.n)).toEqual([tied.length]);
        expect(d.target).toBe(tied[(made[0] as Draw).value]);
      }
    });
  });

  it('without an RNG breaks ties positionally', () => {
    const p = make(null);
    const identical = snaps(['a', { queueDepth: 2 }], ['b', { queueDepth: 2 }], ['c', { queueDepth: 2 }]);
    for (let i = 0; i < 4; i++) {
      const d = p.route(makeRequest(`r${i}`, [i]), { snapshots: identical, clock: 0 });
      if (!positionalFirst) {
        expect(d.target).toBe(i % 3);
        continue;
      }
      const tied = objective === null ? [0, 1, 2] : tiedPositions(objective(d, identical));
      expect(d.target).toBe(tied[0]);
    }
  });

  it('is deterministic for the same seed', () => {
    const run = (): string[] => {
      const out: string[] = [];
      drive(make(recordingRng(99n).rng), 40, (d) => out.push(`${d.targetId}|${d.reason}`));
      return out;
    };
    expect(run()).toEqual(run());
  });

  it('reports scores (when it scores) that are the weighted sum of its breakdown', () => {
    drive(make(recordingRng(4n).rng), 12, (d, s) => {
      if (d.scores === null) {
        expect(d.breakdown).toBeNull();
        return;
      }
      const parts = d.breakdown ?? [];
      expect(parts.reduce((acc, p) => acc + p.weight, 0)).toBeCloseTo(1, 12);
      s.forEach((snap, i) => {
        let sum = 0;
        for (const p of parts) {
          const v = p.values[i] as number;
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1);
          sum += v * p.weight;
        }
        expect(d.scores?.get(snap.id)).toBe(sum);
      });
    });
  });
});
