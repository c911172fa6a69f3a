// `node bench/fit.js`: wall time of `blis calibrate --fit` on a 1,000-request trace (target: under a minute on
// 2 cores), and of corrected-physics against trained-physics on scenario A of bench/run.js (target: not slower).
// The trace is made by the simulator itself (a known profile answering a generated workload), so the run
// needs no server. Run `npm run build` first; take the best of --reps N (default 3) on an idle machine.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const blis = path.join(root, 'bin', 'blis.js');
const repsArg = process.argv.indexOf('--reps');
const reps = repsArg > 0 ? Number(process.argv[repsArg + 1]) : 3;
const dir = mkdtempSync(path.join(tmpdir(), 'blis-bench-fit-'));
const p = (f) => path.join(dir, f);

function cli(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [blis, ...args], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`blis ${args[0]} failed: ${r.stderr}`);
  return { wallS: Number(process.hrtime.bigint() - t0) / 1e9, stdout: r.stdout };
}

const engine = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
writeFileSync(p('truth.yaml'), 'kind: latency-profile\nversion: 1\nlatency_model: corrected-physics\ncoefficients: {compute: 1.3, kv_read: 1.2, step_us: 600, request_us: 15, frontend_us: 8000}\n');
writeFileSync(p('spec.yaml'), `version: "2"
seed: 9
aggregate_rate: 12
num_requests: 1000
clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: lognormal, params: {mu: 6, sigma: 0.9, min: 16, max: 4000}}
    output_distribution: {type: gaussian, params: {mean: 150, std_dev: 100, min: 2, max: 600}}
`);
cli(['run', ...engine, '--latency-profile', p('truth.yaml'), '--workload-spec', p('spec.yaml'), '--trace-output', p('gen')]);
cli(['replay', ...engine, '--latency-profile', p('truth.yaml'), '--trace-header', p('gen.yaml'), '--trace-data', p('gen.csv'), '--results-path', p('res.json')]);
const res = new Map(JSON.parse(readFileSync(p('res.json'), 'utf8')).map((r) => [r.request_id, r]));
const lines = readFileSync(p('gen.csv'), 'utf8').trimEnd().split('\n');
const cols = lines[0].split(',');
const at = (name) => cols.indexOf(name);
const observed = [lines[0], ...lines.slice(1).map((l) => {
  const f = l.split(',');
  const r = res.get(Number(f[at('request_id')]));
  const send = Number(f[at('arrival_time_us')]);
  f[at('send_time_us')] = String(send);
  f[at('first_chunk_time_us')] = String(send + r.ttft_us);
  f[at('last_chunk_time_us')] = String(send + r.e2e_us);
  f[at('status')] = 'ok';
  return f.join(',');
})];
writeFileSync(p('obs.csv'), `${observed.join('\n')}\n`);

let fitBest = Infinity;
let report = null;
for (let i = 0; i < reps; i++) {
  const r = cli(['calibrate', '--fit', ...engine, '--trace-header', p('gen.yaml'), '--trace-data', p('obs.csv'), '--profile-out', p('fit.yaml')]);
  fitBest = Math.min(fitBest, r.wallS);
  report = JSON.parse(r.stdout);
}
console.log(`calibrate --fit, ${observed.length - 1} requests: best wall ${fitBest.toFixed(2)} s (target < 60 s: ${fitBest < 60 ? 'met' : 'NOT met'}); ${report.iterations} iterations, held-out TTFT/ITL MAPE ${report.held_out.ttft_mape_pct}% / ${report.held_out.itl_mape_pct}%`);

const scenarioA = ['run', ...engine, '--num-requests', '10000', '--rate', '25'];
const best = {};
for (let i = 0; i < reps; i++) {
  for (const [name, extra] of [['trained-physics', []], ['corrected-physics', ['--latency-model', 'corrected-physics']], ['fitted profile', ['--latency-profile', p('fit.yaml')]]]) {
    best[name] = Math.min(best[name] ?? Infinity, cli([...scenarioA, ...extra]).wallS);
  }
}
for (const [name, s] of Object.entries(best)) console.log(`scenario A (10,000 requests, rate 25) with ${name}: best wall ${s.toFixed(3)} s${name === 'trained-physics' ? '' : ` (${(s / best['trained-physics']).toFixed(2)}× trained-physics)`}`);
