// `npm run fidelity`: simulates each real vLLM v0.15.1 run in ../shared/groundtruth/inference-sim-training-default-args
// with its exact engine arguments and inference-perf workload, and prints predicted vs measured TTFT / ITL / E2E
// (mean, p90, p99) with the absolute percentage error per run and the median per metric. Nothing is fitted to these
// runs: the simulator uses its embedded defaults (trained-physics coefficients, auto KV sizing), as a user would.
// Writes the table to stdout (markdown) and, with --json FILE, the numbers as JSON.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { simulate } from '../dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const GT = path.resolve(root, '../shared/groundtruth/inference-sim-training-default-args/default_args');
if (!existsSync(GT)) {
  console.error(`fidelity: ground truth not found at ${GT} (it lives in the shared folder beside the checkout)`);
  process.exit(2);
}

const MODELS = {
  'llama-2-7b': 'meta-llama/llama-2-7b-hf',
  'llama-2-70b': 'meta-llama/llama-2-70b-hf',
  'llama-2-70b-hf': 'meta-llama/llama-2-70b-hf',
  'mixtral-8x7b-v0-1': 'mistralai/mixtral-8x7b-v0.1',
  'codellama-34b': 'codellama/codellama-34b-instruct-hf',
};

function specYaml(profile) {
  const sp = profile.data.shared_prefix;
  const stages = profile.load.stages.map((s) => `    - {rate: ${s.rate}, duration: ${s.duration}}`).join('\n');
  return [
    'version: "2"',
    'seed: 42',
    'inference_perf:',
    '  stages:',
    stages,
    '  shared_prefix:',
    `    num_unique_system_prompts: ${sp.num_unique_system_prompts}`,
    `    num_users_per_system_prompt: ${sp.num_users_per_system_prompt}`,
    `    system_prompt_len: ${sp.system_prompt_len}`,
    `    question_len: ${sp.question_len}`,
    `    output_len: ${sp.output_len}`,
    `    enable_multi_turn_chat: ${sp.enable_multi_turn_chat}`,
    '',
  ].join('\n');
}

const ape = (pred, real) => (real === 0 ? NaN : (Math.abs(pred - real) / real) * 100);
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const rows = [];
for (const dir of readdirSync(GT).sort()) {
  const m = /^\d+-\d+-(.+)-tp(\d+)-(\w+)$/.exec(dir);
  if (!m) continue;
  const [, modelKey, tp, workload] = m;
  const model = MODELS[modelKey];
  if (!model) throw new Error(`fidelity: no model mapping for ${dir}`);
  const profile = JSON.parse(readFileSync(path.join(GT, dir, 'profile.yaml'), 'utf8').split('\n').find((l) => l.trim().startsWith('{')));
  const summary = JSON.parse(readFileSync(path.join(GT, dir, 'results/summary_lifecycle_metrics.json'), 'utf8'));
  const lat = summary.successes.latency;
  const numRequests = Math.floor(profile.load.stages.reduce((a, s) => a + s.rate * s.duration, 0));
  const t0 = performance.now();
  const r = await simulate({
    mode: 'run', model, hardware: 'H100', tp: Number(tp),
    maxModelLen: 4096, maxNumBatchedTokens: 2048, maxNumSeqs: 128,
    numRequests, workloadSpec: 'profile.yaml', files: { 'profile.yaml': specYaml(profile) },
  });
  const wallS = (performance.now() - t0) / 1000;
  const s = r.metrics;
  const real = {
    ttft: [lat.time_to_first_token.mean, lat.time_to_first_token.p90, lat.time_to_first_token.p99].map((x) => x * 1000),
    itl: [lat.inter_token_latency.mean, lat.inter_token_latency.p90, lat.inter_token_latency.p99].map((x) => x * 1000),
    e2e: [lat.request_latency.mean, lat.request_latency.p90, lat.request_latency.p99].map((x) => x * 1000),
  };
  const pred = {
    ttft: [s.ttft_mean_ms, s.ttft_p90_ms, s.ttft_p99_ms],
    itl: [s.itl_mean_ms, s.itl_p90_ms, s.itl_p99_ms],
    e2e: [s.e2e_mean_ms, s.e2e_p90_ms, s.e2e_p99_ms],
  };
  const err = Object.fromEntries(Object.entries(pred).map(([k, v]) => [k, v.map((p, i) => ape(p, real[k][i]))]));
  rows.push({ run: dir, model, tp: Number(tp), workload, requests: numRequests, failures: summary.failures?.count ?? 0,
    completed: s.completed_requests, timedOut: s.timed_out_requests, real, pred, err, wallS });
  console.error(`${dir}: simulated in ${wallS.toFixed(1)} s`);
}

const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const lines = [];
lines.push('| run | real fail | sim t/o | TTFT mean ms real / sim (APE %) | TTFT p90 | TTFT p99 | ITL mean | ITL p90 | ITL p99 | E2E mean | E2E p90 | E2E p99 |');
lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const cell = (k, i) => `${f(r.real[k][i])} / ${f(r.pred[k][i])} (${f(r.err[k][i])})`;
  lines.push(`| ${r.run} | ${r.failures} | ${r.timedOut} | ${cell('ttft', 0)} | ${cell('ttft', 1)} | ${cell('ttft', 2)} | ${cell('itl', 0)} | ${cell('itl', 1)} | ${cell('itl', 2)} | ${cell('e2e', 0)} | ${cell('e2e', 1)} | ${cell('e2e', 2)} |`);
}
const med = (k, i, filter = () => true) => median(rows.filter(filter).map((r) => r.err[k][i]));
const notOverloaded = (r) => r.workload !== 'reasoning';
lines.push('');
lines.push('| median APE % | TTFT mean | TTFT p90 | TTFT p99 | ITL mean | ITL p90 | ITL p99 | E2E mean | E2E p90 | E2E p99 |');
lines.push('|---|---|---|---|---|---|---|---|---|---|');
for (const [label, filt] of [['all 16 runs', () => true], ['12 runs without the overloaded reasoning workload', notOverloaded]]) {
  lines.push(`| ${label} | ${['ttft', 'itl', 'e2e'].flatMap((k) => [0, 1, 2].map((i) => f(med(k, i, filt)))).join(' | ')} |`);
}
console.log(lines.join('\n'));
const jsonAt = process.argv.indexOf('--json');
if (jsonAt > 0) writeFileSync(process.argv[jsonAt + 1], JSON.stringify(rows, null, 2));
