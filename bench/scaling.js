// P/D disaggregation and autoscaling benchmarks (part of `npm run bench`): wall time, simulated requests per
// second and peak RSS, each compared with the monolithic scenario B of bench/run.js run alongside. Target: the
// cost per simulated request of each scenario is at most 1.5x B's. Best of --reps N (default 3) repetitions.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(path.join(tmpdir(), 'blis-bench-scaling-'));
const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];

const deployment = path.join(dir, 'deployment.yaml');
writeFileSync(deployment, `models:
  - name: meta-llama/llama-3.1-8b-instruct
    configurations:
      - name: llama
        hardware: H100
        tp: 1
        cost_per_gpu_hour: 4
        replicas: 2
        min_replicas: 1
        max_replicas: 12
autoscaler:
  policy: target-utilization
  interval_us: 10000000
  scale_down_stabilization_window_us: 60000000
  model_load_time: {distribution: uniform, min: 20, max: 40}
  warmup: {curve: exponential, duration_us: 30000000, initial_penalty: 1.5}
`);
const diurnal = path.join(dir, 'diurnal.yaml');
writeFileSync(diurnal, `version: "2"
seed: 42
aggregate_rate: 60
load_profile:
  segments:
    - {start_s: 0, end_s: 1200, kind: diurnal, period_s: 600, peak_at_s: 300, peak: 1.8, trough: 0.2}
clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 512, std_dev: 256, min: 2, max: 7000}}
    output_distribution: {type: gaussian, params: {mean: 512, std_dev: 256, min: 2, max: 7000}}
    prefix_group: sys
    prefix_length: 256
num_requests: 50000
horizon: 1200000000
`);

const SCENARIOS = [
  {
    id: 'B',
    what: 'monolithic reference: 50,000 requests, 8 instances, rate 120, weighted prefix-affinity:3,queue-depth:2,kv-utilization:2, prefix 256',
    args: ['run', ...MODEL, '--num-requests', '50000', '--rate', '120', '--num-instances', '8', '--routing-policy', 'weighted',
      '--routing-scorers', 'prefix-affinity:3,queue-depth:2,kv-utilization:2', '--prefix-tokens', '256'],
  },
  {
    id: 'PD',
    what: 'P/D: 50,000 requests, 2 prefill + 6 decode (the default workload is decode-heavy), --pd-decider always, rate 120, same routing and workload as B',
    args: ['run', ...MODEL, '--num-requests', '50000', '--rate', '120', '--num-instances', '8', '--prefill-instances', '2', '--decode-instances', '6',
      '--pd-decider', 'always', '--routing-policy', 'weighted', '--routing-scorers', 'prefix-affinity:3,queue-depth:2,kv-utilization:2', '--prefix-tokens', '256'],
  },
  {
    id: 'AS',
    what: 'autoscaled diurnal: 50,000 requests over 20 min (rate 12-108/s), 2-12 replicas, target-utilization every 10 s, load 20-40 s, warm-up',
    args: ['run', '--deployment', deployment, '--workload-spec', diurnal, '--routing-policy', 'weighted', '--routing-scorers', 'prefix-affinity:3,queue-depth:2,kv-utilization:2'],
  },
];

const repsArg = process.argv.indexOf('--reps');
const reps = repsArg > 0 ? Number(process.argv[repsArg + 1]) : 3;
const rows = [];
try {
  for (const s of SCENARIOS) {
    let best = null;
    for (let i = 0; i < reps; i++) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, [path.join(root, 'bench/child.js'), ...s.args], { stdio: ['ignore', 'ignore', 'inherit', 'pipe'], cwd: root });
      const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
      const rep = JSON.parse(r.output[3].toString());
      if (rep.code !== 0) throw new Error(`scenario ${s.id} failed with exit code ${rep.code}`);
      const m = { wallS, rssMiB: rep.maxRssKiB / 1024, reqPerS: rep.completed / wallS, completed: rep.completed, usPerReq: (wallS * 1e6) / Math.max(rep.completed, 1) };
      if (!best || m.wallS < best.wallS) best = { ...m, rssMiB: Math.max(m.rssMiB, best?.rssMiB ?? 0) };
    }
    rows.push({ scenario: s.id, what: s.what, ...best });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const base = rows.find((r) => r.scenario === 'B');
for (const r of rows) {
  const ratio = base ? r.usPerReq / base.usPerReq : NaN;
  r.costVsB = ratio;
  r.meetsTarget = r.scenario === 'B' || ratio <= 1.5;
  console.log(`(${r.scenario}) ${r.what}`);
  console.log(`    wall ${r.wallS.toFixed(3)} s | ${Math.round(r.reqPerS).toLocaleString('en-US')} simulated requests/s | peak RSS ${r.rssMiB.toFixed(1)} MiB | ${r.usPerReq.toFixed(1)} µs/request${r.scenario === 'B' ? '' : ` = ${ratio.toFixed(2)}x B (target <= 1.5x): ${r.meetsTarget ? 'met' : 'NOT met'}`}`);
}
console.log(JSON.stringify({ node: process.version, reps, results: rows }));
