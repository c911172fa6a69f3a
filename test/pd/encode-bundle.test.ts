/**
 * The E/P/D encode decider as a policy-bundle control point (`encode`): the contract over every
 * implementation (built-ins, the template, a tree, code in both engines), the multimodal rule in every
 * representation agreeing with the built-in, the default template being `--encode-decider multimodal` byte for
 * byte, decisions in the trace, the flag's precedence, and refused or failing deciders (one error line, exit 2).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { SloPriorityMap } from '../../src/domain/slo.js';
import { GoRand } from '../../src/gocompat/go-rand.js';
import { preparePolicies, type BuiltPolicies } from '../../src/policy/build.js';
import { parsePolicyBundle } from '../../src/policy/bundle.js';
import { ENCODE_DECIDERS, makeEncodeDecider, type EncodeContext, type EncodeDecider } from '../../src/routing/encode-decider.js';
import { makeRequest, scenarioCachedBlocks } from '../../src/routing/test-fixtures.js';
import { routingSnapshot } from '../../src/routing/types.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-encode-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

async function bundle(yaml: string): Promise<() => BuiltPolicies> {
  const prepared = await preparePolicies(parsePolicyBundle(yaml, 'e.yaml').evolvable);
  return () => prepared.build({ blockSize: 16, routerRng: new GoRand(7n), rngFor: () => new GoRand(9n), cachedBlocks: scenarioCachedBlocks, priorities: new SloPriorityMap() });
}
const code = (engine: string, source: string): string => `encode:\n  type: code\n  engine: ${engine}\n  source: |\n${source.split('\n').map((l) => `    ${l}`).join('\n')}\n`;

/** Requests with and without image, audio and video tokens; an encode pool whose load grows. */
function grid(): { req: ReturnType<typeof makeRequest>; ctx: EncodeContext; reads: { n: number } }[] {
  return Array.from({ length: 24 }, (_, i) => {
    const req = Object.assign(makeRequest(`r${i}`, [1, 2, 3]), { imageTokens: i % 3 === 0 ? 300 : 0, audioTokens: i % 4 === 1 ? 40 : 0, videoTokens: i % 7 === 2 ? 5 : 0 });
    const reads = { n: 0 };
    const state = { snapshots: [routingSnapshot('instance_e0', { queueDepth: i % 5 }), routingSnapshot('instance_e1', { inFlightRequests: i % 3 })], clock: i * 100 };
    return { req, reads, ctx: { clock: i * 100, encodeState: () => { reads.n++; return state; } } };
  });
}
const decideOf = (d: EncodeDecider) => (g: ReturnType<typeof grid>[number]): boolean => (d.decide ? d.decide(g.req, 'instance_d0', g.ctx).encode : d.shouldEncode(g.req, 'instance_d0'));

describe('encode decider contract', () => {
  const subjects: { label: string; make: () => EncodeDecider }[] = [];
  const multimodal: { label: string; make: () => EncodeDecider }[] = [];
  beforeAll(async () => {
    for (const n of ENCODE_DECIDERS) subjects.push({ label: `built-in ${n}`, make: () => makeEncodeDecider(n) });
    const tpl = await bundle('encode: {type: parameterized, template: multimodal_encode, parameters: {}}\n');
    multimodal.push({ label: 'template multimodal_encode', make: () => tpl().encode as EncodeDecider });
    const tree = await bundle('encode:\n  type: decision_tree\n  tree: {if: {feature: request.multimodalTokens, op: ">", value: 0}, then: {encode: true, reason: multimodal}, else: {encode: false}}\n');
    multimodal.push({ label: 'tree', make: () => tree().encode as EncodeDecider });
    for (const e of ['fast', 'strict']) {
      const c = await bundle(code(e, 'function shouldEncode(request, state) {\n  return request.imageTokens + request.audioTokens + request.videoTokens > 0;\n}'));
      multimodal.push({ label: `code (${e})`, make: () => c().encode as EncodeDecider });
    }
    const busy = await bundle('encode:\n  type: decision_tree\n  tree: {if: {all: [{feature: request.imageTokens, op: ">", value: 0}, {feature: encode.maxQueueDepth, op: "<", value: 3}]}, then: {encode: true}, else: {encode: false, reason: text or busy}}\n');
    subjects.push(...multimodal, { label: 'tree over the encode pool', make: () => busy().encode as EncodeDecider });
  });

  it('every implementation: a boolean, the request untouched, deterministic', () => {
    expect(subjects.length).toBe(3 + 4 + 1);
    for (const s of subjects) {
      const run = (): boolean[] => grid().map((g) => {
        const d = decideOf(s.make())(g);
        expect(typeof d, s.label).toBe('boolean');
        expect([g.req.id, g.req.imageTokens, g.req.outcome], s.label).toEqual([g.req.id, g.req.imageTokens, '']);
        return d;
      });
      expect(run(), s.label).toEqual(run());
    }
  });

  it('the multimodal rule as template, tree and code agrees with the built-in; the pool is read only by deciders that look at it', () => {
    const expected = grid().map((g) => g.req.imageTokens + g.req.audioTokens + g.req.videoTokens > 0);
    expect(expected.filter(Boolean).length).toBeGreaterThan(8);
    expect(grid().map((g) => makeEncodeDecider('multimodal').shouldEncode(g.req, 'x'))).toEqual(expected);
    for (const s of multimodal) {
      const gs = grid();
      expect(gs.map(decideOf(s.make())), s.label).toEqual(expected);
      // Trees and templates that never name the pool do not read it (code always receives it).
      if (!s.label.startsWith('code')) expect(gs.reduce((n, g) => n + g.reads.n, 0), s.label).toBe(0);
    }
    const busy = subjects.find((s) => s.label === 'tree over the encode pool') as { make: () => EncodeDecider };
    const gs = grid();
    // Image requests (i % 3 == 0) while the first pod's queue (i % 5) is below 3.
    expect(gs.map(decideOf(busy.make()))).toEqual(gs.map((_, i) => i % 3 === 0 && i % 5 < 3));
  });
});

const M = ['--model', 'qwen/qwen2.5-7b-instruct', '--hardware', 'H100', '--tp', '1'];
const EPD = ['--num-instances', '5', '--prefill-instances', '1', '--decode-instances', '2', '--encode-instances', '2', '--pd-decider', 'always'];
const SPEC = `version: "2"
seed: 3
category: multimodal
aggregate_rate: 10
num_requests: 40
clients:
  - id: vision
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 20}}
    multimodal:
      text_distribution: {type: constant, params: {value: 50}}
      image_distribution: {type: constant, params: {value: 300}}
      image_count_distribution: {type: constant, params: {value: 1}}
  - id: text
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 120}}
    output_distribution: {type: constant, params: {value: 20}}
`;

async function epd(extra: readonly string[]): ReturnType<typeof runCli> {
  const r = await runCli(['run', ...M, '--workload-spec', file('mm.yaml', SPEC), '--seed', '9', ...EPD, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
  return r;
}

describe('a bundle encode decider end to end', () => {
  it('the default template is --encode-decider multimodal byte for byte; min_multimodal_tokens 0 encodes every request; decisions are traced', async () => {
    const builtin = await epd(['--encode-decider', 'multimodal', '--output-format', 'reference']);
    const tpl = await epd(['--policy-config', file('t.yaml', 'encode: {type: parameterized, template: multimodal_encode, parameters: {}}\n'), '--output-format', 'reference']);
    expect(tpl.stdout).toBe(builtin.stdout);
    const images = builtin.sims[0]?.requests.filter((q) => q.imageTokens > 0).length ?? 0;
    expect(images).toBeGreaterThan(5);
    expect(images).toBeLessThan(35);
    expect(builtin.sims[0]?.cs.pd?.encode?.routed).toBe(images);
    const all = await epd(['--policy-config', file('all.yaml', 'encode: {type: parameterized, template: multimodal_encode, parameters: {min_multimodal_tokens: 0}}\n'), '--trace-level', 'decisions']);
    expect(all.sims[0]?.cs.pd?.encode?.routed).toBe(40);
    const trace = (JSON.parse(all.stdout) as { trace: { encode_decisions: { encode: boolean; reason: string }[]; encode_routings: unknown[] } }).trace;
    expect(trace.encode_decisions.length).toBe(40);
    expect(trace.encode_decisions.every((d) => d.encode)).toBe(true);
    expect(trace.encode_routings.length).toBe(40);
    expect(trace.encode_decisions.filter((d) => d.reason === '300 multimodal tokens >= 0').length).toBe(images);
  });

  it('an explicit --encode-decider overrides the bundle\'s decider, with a warning', async () => {
    const plain = await epd(['--encode-decider', 'always']);
    const both = await epd(['--encode-decider', 'always', '--policy-config', file('t2.yaml', 'encode: {type: decision_tree, tree: {encode: false}}\n')]);
    expect(both.stdout).toBe(plain.stdout);
    expect(both.stderr).toMatch(/--encode-decider overrides the encode policy of/);
  });

  const refused = async (argv: readonly string[], message: RegExp): Promise<void> => {
    let stdout = '';
    const errors: string[] = [];
    const code = await main(['run', ...M, '--workload-spec', file('mm2.yaml', SPEC), ...argv], { stdout: (t) => (stdout += t), warn: () => undefined, error: (t) => errors.push(t) });
    expect(code, errors.join('\n')).toBe(2);
    expect(stdout).toBe('');
    expect(errors.length, errors.join('\n')).toBe(1);
    expect(errors[0]).toMatch(message);
  };
  it('refused without an encode pool; a failing code decider stops the run with one error line', async () => {
    const tree = file('t3.yaml', 'encode: {type: decision_tree, tree: {encode: true}}\n');
    await refused(['--num-instances', '3', '--prefill-instances', '1', '--decode-instances', '2', '--policy-config', tree], /encode policy of .*t3\.yaml needs an encode pool: set --encode-instances/);
    for (const e of ['fast', 'strict']) {
      await refused([...EPD, '--policy-config', file(`bad-${e}.yaml`, code(e, 'function shouldEncode(request, state) { return state.instances[9].id; }'))], /encode policy code .*shouldEncode\(request_\d+\)/);
      await refused([...EPD, '--policy-config', file(`num-${e}.yaml`, code(e, 'function shouldEncode(request, state) { return 1; }'))], /expected true, false or \{encode/);
    }
  });
});
