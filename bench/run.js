// `npm run bench` (after a build): the simulator's speed, side by side with the reference when it is given.
//
//   BLIS_REF=/path/to/blis node bench/run.js [--reps N] [--only A,B,...] [--scaling-reps N] [--skip scaling,...]
//
// With BLIS_REF (the reference binary, built with ../shared/tools/build-reference.sh; it runs in its own
// folder, which must hold its defaults.yaml and model_configs/), every scenario runs as paired, alternating
// processes — blis-ts then the reference, then the other way round — both printing the reference's text format,
// whose bytes must be identical. It reports the median wall time, CPU time and peak RSS of each side and the
// median of the paired speed-ups. Without BLIS_REF the ratios are "not measured", and so is every target that
// needs one. Times vary with machine load: on a shared machine, compare the CPU columns and re-run.
//
// Sections: the scenarios (A, B, B', C, S), the scaling row (cost per request at 10k, 50k and 200k requests,
// blis-ts only), start-up (bench/startup.js), in-process short evaluations (bench/inprocess.js) and `blis
// evaluate` throughput (bench/evaluate.js). A JSON document with every figure closes the output.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { BLIS, ROOT, argValue, fmtMiB, fmtS, fmtX, median, timedRun, verdict } from './lib.js';
import os from 'node:os';

const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
const WEIGHTED = ['--routing-policy', 'weighted', '--routing-scorers', 'prefix-affinity:3,queue-depth:2,kv-utilization:2', '--prefix-tokens', '256'];
const cluster = (n, instances, rate) => [...MODEL, '--num-requests', String(n), '--rate', String(rate), '--num-instances', String(instances), ...WEIGHTED];

const SCENARIOS = [
  { id: 'A', what: '10,000 requests, 1 instance, rate 25 (trained-physics, default workload)', args: [...MODEL, '--num-requests', '10000', '--rate', '25'], minRatio: 30 },
  { id: 'B', what: '50,000 requests, 8 instances, rate 120, weighted prefix-affinity:3,queue-depth:2,kv-utilization:2, prefix 256', args: cluster(50_000, 8, 120), minRatio: 60, maxReps: 1 },
  { id: "B'", what: '10,000 requests, 8 instances, same cluster as B', args: cluster(10_000, 8, 120), minRatio: 40 },
  {
    id: 'C',
    what: '300 requests, roofline, golden configuration 0',
    args: [...MODEL, '--latency-model', 'roofline', '--num-requests', '300', '--rate', '10', '--prefix-tokens', '284', '--prompt-tokens', '70', '--prompt-tokens-stdev', '35',
      '--prompt-tokens-min', '2', '--prompt-tokens-max', '200', '--output-tokens', '215', '--output-tokens-stdev', '80', '--output-tokens-min', '1', '--output-tokens-max', '512',
      '--total-kv-blocks', '7463', '--max-model-len', '4096'],
    maxWallS: 0.3,
  },
  { id: 'S', what: 'short evaluation: 500 requests, 4 instances, rate 60, weighted (as B), one process', args: cluster(500, 4, 60), maxWallS: 0.3 },
  // Informational, blis-ts only (the reference has neither option): compare T with A for the sampling cost
  // (under 10% expected); R's wall time includes rendering the HTML report (its 5 MB limit is tested in test/report/).
  { id: 'T', what: 'scenario A sampled every 100 ms of simulated time (--timeseries-interval-us 100000, 7,000 rows)', args: [...MODEL, '--num-requests', '10000', '--rate', '25', '--timeseries-interval-us', '100000'], tsOnly: true },
  {
    id: 'R',
    what: '50,000 requests, 4 instances, rate 120, least-loaded, with --report (HTML report rendered with Vega-Lite)',
    args: [...MODEL, '--num-requests', '50000', '--rate', '120', '--num-instances', '4', '--routing-policy', 'least-loaded', '--report', path.join(os.tmpdir(), 'blis-bench-report.html')],
    tsOnly: true,
    maxReps: 1,
  },
];

const ref = process.env.BLIS_REF ? path.resolve(process.env.BLIS_REF) : null;
if (ref !== null && !existsSync(ref)) throw new Error(`BLIS_REF=${ref} does not exist`);
const reps = Number(argValue('reps', '3'));
const only = argValue('only', null)?.split(',') ?? null;
const skip = argValue('skip', '').split(',');
const results = { node: process.version, reference: ref, reps, scenarios: [], scaling: null, startup: null, inProcess: null, evaluate: null };

function runTs(args) {
  return timedRun(process.execPath, [BLIS, 'run', ...args, '--output-format', 'reference', '--log', 'error'], { label: 'blis-ts' });
}
function runRef(args) {
  return timedRun(ref, ['run', ...args, '--log', 'error'], { cwd: path.dirname(ref), label: 'reference' });
}

for (const s of SCENARIOS) {
  if (only !== null && !only.includes(s.id)) continue;
  const n = Math.max(1, Math.min(reps, s.maxReps ?? reps));
  const ts = [];
  const rf = [];
  const ratios = [];
  const cpuRatios = [];
  const paired = ref !== null && !s.tsOnly;
  let identical = paired ? true : null;
  for (let i = 0; i < n; i++) {
    // Alternate which side goes first, so drifting machine load hits both alike.
    const pair = ref === null || s.tsOnly ? [runTs(s.args), null] : i % 2 === 0 ? [runTs(s.args), runRef(s.args)] : (([r, t]) => [t, r])([runRef(s.args), runTs(s.args)]);
    const [t, r] = pair;
    ts.push(t);
    if (r !== null) {
      rf.push(r);
      ratios.push(r.wallS / t.wallS);
      if (r.cpuS !== null && t.cpuS > 0) cpuRatios.push(r.cpuS / t.cpuS);
      if (!r.stdout.equals(t.stdout)) identical = false;
    }
    process.stderr.write(`  ${s.id} rep ${i + 1}/${n}: blis-ts ${fmtS(t.wallS)}${r ? `, reference ${fmtS(r.wallS)}` : ''}\n`);
  }
  const row = {
    id: s.id,
    what: s.what,
    reps: n,
    ts: { wallS: median(ts.map((x) => x.wallS)), cpuS: median(ts.map((x) => x.cpuS)), rssMiB: median(ts.map((x) => x.rssMiB)) },
    ref: !paired ? null : { wallS: median(rf.map((x) => x.wallS)), cpuS: median(rf.map((x) => x.cpuS)), rssMiB: median(rf.map((x) => x.rssMiB)) },
    speedup: !paired ? null : median(ratios),
    cpuSpeedup: !paired ? null : median(cpuRatios),
    identicalOutputs: identical,
  };
  if (s.minRatio !== undefined) {
    // A speed-up only counts with byte-identical outputs.
    row.target = `>= ${s.minRatio}x the reference`;
    row.verdict = identical === false ? 'NOT met (outputs differ)' : verdict(row.speedup, row.speedup >= s.minRatio);
  } else if (s.tsOnly) {
    row.target = 'informational';
    row.verdict = '';
  } else {
    row.target = `<= ${s.maxWallS} s`;
    row.verdict = verdict(row.ts.wallS, row.ts.wallS <= s.maxWallS);
  }
  results.scenarios.push(row);
}

if (results.scenarios.length > 0) {
  console.log('\n## Scenarios (medians; speed-up = median of paired reference/blis-ts wall ratios)\n');
  console.log('| scenario | blis-ts wall | CPU | peak RSS | reference wall | CPU | peak RSS | speed-up (CPU) | outputs | target | verdict |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results.scenarios) {
    const rf = r.ref ?? { wallS: null, cpuS: null, rssMiB: null };
    const sp = r.speedup === null ? (r.target === 'informational' ? 'blis-ts only' : 'not measured') : `${fmtX(r.speedup)} (${fmtX(r.cpuSpeedup)})`;
    const out = r.identicalOutputs === null ? 'not compared' : r.identicalOutputs ? 'identical' : 'DIFFER';
    console.log(`| ${r.id}: ${r.what} | ${fmtS(r.ts.wallS)} | ${fmtS(r.ts.cpuS)} | ${fmtMiB(r.ts.rssMiB)} | ${fmtS(rf.wallS)} | ${fmtS(rf.cpuS)} | ${fmtMiB(rf.rssMiB)} | ${sp} | ${out} | ${r.target} | ${r.verdict} |`);
  }
}

// ---- scaling: cost per request as the run grows (blis-ts only: the reference needs ~25 min for 200k) ----
if (!skip.includes('scaling') && (only === null || only.includes('scaling'))) {
  const sreps = Number(argValue('scaling-reps', '1'));
  const rows = [];
  for (const n of [10_000, 50_000, 200_000]) {
    const runs = [];
    for (let i = 0; i < sreps; i++) runs.push(runTs(cluster(n, 8, 120)));
    const wallS = median(runs.map((x) => x.wallS));
    const cpuS = median(runs.map((x) => x.cpuS));
    const rssMiB = median(runs.map((x) => x.rssMiB));
    rows.push({ n, wallS, cpuS, rssMiB, usPerRequest: (wallS / n) * 1e6, cpuUsPerRequest: cpuS === null ? null : (cpuS / n) * 1e6, kibPerRequest: rssMiB === null ? null : (rssMiB * 1024) / n });
    process.stderr.write(`  scaling ${n}: ${fmtS(wallS)}\n`);
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  // CPU time when measured: it is what load on a shared machine disturbs least.
  const key = first.cpuUsPerRequest !== null ? 'cpuUsPerRequest' : 'usPerRequest';
  const growth = last[key] / first[key];
  results.scaling = { rows, basis: key, growth, target: 'cost per request at 200k within 15% of 10k', verdict: verdict(growth, growth <= 1.15) };
  console.log('\n## Scaling (8 instances, rate 120, weighted as B; blis-ts only)\n');
  console.log('| requests | wall | CPU | µs/request (wall) | µs/request (CPU) | peak RSS | KiB/request |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.n.toLocaleString('en-US')} | ${fmtS(r.wallS)} | ${fmtS(r.cpuS)} | ${r.usPerRequest.toFixed(1)} | ${r.cpuUsPerRequest?.toFixed(1) ?? 'n/a'} | ${fmtMiB(r.rssMiB)} | ${r.kibPerRequest?.toFixed(1) ?? 'n/a'} |`);
  console.log(`\ncost per request at 200k / at 10k (${key === 'cpuUsPerRequest' ? 'CPU' : 'wall'}): ${growth.toFixed(3)} (target <= 1.15: ${results.scaling.verdict})`);
}

// ---- the other sections run in their own processes (fresh heaps) and print their own tables ----
for (const [name, file] of [['startup', 'startup.js'], ['inprocess', 'inprocess.js'], ['evaluate', 'evaluate.js']]) {
  if (skip.includes(name) || (only !== null && !only.includes(name))) continue;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', file), ...process.argv.slice(2)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const text = r.stdout.toString();
  const lines = text.trimEnd().split('\n');
  process.stdout.write(`${lines.slice(0, -1).join('\n')}\n`);
  if (r.status !== 0) throw new Error(`bench/${file} failed`);
  results[name === 'inprocess' ? 'inProcess' : name] = JSON.parse(lines[lines.length - 1]);
}

console.log(`\n${JSON.stringify(results)}`);
