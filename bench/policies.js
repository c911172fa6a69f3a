// Evolvable-policy benchmarks (part of `npm run bench`):
// (1) cost per routing call of each representation, in process, on an 8-instance router state;
// (2) the 8-instance, 10,000-request weighted scenario with routing as the built-in, a template, a tree and code
//     in each sandbox engine, each as a fresh process (best of --reps, default 3).
// Target: the fast code engine adds at most 25% wall time to the built-in run; the strict engine's figure is reported.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GoRand, Request, SloPriorityMap, parsePolicyBundle, preparePolicies, makeRoutingPolicy, routingSnapshot } from '../dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repsArg = process.argv.indexOf('--reps');
const reps = repsArg > 0 ? Number(process.argv[repsArg + 1]) : 3;

const WEIGHTED_JS = `
function clamp(v) { return v < 0 ? 0 : v > 1 ? 1 : v; }
function route(request, state) {
  const xs = state.instances, n = xs.length, total = [];
  for (let i = 0; i < n; i++) total.push(0);
  let min = Number.MAX_SAFE_INTEGER, max = 0;
  for (const x of xs) { if (x.cachedPrefixBlocks < min) min = x.cachedPrefixBlocks; if (x.cachedPrefixBlocks > max) max = x.cachedPrefixBlocks; }
  for (let i = 0; i < n; i++) total[i] = total[i] + clamp(max === min ? 1 : (xs[i].cachedPrefixBlocks - min) / (max - min)) * 0.5;
  min = Number.MAX_SAFE_INTEGER; max = 0;
  for (const x of xs) { if (x.queueDepth < min) min = x.queueDepth; if (x.queueDepth > max) max = x.queueDepth; }
  for (let i = 0; i < n; i++) total[i] = total[i] + clamp(max === min ? 1 : (max - xs[i].queueDepth) / (max - min)) * 0.25;
  for (let i = 0; i < n; i++) total[i] = total[i] + clamp(1 - xs[i].kvUtilization) * 0.25;
  let best = -1;
  for (const v of total) if (v > best) best = v;
  const tied = [];
  for (let i = 0; i < n; i++) if (total[i] === best) tied.push(i);
  return xs[tied.length > 1 ? tied[state.rng.intn(tied.length)] : tied[0]].id;
}`;

const indent = (s) => s.split('\n').map((l) => `    ${l}`).join('\n');
const BUNDLES = {
  template: 'routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters: {}\n',
  tree: 'routing:\n  type: decision_tree\n  tree:\n    route:\n      scorers: {precise-prefix-cache: 2, queue-depth: 1, kv-utilization: 1}\n',
  'code-fast': `routing:\n  type: code\n  engine: fast\n  source: |\n${indent(WEIGHTED_JS)}\n`,
  'code-strict': `routing:\n  type: code\n  engine: strict\n  source: |\n${indent(WEIGHTED_JS)}\n`,
};

// ---- (1) per-call cost ----
function ctx() {
  const g = new GoRand(7n);
  return { blockSize: 16, routerRng: g, rngFor: () => g, cachedBlocks: (id) => Number(id.slice(-1)) % 3, priorities: new SloPriorityMap() };
}
const snaps = Array.from({ length: 8 }, (_, i) => routingSnapshot(`instance_${i}`, { queueDepth: (i * 7) % 5, batchSize: 3 + (i % 4), kvUtilization: 0.1 * (i % 9), freeKVBlocks: 1000 - i * 50, inFlightRequests: i % 3 }));
const tokens = Int32Array.from({ length: 512 }, (_, k) => k % 1000);
const req = new Request('request_1', tokens, new Int32Array(64), 0);
const state = { snapshots: snaps, clock: 1_000_000 };

async function perCall(label, policy, calls) {
  for (let i = 0; i < Math.min(2000, calls); i++) policy.route(req, state);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) policy.route(req, state);
  const us = Number(process.hrtime.bigint() - t0) / 1e3 / calls;
  console.log(`    ${label.padEnd(12)} ${us.toFixed(2).padStart(8)} µs per routing call (8 instances, 512-token prompt)`);
  return us;
}

console.log('(P1) cost per routing call, in process');
const perCallUs = {};
perCallUs['built-in'] = await perCall('built-in', makeRoutingPolicy('weighted', { scorers: null, blockSize: 16, rng: new GoRand(7n), cachedBlocks: (id) => Number(id.slice(-1)) % 3 }), 50_000);
for (const [label, text] of Object.entries(BUNDLES)) {
  const prepared = await preparePolicies(parsePolicyBundle(text, `${label}.yaml`).evolvable);
  perCallUs[label] = await perCall(label, prepared.build(ctx()).routing, label === 'code-strict' ? 5_000 : 50_000);
}

// ---- (2) whole runs ----
const dir = mkdtempSync(path.join(tmpdir(), 'blis-bench-policies-'));
const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
const BASE = ['run', ...MODEL, '--num-requests', '10000', '--rate', '100', '--num-instances', '8', '--prefix-tokens', '256', '--output-format', 'reference'];
const variants = [['built-in', [...BASE, '--routing-policy', 'weighted']]];
for (const [label, text] of Object.entries(BUNDLES)) {
  const f = path.join(dir, `${label}.yaml`);
  writeFileSync(f, text);
  variants.push([label, [...BASE, '--policy-config', f]]);
}
console.log('(P2) 10,000 requests, 8 instances, rate 100, weighted routing (default profile), prefix 256');
const rows = [];
let base = null;
for (const [label, args] of variants) {
  let best = Infinity;
  let outText = null;
  for (let i = 0; i < reps; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [path.join(root, 'bin/blis.js'), ...args], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.status !== 0) throw new Error(`${label} failed: ${r.stderr}`);
    outText = r.stdout;
    best = Math.min(best, wall);
  }
  if (base === null) base = { wall: best, out: outText };
  const overhead = (best / base.wall - 1) * 100;
  const same = outText === base.out;
  rows.push({ routing: label, wallS: best, overheadPct: overhead, identicalOutput: same });
  const target = label === 'code-fast' ? ` | target <= 25%: ${overhead <= 25 ? 'met' : 'NOT met'}` : '';
  console.log(`    ${label.padEnd(12)} wall ${best.toFixed(3)} s | ${overhead >= 0 ? '+' : ''}${overhead.toFixed(1)}% vs built-in | output ${same ? 'identical' : 'DIFFERS'}${target}`);
}
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ node: process.version, reps, perCallUs, runs: rows }));
