/**
 * A P/D decider from a policy bundle, end to end: it changes which requests are split (checked against the
 * workload itself), what that does to the short requests' TTFT, and every representation of one rule gives
 * the same bytes; the default template is `--pd-decider prefix-threshold` byte for byte; decisions reach the
 * trace with the decider's reasons; the flag beats the bundle with a warning; contradictory combinations and
 * a broken decider are one error line, exit 2. Every run passes every invariant checker.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-decider-'));
function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
const POOLS = ['--num-instances', '4', '--prefill-instances', '2', '--decode-instances', '2'];
// Prompts of 100-3000 random tokens (no shared prefixes: nothing is cached, uncached = prompt length).
const WORKLOAD = ['--rate', '4', '--num-requests', '200', '--seed', '3', '--prompt-tokens', '1200', '--prompt-tokens-stdev', '800', '--prompt-tokens-min', '100',
  '--prompt-tokens-max', '3000', '--output-tokens', '32', '--output-tokens-stdev', '0', '--output-tokens-min', '32', '--output-tokens-max', '32'];
const LIMIT = 1024;

const TREE = file('tree.yaml', `disaggregation:
  type: decision_tree
  tree:
    if: {feature: selected.uncachedTokens, op: ">", value: ${LIMIT}}
    then: {disaggregate: true, reason: long uncached prompt}
    else: {disaggregate: false, reason: short enough to prefill locally}
`);
const codeBundle = (engine: string): string => file(`code-${engine}.yaml`, `disaggregation:
  type: code
  engine: ${engine}
  source: |
    function decide(request, state) {
      return state.selected.uncachedTokens > ${LIMIT};
    }
`);

interface Run {
  readonly stdout: string;
  readonly stderr: string;
  readonly split: Set<string>;
  /** TTFT (µs) of each completed request, by id. */
  readonly ttft: Map<string, number>;
  readonly inputLen: Map<string, number>;
}

async function run(extra: readonly string[]): Promise<Run> {
  const r = await runCli(['run', ...MODEL, ...POOLS, ...WORKLOAD, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
  const split = new Set((sim.cs.pd?.parents ?? []).map((p) => p.req.id));
  const ttft = new Map<string, number>();
  const inputLen = new Map<string, number>();
  for (const q of sim.requests) {
    inputLen.set(q.id, q.inputLen);
    if (q.hasTTFT) ttft.set(q.id, q.ttft);
  }
  return { stdout: r.stdout, stderr: r.stderr, split, ttft, inputLen };
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('a bundle P/D decider', () => {
  it('splits exactly the long prompts, which lowers the short requests\' TTFT against always; every representation gives the same bytes', async () => {
    const always = await run(['--pd-decider', 'always']);
    const tree = await run(['--policy-config', TREE]);
    const long = [...tree.inputLen].filter(([, n]) => n > LIMIT).map(([id]) => id).sort();
    const short = [...tree.inputLen].filter(([, n]) => n <= LIMIT).map(([id]) => id);
    // The workload has both kinds in numbers.
    expect(long.length).toBeGreaterThan(60);
    expect(short.length).toBeGreaterThan(60);
    expect([...tree.split].sort()).toEqual(long);
    expect(always.split.size).toBe(200);
    // A short request prefilled on its decode pod skips the KV transfer (~5 µs per token at 25 GB/s), though it
    // shares that pod with running decodes: measured 1.7 ms less on average.
    const shortTtft = (r: Run): number => mean(short.map((id) => r.ttft.get(id) as number));
    expect(short.every((id) => tree.ttft.has(id) && always.ttft.has(id))).toBe(true);
    expect(shortTtft(always) - shortTtft(tree)).toBeGreaterThan(1000);
    for (const engine of ['fast', 'strict']) expect((await run(['--policy-config', codeBundle(engine)])).stdout).toBe(tree.stdout);
    const tpl = file('tpl.yaml', `disaggregation: {type: parameterized, template: prefix_threshold_disaggregation, parameters: {threshold: ${LIMIT}}}\n`);
    expect((await run(['--policy-config', tpl])).stdout).toBe(tree.stdout);
    expect(tree.stdout).not.toBe(always.stdout);
  });

  it('the default prefix_threshold_disaggregation template is --pd-decider prefix-threshold, byte for byte, with shared prefixes', async () => {
    const prefix = ['--prefix-tokens', '512', '--prompt-tokens', '64', '--prompt-tokens-stdev', '32', '--prompt-tokens-min', '1', '--prompt-tokens-max', '128', '--output-format', 'reference'];
    const builtin = await run(['--pd-decider', 'prefix-threshold', ...prefix]);
    const tpl = await run(['--policy-config', file('pt.yaml', 'disaggregation: {type: parameterized, template: prefix_threshold_disaggregation, parameters: {}}\n'), ...prefix]);
    expect(tpl.stdout).toBe(builtin.stdout);
    // Not vacuous: some requests are split and some are not.
    expect(builtin.split.size).toBeGreaterThan(0);
    expect(builtin.split.size).toBeLessThan(200);
  });

  it('records each decision in the trace with the decider\'s reason', async () => {
    const r = await run(['--policy-config', TREE, '--trace-level', 'decisions']);
    const doc = JSON.parse(r.stdout) as { trace: { disaggregations: { request_id: string; disaggregate: boolean; reason: string }[] }; policy: { control_points: Record<string, { type: string; text: string }> } };
    const recs = doc.trace.disaggregations;
    expect(recs.length).toBe(200);
    for (const d of recs) {
      const long = (r.inputLen.get(d.request_id) as number) > LIMIT;
      expect(d.disaggregate).toBe(long);
      expect(d.reason).toBe(long ? 'long uncached prompt' : 'short enough to prefill locally');
    }
    expect(doc.policy.control_points['disaggregation']?.type).toBe('decision_tree');
    expect(doc.policy.control_points['disaggregation']?.text).toContain('if selected.uncachedTokens > 1024:');
  });

  it('an explicit --pd-decider overrides the bundle\'s decider, with a warning', async () => {
    const plain = await run(['--pd-decider', 'always']);
    const both = await run(['--pd-decider', 'always', '--policy-config', TREE]);
    expect(both.stdout).toBe(plain.stdout);
    expect(both.stderr).toMatch(/--pd-decider overrides the disaggregation policy of .*tree\.yaml/);
  });
});

async function refused(argv: readonly string[], message: RegExp): Promise<void> {
  let stdout = '';
  const errors: string[] = [];
  const code = await main(['run', ...MODEL, '--rate', '5', '--num-requests', '20', ...argv], { stdout: (t) => (stdout += t), warn: () => undefined, error: (t) => errors.push(t) });
  expect(code, errors.join('\n')).toBe(2);
  expect(stdout).toBe('');
  expect(errors.length, errors.join('\n')).toBe(1);
  expect(errors[0]?.split('\n').length).toBe(1);
  expect(errors[0]).toMatch(message);
}

describe('a bundle P/D decider: refused combinations and failures, one error line, exit 2', () => {
  it('without P/D pools', async () => {
    await refused(['--num-instances', '2', '--policy-config', TREE], /disaggregation policy of .*tree\.yaml needs prefill\/decode pools: set --prefill-instances/);
  });
  it('with --pd-prefix-threshold (which only the built-in reads)', async () => {
    await refused([...POOLS, '--pd-prefix-threshold', '64', '--policy-config', TREE], /--pd-prefix-threshold parameterizes --pd-decider prefix-threshold, but the disaggregation policy of .*replaces/);
  });
  it('a section without type, a misspelled feature', async () => {
    await refused([...POOLS, '--policy-config', file('nt.yaml', 'disaggregation:\n  template: prefix_threshold_disaggregation\n')], /nt\.yaml:2:\d+: .*needs `type: parameterized \| decision_tree \| code`/);
    await refused([...POOLS, '--policy-config', file('mf.yaml', 'disaggregation:\n  type: decision_tree\n  tree: {if: {feature: selected.uncachedTokenz, op: ">", value: 1}, then: {disaggregate: true}, else: {disaggregate: false}}\n')], /mf\.yaml:3:\d+: .*selected\.uncachedTokenz.*selected\.uncachedTokens/);
  });
  for (const engine of ['fast', 'strict']) {
    it(`a decider that throws or answers nonsense (${engine})`, async () => {
      const src = (body: string): string => file(`bad-${engine}-${body.length}.yaml`, `disaggregation:\n  type: code\n  engine: ${engine}\n  source: |\n    function decide(request, state) { ${body} }\n`);
      await refused([...POOLS, '--policy-config', src('if (request.inputTokens > 0) throw new Error("no decision"); return true;')], /disaggregation.*no decision/);
      await refused([...POOLS, '--policy-config', src('return 42;')], /disaggregation.*expected true, false or \{disaggregate/);
      await refused([...POOLS, '--policy-config', src('syntax error here')], /POLICY_CODE|syntax/i);
    });
  }
});
