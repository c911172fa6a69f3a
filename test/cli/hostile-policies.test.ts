/**
 * The memory, time and stack attacks of issue 27 as sweep points, in both sandbox engines, through `blis sweep`
 * in this thread (--workers 1) and on the pool (--workers 2): every point ends in its row within the sweep's time
 * bound (the child is killed past it), each attack with the failure its engine's accounting gives, and the two
 * runs write byte-identical rows — including the recursion-depth probes, whose depth once depended on the host
 * thread's stack (a different sweep with --workers 1 and --workers 2).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLIS, ensureBuilt } from '../io/processes.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
/** A sweep of ~20 short points takes a few seconds; an attack that escaped its accounting takes tens of seconds or minutes. */
const SWEEP_BOUND_MS = 90_000;

const bundle = (engine: 'fast' | 'strict', source: string): string =>
  `routing:\n  type: code\n  engine: ${engine}\n  source: |\n${source.split('\n').map((l) => `    ${l}`).join('\n')}\n`;

/** name -> [engine, source, the row's error (a regexp on `code: message`), or 'ok']. */
const ATTACKS: Record<string, ['fast' | 'strict', string, RegExp | 'ok']> = {
  // Stack: a depth probe caught and used to route; a native recursion overflowing the host stack; a bounded recursion.
  'depth-probe-fast': ['fast', 'let d = 0;\nfunction probe() { d++; probe(); }\nfunction route(request, state) {\n  d = 0;\n  try { probe(); } catch (e) {}\n  return state.instances[d % state.instances.length].id;\n}', /SANDBOX_STACK/],
  'depth-probe-strict': ['strict', 'let d = 0;\nfunction probe() { d++; probe(); }\nfunction route(request, state) {\n  d = 0;\n  try { probe(); } catch (e) {}\n  return state.instances[d % state.instances.length].id;\n}', /SANDBOX_STACK|SANDBOX_BUDGET|^ok$/],
  'depth-native-fast': ['fast', 'function route(request, state) {\n  let v = [];\n  for (let i = 0; i < 200000; i++) v = [v];\n  let n = 0;\n  try { n = JSON.stringify(v).length; } catch (e) { n = 1; }\n  return state.instances[n % state.instances.length].id;\n}', /SANDBOX_STACK/],
  'depth-bounded-fast': ['fast', 'function r(n) { return n === 0 ? 0 : 1 + r(n - 1); }\nfunction route(request, state) { return state.instances[r(300) % state.instances.length].id; }', 'ok'],
  'depth-bounded-strict': ['strict', 'function r(n) { return n === 0 ? 0 : 1 + r(n - 1); }\nfunction route(request, state) { return state.instances[r(300) % state.instances.length].id; }', 'ok'],
  // Memory: the array constructor by another route, per call.
  'array-ctor-fast': ['fast', 'function route(request, state) { return state.instances[new ([].constructor)(3.2e7).length % 2].id; }', /SANDBOX_MEMORY/],
  'array-ctor-strict': ['strict', 'function route(request, state) { return state.instances[new ([].constructor)(3.2e7).fill(0).length % 2].id; }', /SANDBOX_MEMORY|SANDBOX_BUDGET/],
  // Time: BigInt, rope sorting, descriptor maps.
  'bigint-shift-strict': ['strict', 'function route(request, state) { return state.instances[String(1n << 200000000n).length % 2].id; }', /SANDBOX_MEMORY|SANDBOX_BUDGET/],
  'bigint-square-strict': ['strict', 'function route(request, state) { let x = 3n; for (let i = 0; i < 40; i++) x = x * x; return state.instances[Number(x % 2n)].id; }', /SANDBOX_MEMORY|SANDBOX_BUDGET/],
  'rope-sort-fast': ['fast', 'function route(request, state) {\n  let a = "ab", b = "ba", c = "ca";\n  for (let i = 0; i < 28; i++) { a = a + a; b = b + b; c = c + c; }\n  return state.instances[[a, b, c].sort().length % 2].id;\n}', /SANDBOX_MEMORY/],
  'rope-sort-strict': ['strict', 'function route(request, state) {\n  let a = "ab", b = "ba", c = "ca";\n  for (let i = 0; i < 28; i++) { a = a + a; b = b + b; c = c + c; }\n  return state.instances[[a, b, c].sort().length % 2].id;\n}', /SANDBOX_MEMORY|SANDBOX_BUDGET/],
  'descriptors-fast': ['fast', 'function route(request, state) {\n  const d = new Array(500000).fill({ value: 1 });\n  return state.instances[Object.keys(Object.create(null, d)).length % 2].id;\n}', /SANDBOX_MEMORY|SANDBOX_BUDGET/],
  // QuickJS builds the 500k properties within its budget and heap: contained, and the run finishes.
  'descriptors-strict': ['strict', 'function route(request, state) {\n  const d = new Array(500000).fill({ value: 1 });\n  return state.instances[Object.keys(Object.create(null, d)).length % 2].id;\n}', /SANDBOX_MEMORY|SANDBOX_BUDGET|^ok$/],
};

let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(tmpdir(), 'blis-hostile-'));
  for (const [name, [engine, source]] of Object.entries(ATTACKS)) writeFileSync(path.join(dir, `${name}.yaml`), bundle(engine, source));
  writeFileSync(path.join(dir, 'bigint-fast.yaml'), bundle('fast', 'function route(request, state) { return state.instances[String(1n << 200000000n).length % 2].id; }'));
  writeFileSync(path.join(dir, 'bigint-sweep.yaml'), `base: {model: ${MODEL}, numRequests: 20, rate: 20, numInstances: 2}\naxes:\n  policyConfig: [depth-bounded-fast.yaml, bigint-fast.yaml]\n`);
  writeFileSync(path.join(dir, 'sweep.yaml'), `base: {model: ${MODEL}, numRequests: 8, rate: 20, numInstances: 2, seed: 1}\naxes:\n  policyConfig: [${Object.keys(ATTACKS).map((n) => `${n}.yaml`).join(', ')}]\n`);
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sweep(workers: number): { rows: string; stderr: string } {
  const out = `w${workers}.jsonl`;
  const r = spawnSync(process.execPath, [BLIS, 'sweep', 'sweep.yaml', '--workers', String(workers), '--output', out], { cwd: dir, encoding: 'utf8', timeout: SWEEP_BOUND_MS, killSignal: 'SIGKILL' });
  expect(r.signal, `sweep --workers ${workers} was killed at its ${SWEEP_BOUND_MS} ms bound (an attack escaped its accounting?): ${r.stderr}`).toBeNull();
  expect(r.status, r.stderr).toBe(0);
  return { rows: readFileSync(path.join(dir, out), 'utf8'), stderr: r.stderr };
}

describe('issue 27 attacks as sweep points, both engines, in this thread and on the pool', () => {
  it('each point ends in its row with its engine\'s failure; --workers 1 and --workers 2 write the same bytes (depth probes included)', () => {
    const one = sweep(1);
    const two = sweep(2);
    const rows = one.rows.trim().split('\n').map((l) => JSON.parse(l) as { params: { policyConfig: string }; metrics: Record<string, number>; error?: { code: string; message: string } });
    expect(rows.map((r) => r.params.policyConfig)).toEqual(Object.keys(ATTACKS).map((n) => `${n}.yaml`));
    for (const row of rows) {
      const name = row.params.policyConfig.replace(/\.yaml$/, '');
      const want = ATTACKS[name]![2];
      const got = row.error === undefined ? 'ok' : `${row.error.code}: ${row.error.message}`;
      if (want === 'ok') expect(got, name).toBe('ok');
      else expect(got, name).toMatch(want);
      expect(got, name).not.toMatch(/^(INTERNAL|EVAL_WORKER_DIED|EVAL_TIMEOUT)/);
      if (got !== 'ok') expect(row.metrics, name).toEqual({});
    }
    expect(two.rows).toBe(one.rows);
  }, 2 * SWEEP_BOUND_MS + 30_000);

  it('fast-engine BigInt (String(1n << 200000000n) ran 32 s) is refused when the sweep is checked, before any point runs', () => {
    const r = spawnSync(process.execPath, [BLIS, 'sweep', 'bigint-sweep.yaml', '--workers', '2'], { cwd: dir, encoding: 'utf8', timeout: SWEEP_BOUND_MS, killSignal: 'SIGKILL' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: bigint-sweep\.yaml:3:\d+: axes\.policyConfig\[1\]: point 2 of 2 \(policyConfig=bigint-fast\.yaml\) is not a valid configuration: .*forbidden: a BigInt literal .*nothing was run\n$/);
  }, SWEEP_BOUND_MS + 10_000);
});
