// A code policy is compiled once to check it (preparePolicies) and the first simulation's build takes that program
// over instead of compiling it again — but only when that cannot change what the policy does.
import { describe, expect, it, vi } from 'vitest';
import { GoRand } from '../../src/gocompat/go-rand.js';
import { preparePolicies } from '../../src/policy/build.js';
import { parsePolicyBundle } from '../../src/policy/bundle.js';
import type { PolicyBuildContext } from '../../src/policy/templates/build.js';
import { makeRequest, scenarioCachedBlocks, scenarioSnapshots, scenarioTokens } from '../../src/routing/test-fixtures.js';
import type { RoutingPolicy } from '../../src/routing/types.js';
import * as sandbox from '../../src/sandbox/index.js';

function ctx(seed: bigint): PolicyBuildContext {
  return {
    blockSize: 16,
    routerRng: new GoRand(seed),
    rngFor: (p: string) => new GoRand(seed + BigInt(p.length)),
    cachedBlocks: scenarioCachedBlocks,
  } as unknown as PolicyBuildContext;
}

const bundle = (engine: string, source: string): string =>
  `routing:\n  type: code\n  engine: ${engine}\n  source: |\n${source.split('\n').map((l) => `    ${l}`).join('\n')}\n`;

/** Targets of 40 routings, with the router stream seeded from `seed`. */
function decisions(policy: RoutingPolicy): number[] {
  const inFlight = [0, 0, 0, 0];
  const out: number[] = [];
  for (let i = 0; i < 40; i++) {
    const d = policy.route(makeRequest(`r${i}`, scenarioTokens(i)), { snapshots: scenarioSnapshots(i, inFlight, true).slice(0, 4), clock: i * 1000 });
    out.push(d.target);
    inFlight[d.target] = (inFlight[d.target] as number) + 1;
  }
  return out;
}

// Counts the step of each routing and breaks ties at random: the first build must start from a fresh top level
// (counter 0) and draw from the simulation's router stream.
const COUNTING = `let n = 0;
function route(request, state) {
  n++;
  return (n + state.rng.intn(4)) % state.instances.length;
}`;
// The top level draws: the trial had no stream (draws read 0), so its program must not be reused.
const DRAWS_AT_TOP = `const offset = __host.rngIntn(1000);
function route(request, state) {
  return (offset + state.rng.intn(4)) % state.instances.length;
}`;

describe.each(['fast', 'strict'] as const)('trial compile reuse (%s engine)', (engine) => {
  it('the first build adopts the checked program, and decides exactly as a freshly compiled one', async () => {
    const load = sandbox.loadSandboxEngine;
    let compiles = 0;
    const spy = vi.spyOn(sandbox, 'loadSandboxEngine').mockImplementation(async (name) => {
      const e = await load(name);
      return { name: e.name, compile: (src, opts) => { compiles++; return e.compile(src, opts); } };
    });
    try {
      const prepared = await preparePolicies(parsePolicyBundle(bundle(engine, COUNTING), 'p.yaml').evolvable);
      expect(compiles).toBe(1);
      const first = decisions(prepared.build(ctx(5n)).routing as RoutingPolicy);
      expect(compiles).toBe(1);
      const second = decisions(prepared.build(ctx(5n)).routing as RoutingPolicy);
      expect(compiles).toBe(2);
      expect(first).toEqual(second);
      expect(decisions(prepared.build(ctx(6n)).routing as RoutingPolicy)).not.toEqual(first);
    } finally {
      spy.mockRestore();
    }
  });

  it('a program whose top level asked the host for a random number is compiled again for the simulation', async () => {
    const prepared = await preparePolicies(parsePolicyBundle(bundle(engine, DRAWS_AT_TOP), 'p.yaml').evolvable);
    const first = decisions(prepared.build(ctx(9n)).routing as RoutingPolicy);
    const second = decisions(prepared.build(ctx(9n)).routing as RoutingPolicy);
    expect(first).toEqual(second);
  });
});
