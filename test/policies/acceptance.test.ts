/**
 * Evolvable policies end to end through the CLI: the built-ins written as code, templates and trees give
 * byte-identical output; trees and templates do what they say; DELAY keeps every request counted; bad bundles
 * and failing policies end with one clear error and exit 2; every run passes the invariant checkers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { Request } from '../../src/domain/request.js';
import { checkRun } from '../parity/invariant-hook.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-policies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function bundle(text: string, ext = 'yaml'): string {
  const p = path.join(dir, `b${files++}.${ext}`);
  writeFileSync(p, text);
  return p;
}

interface Run {
  code: number;
  stdout: string;
  /** Warnings and errors. */
  stderr: string;
  /** Error lines only. */
  errors: string;
  requests: readonly Request[];
}

async function cli(argv: readonly string[], check = true): Promise<Run> {
  let stdout = '';
  let stderr = '';
  let errors = '';
  let requests: readonly Request[] = [];
  const code = await main(argv, { stdout: (t) => (stdout += t), warn: (t) => (stderr += `${t}\n`), error: (t) => { stderr += `${t}\n`; errors += `${t}\n`; } }, (cs, reqs, setup, sessions) => {
    requests = reqs;
    if (check) checkRun(cs, reqs, setup, sessions);
  });
  return { code, stdout, stderr, errors, requests };
}

const BASE = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '300', '--rate', '60', '--output-format', 'reference'];
const cluster = (n: number, seed: number): string[] => [...BASE, '--num-instances', String(n), '--seed', String(seed)];
const PREFIXED = ['--prefix-tokens', '256', '--prompt-tokens', '400', '--prompt-tokens-stdev', '200', '--output-tokens', '64', '--output-tokens-stdev', '32'];

const ENGINES = ['fast', 'strict'] as const;

const ALWAYS_BUSIEST_JS = `
function route(request, state) {
  let best = state.instances[0];
  for (const x of state.instances) {
    if (x.queueDepth + x.batchSize + x.inFlight > best.queueDepth + best.batchSize + best.inFlight) best = x;
  }
  return best.id;
}`;

/** The built-in weighted policy with its default profile (precise-prefix-cache:2, queue-depth:1, kv-utilization:1), in JavaScript. */
const WEIGHTED_JS = `
function clamp(v) { return v < 0 ? 0 : v > 1 ? 1 : v; }
function route(request, state) {
  const xs = state.instances;
  const n = xs.length;
  const total = [];
  for (let i = 0; i < n; i++) total.push(0);
  const w = [2 / 4, 1 / 4, 1 / 4];
  let min = Number.MAX_SAFE_INTEGER, max = 0;
  for (const x of xs) { if (x.cachedPrefixBlocks < min) min = x.cachedPrefixBlocks; if (x.cachedPrefixBlocks > max) max = x.cachedPrefixBlocks; }
  for (let i = 0; i < n; i++) total[i] = total[i] + clamp(max === min ? 1 : (xs[i].cachedPrefixBlocks - min) / (max - min)) * w[0];
  min = Number.MAX_SAFE_INTEGER; max = 0;
  for (const x of xs) { if (x.queueDepth < min) min = x.queueDepth; if (x.queueDepth > max) max = x.queueDepth; }
  for (let i = 0; i < n; i++) total[i] = total[i] + clamp(max === min ? 1 : (max - xs[i].queueDepth) / (max - min)) * w[1];
  for (let i = 0; i < n; i++) total[i] = total[i] + clamp(1 - xs[i].kvUtilization) * w[2];
  let best = -1;
  for (const v of total) if (v > best) best = v;
  const tied = [];
  for (let i = 0; i < n; i++) if (total[i] === best) tied.push(i);
  const pick = tied.length > 1 ? tied[state.rng.intn(tied.length)] : tied[0];
  return { target: xs[pick].id, reason: 'weighted in js' };
}`;

function codeBundle(point: string, engine: string, source: string, extra = ''): string {
  const indented = source.split('\n').map((l) => `    ${l}`).join('\n');
  return bundle(`${point}:\n  type: code\n  engine: ${engine}\n${extra}  source: |\n${indented}\n`);
}

describe('built-ins written as evolvable policies give byte-identical output', () => {
  for (const n of [4, 8]) {
    it(`always-busiest as code on ${n} instances, both engines`, async () => {
      const ref = await cli([...cluster(n, 7), '--routing-policy', 'always-busiest']);
      expect(ref.code, ref.stderr).toBe(0);
      for (const engine of ENGINES) {
        const r = await cli([...cluster(n, 7), '--policy-config', codeBundle('routing', engine, ALWAYS_BUSIEST_JS)]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout, engine).toBe(ref.stdout);
      }
      // The default JSON output too (no metadata, no tracing: nothing says how the policy was written).
      const json = (argv: string[]) => argv.filter((a) => a !== 'reference' && a !== '--output-format');
      const refJson = await cli([...json(cluster(n, 7)), '--routing-policy', 'always-busiest']);
      for (const engine of ENGINES) {
        const r = await cli([...json(cluster(n, 7)), '--policy-config', codeBundle('routing', engine, ALWAYS_BUSIEST_JS)]);
        expect(r.stdout, `${engine} (json)`).toBe(refJson.stdout);
      }
    });
  }

  for (const [n, seed] of [[2, 11], [4, 42], [8, 5]] as const) {
    it(`default weighted routing as templates, a tree and code (${n} instances, seed ${seed})`, async () => {
      const args = [...cluster(n, seed), ...PREFIXED];
      const ref = await cli([...args, '--routing-policy', 'weighted']);
      expect(ref.code, ref.stderr).toBe(0);
      const variants: [string, string][] = [
        ['template weighted_affinity_routing', bundle('routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters: {}\n')],
        ['template weighted_scorers', bundle('{"routing": {"type": "parameterized", "template": "weighted_scorers", "parameters": {}}}', 'json')],
        ['tree', bundle('routing:\n  type: decision_tree\n  tree:\n    route:\n      scorers: {precise-prefix-cache: 2, queue-depth: 1, kv-utilization: 1}\n')],
        ['tree with a branch', bundle('routing:\n  type: decision_tree\n  tree:\n    if: {feature: request.inputTokens, op: ">=", value: 0}\n    then: {route: {scorers: [{name: precise-prefix-cache, weight: 2}, {name: queue-depth, weight: 1}, {name: kv-utilization, weight: 1}]}}\n    else: {route: {minimize: instance.load}}\n')],
        ...ENGINES.map((e): [string, string] => [`code (${e})`, codeBundle('routing', e, WEIGHTED_JS)]),
      ];
      for (const [label, file] of variants) {
        const r = await cli([...args, '--policy-config', file]);
        expect(r.code, `${label}: ${r.stderr}`).toBe(0);
        expect(r.stdout, label).toBe(ref.stdout);
      }
    });
  }

  it('least-loaded as a tree (minimize instance.load, random ties) and as a template', async () => {
    const args = cluster(4, 3);
    const ref = await cli([...args, '--routing-policy', 'least-loaded']);
    for (const file of [
      bundle('routing:\n  type: decision_tree\n  tree: {route: {minimize: instance.load}}\n'),
      bundle('routing: {type: parameterized, template: least_loaded_routing, parameters: {}}\n'),
    ]) {
      const r = await cli([...args, '--policy-config', file]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(ref.stdout);
    }
  });
});

describe('trees and templates do what they say', () => {
  it('an admission tree rejecting prompts over N tokens rejects exactly those requests', async () => {
    const N = 600;
    const file = bundle(`admission:\n  type: decision_tree\n  tree:\n    if: {feature: request.inputTokens, op: ">", value: ${N}}\n    then: {action: reject, reason: too long}\n    else: {action: admit}\n`);
    const r = await cli([...cluster(2, 9), '--policy-config', file]);
    expect(r.code, r.stderr).toBe(0);
    const over = r.requests.filter((q) => q.inputLen > N).length;
    expect(over).toBeGreaterThan(10);
    expect(r.stdout).toContain(`Rejected Requests (Admission): ${over}\n`);
    expect(r.requests.filter((q) => q.outcome === 'rejected').every((q) => q.inputLen > N)).toBe(true);
  });

  it('prompt_size_admission template matches the tree', async () => {
    const tree = await cli([...cluster(2, 9), '--policy-config', bundle('admission:\n  type: decision_tree\n  tree: {if: {feature: request.inputTokens, op: ">", value: 700}, then: {action: reject}, else: {action: admit}}\n')]);
    const tpl = await cli([...cluster(2, 9), '--policy-config', bundle('admission: {type: parameterized, template: prompt_size_admission, parameters: {max_input_tokens: 700}}\n')]);
    expect(tpl.code, tpl.stderr).toBe(0);
    expect(tpl.stdout).toBe(tree.stdout);
  });

  it('the JSON output names the candidate and its control points, and prints trees back as text', async () => {
    const file = bundle('metadata: {id: cand-7, generation: 3, parent_id: cand-2, mutations: [raised threshold]}\nadmission:\n  type: decision_tree\n  tree: {if: {feature: request.inputTokens, op: ">", value: 700}, then: {action: reject, reason: long}, else: {action: admit}}\n');
    const r = await cli([...cluster(2, 9).filter((a) => a !== 'reference' && a !== '--output-format'), '--policy-config', file]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { policy: Record<string, unknown>; policy_anomalies: { counts: Record<string, number> } };
    expect(doc.policy).toMatchObject({ id: 'cand-7', generation: 3, parent_id: 'cand-2', mutations: ['raised threshold'] });
    expect((doc.policy['control_points'] as Record<string, { text: string }>)['admission']?.text).toBe('if request.inputTokens > 700:\n  reject "long"\nelse:\n  admit');
    expect(Object.keys(doc.policy_anomalies.counts)).toHaveLength(7);
  });
});

describe('DELAY', () => {
  it('delayed requests re-enter admission and are all counted', async () => {
    const file = codeBundle('admission', 'fast', 'function admit(request, state) {\n  if (request.admissionDelays < 2 && state.global.inFlight > 8) return { delayUs: 20000, reason: "busy" };\n  return "admit";\n}');
    const r = await cli([...cluster(2, 4).filter((a) => a !== 'reference' && a !== '--output-format'), '--policy-config', file]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { admission_delays: { delays: number; still_delayed: number }; simulation_metrics: { completed_requests: number } };
    expect(doc.admission_delays.delays).toBeGreaterThan(0);
    expect(doc.admission_delays.still_delayed).toBe(0);
    expect(doc.simulation_metrics.completed_requests).toBe(300);
  });

  it('a policy that always delays cannot hang the run: past the limit requests are rejected', async () => {
    const file = codeBundle('admission', 'fast', 'function admit() { return { delayUs: 1 }; }');
    const r = await cli([...cluster(1, 4), '--num-requests', '20', '--policy-config', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Rejected Requests (Admission): 20\n');
  });

  it('an event past the horizon between two streamed chunks of arrivals loses none of the later ones', async () => {
    // 300 arrivals before the 5 s horizon, streamed in chunks (8 on the CLI); each is delayed 10 s, so between
    // chunks the earliest event is past the horizon while the next chunk's arrivals, not injected yet, are not.
    const file = codeBundle('admission', 'fast', 'function admit() { return { delayUs: 10000000 }; }');
    const r = await cli([...cluster(1, 4), '--num-requests', '600', '--horizon', '5000000', '--policy-config', file, '--output-format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { admission_delays: { still_delayed: number } };
    expect(doc.admission_delays.still_delayed).toBe(r.requests.filter((q) => q.arrivalTime <= 5_000_000).length);
    expect(doc.admission_delays.still_delayed).toBeGreaterThan(256);
  });

  it('requests still delayed at the horizon are counted in their own bucket (INV-1)', async () => {
    const file = codeBundle('admission', 'fast', 'function admit() { return { delayUs: 10000000 }; }');
    const r = await cli([...cluster(1, 4), '--num-requests', '20', '--horizon', '5000000', '--policy-config', file, '--output-format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { admission_delays: { still_delayed: number } };
    expect(doc.admission_delays.still_delayed).toBeGreaterThan(0);
  });
});

describe('bad bundles and failing policies: one clear error, exit 2', () => {
  const cases: [string, string, RegExp][] = [
    ['unknown template', 'routing:\n  type: parameterized\n  template: weighted_afinity_routing\n', /b\d+\.yaml:3:13: routing\.template: unknown routing template "weighted_afinity_routing"; did you mean weighted_affinity_routing/],
    ['parameter out of range', 'routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters:\n    utilization_threshold: 1.5\n', /b\d+\.yaml:5:28: routing\.parameters\.utilization_threshold: utilization_threshold = 1\.5 is out of range \[0, 1\]/],
    ['unknown parameter', 'routing: {type: parameterized, template: power_of_d_choices, parameters: {k: 3}}\n', /routing\.parameters\.k: unknown parameter "k"/],
    ['syntax error in code', 'routing:\n  type: code\n  source: |\n    function route(r, s) { return s.instances[0].id\n', /b\d+\.yaml:4:1: routing\.source: fast engine: syntax/],
    ['missing entry point', 'routing:\n  type: code\n  source: |\n    function pick(r, s) { return 0; }\n', /missing entry point.*define function route/],
    ['misspelled feature', 'admission:\n  type: decision_tree\n  tree:\n    if: {feature: request.inputTokenz, op: ">", value: 5}\n    then: {action: reject}\n    else: {action: admit}\n', /b\d+\.yaml:4:19: admission\.tree\.if\.feature: .*request\.inputTokenz.*request\.inputTokens/],
    ['unknown type', 'routing: {type: neural}\n', /routing\.type: unknown policy type "neural"; use parameterized, decision_tree or code/],
    ['policy and type together', 'routing: {type: code, policy: weighted, source: "function route() { return 0; }"}\n', /routing\.policy: `policy:` .* cannot both be set/],
  ];
  for (const [label, text, want] of cases) {
    it(label, async () => {
      const r = await cli([...cluster(2, 1), '--policy-config', bundle(text)]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.errors.trim().split('\n')).toHaveLength(1);
      expect(r.errors).toMatch(want);
    });
  }

  for (const engine of ENGINES) {
    for (const [label, src, want] of [
      ['infinite loop', 'function route(r, s) { for (;;) {} }', /routing policy code \(\w+ engine\) at .*: call #1: route\(request_0\) at t=\d+: instruction budget exceeded/],
      ['invalid target', 'function route(r, s) { return "instance_99"; }', /routing policy .*call #1: .*target "instance_99" is not a routable instance/],
      ['throws', 'function route(r, s) { throw new Error("nope " + r.id); }', /nope request_0/],
    ] as const) {
      it(`${engine}: ${label} fails the run with a typed error naming the control point and call`, async () => {
        const r = await cli([...cluster(2, 1), '--policy-config', codeBundle('routing', engine, src)], false);
        expect(r.code).toBe(2);
        expect(r.errors.trim().split('\n')).toHaveLength(1);
        expect(r.errors).toMatch(want);
      });
    }
  }
});

describe('determinism', () => {
  for (const engine of ENGINES) {
    it(`a code policy drawing from state.rng gives byte-identical JSON twice (${engine})`, async () => {
      const src = 'function route(r, s) { return s.instances[s.rng.intn(s.instances.length)].id; }';
      const args = [...cluster(4, 21).filter((a) => a !== 'reference' && a !== '--output-format'), '--trace-level', 'decisions', '--policy-config', codeBundle('routing', engine, src)];
      const a = await cli(args);
      const b = await cli(args);
      expect(a.code, a.stderr).toBe(0);
      expect(a.stdout).toBe(b.stdout);
    });
  }
});

describe('blis policies', () => {
  it('lists every template with its parameters and every feature', async () => {
    const r = await cli(['policies']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { templates: { name: string; control_point: string; parameters: { name: string; default: unknown }[] }[]; features: { name: string }[]; control_points: { name: string }[] };
    expect(doc.control_points.map((c) => c.name)).toEqual(['admission', 'priority', 'routing', 'scheduler', 'autoscale', 'disaggregation', 'encode']);
    const w = doc.templates.find((t) => t.name === 'weighted_affinity_routing');
    expect(w?.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(['cache_affinity_weight', 'load_balance_weight', 'queue_depth_weight', 'utilization_threshold']));
    for (const point of ['admission', 'priority', 'routing', 'scheduler', 'autoscale', 'disaggregation', 'encode']) expect(doc.templates.some((t) => t.control_point === point)).toBe(true);
    expect(doc.features.map((f) => f.name)).toContain('tenant.burstDetected');
    expect(doc.features.map((f) => f.name)).toEqual(expect.arrayContaining(['selected.uncachedTokens', 'decode.meanQueueDepth', 'prefill.meanKvUtilization', 'encode.maxQueueDepth', 'request.multimodalTokens']));
  });
});
