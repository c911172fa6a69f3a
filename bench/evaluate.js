// `blis evaluate` throughput: evaluations per minute of a short scenario (500 requests, 4 instances, one seed)
// for a population of distinct candidates (so the result cache never answers), with a built-in policy (the
// reference's bundle keys: weighted routing with varied weights) and with a code policy (routing as JavaScript,
// fast engine), each with --workers 1 and --workers 2. The wall time is the whole `blis evaluate --population`
// process (start-up and worker start included). Target: >= 1,000 evaluations per minute with --workers 2 for
// the built-in policy. Last line: a JSON summary.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BLIS, argValue, fmtS, median, timedRun, verdict } from './lib.js';

const N = Number(argValue('candidates', '100'));
const reps = Number(argValue('eval-reps', '1'));

const SUITE = `name: bench-short
description: one short scenario, 500 requests on 4 instances
objectives:
  - {name: ttft_mean, metric: ttft_mean_ms, direction: minimize, weight: 1, normalization: {kind: ratio, target: 50}}
  - {name: attainment, metric: slo_attainment, direction: maximize, weight: 1, normalization: {kind: linear, best: 1, worst: 0}}
stage2:
  - name: short
    seeds: [1]
    config: {model: meta-llama/llama-3.1-8b-instruct, hardware: H100, tp: 1, numInstances: 4, numRequests: 500, rate: 60, prefixTokens: 256}
    slo: {default: {ttft_ms: 200}}
`;

const builtin = (i) => `routing:
  policy: weighted
  scorers:
    - {name: prefix-affinity, weight: 3}
    - {name: queue-depth, weight: 2}
    - {name: kv-utilization, weight: ${1 + i / N}}
`;

const code = (i) => `// least loaded, preferring cached prefixes (weight ${i})
function route(request, state) {
  let best = 0;
  let bestScore = -Infinity;
  for (let k = 0; k < state.instances.length; k++) {
    const x = state.instances[k];
    const score = ${1 + i / N} * x.cachedPrefixBlocks - x.queueDepth - x.batchSize / 4;
    if (score > bestScore) { bestScore = score; best = k; }
  }
  return best;
}
`;

const dir = mkdtempSync(path.join(tmpdir(), 'blis-bench-eval-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
writeFileSync(path.join(dir, 'suite.yaml'), SUITE);
for (const [kind, make, ext] of [['builtin', builtin, 'yaml'], ['code', code, 'js']]) {
  const d = path.join(dir, kind);
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d);
  for (let i = 0; i < N; i++) writeFileSync(path.join(d, `c${String(i).padStart(4, '0')}.${ext}`), make(i));
}

const rows = [];
for (const kind of ['builtin', 'code']) {
  for (const workers of [1, 2]) {
    const walls = [];
    const cpus = [];
    for (let r = 0; r < reps; r++) {
      const args = [BLIS, 'evaluate', '--population', path.join(dir, kind), '--suite', path.join(dir, 'suite.yaml'), '--workers', String(workers)];
      if (kind === 'code') args.push('--control-point', 'routing');
      const t = timedRun(process.execPath, args, { label: `evaluate ${kind}` });
      const doc = JSON.parse(t.stdout.toString());
      const failed = doc.candidates.filter((c) => c.error !== undefined);
      if (doc.candidates.length !== N || failed.length > 0) throw new Error(`evaluate ${kind}: ${failed.length} of ${doc.candidates.length} candidates failed: ${failed[0]?.error?.message}`);
      walls.push(t.wallS);
      cpus.push(t.cpuS);
    }
    const wallS = median(walls);
    const cpuS = median(cpus);
    const perMin = (N / wallS) * 60;
    const target = kind === 'builtin' && workers === 2 ? '>= 1,000/min' : null;
    // CPU time (all threads) per evaluation: what the figure would approach with `workers` idle cores.
    const cpuPerEval = cpuS === null ? null : cpuS / N;
    rows.push({ kind, workers, candidates: N, wallS, cpuS, cpuPerEvalS: cpuPerEval, perMinute: perMin, target, verdict: target === null ? null : verdict(perMin, perMin >= 1000) });
  }
}

console.log(`\n## \`blis evaluate\` throughput (${N} distinct candidates, one 500-request 4-instance scenario each)\n`);
console.log('| policy | workers | wall | evaluations/min | CPU per evaluation | target |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.kind === 'builtin' ? 'built-in (weighted, bundle keys)' : 'code (JavaScript routing, fast engine)'} | ${r.workers} | ${fmtS(r.wallS)} | ${Math.round(r.perMinute).toLocaleString('en-US')} | ${fmtS(r.cpuPerEvalS)} | ${r.target === null ? '' : `${r.target}: ${r.verdict}`} |`);
console.log(JSON.stringify(rows));
