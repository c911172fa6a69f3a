// `npm run bench` (or `node bench/large.js`): one run of 2,000,000 requests through the CLI, in its own process,
// reporting wall time, peak RSS and the run's cluster metrics. It shows that memory follows what an output needs:
// no per-request file is asked for, so none is built, and the workload is generated as the simulation reaches it.
// Heavy (minutes on a 2-core machine): skip it with BENCH_SKIP_LARGE=1; change the size with --requests N.
import { spawnSync } from 'node:child_process';
import { writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : def);
const requests = Number(arg('--requests', '2000000'));
const ARGS = [
  'run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-instances', '8',
  '--num-requests', String(requests), '--rate', '400',
  '--prompt-tokens', '64', '--prompt-tokens-stdev', '16', '--prompt-tokens-min', '8', '--prompt-tokens-max', '128',
  '--output-tokens', '16', '--output-tokens-stdev', '4', '--output-tokens-min', '1', '--output-tokens-max', '32',
  '--log', 'error',
];

if (process.argv.includes('--child')) {
  // In the measured process: run the CLI, then report peak RSS and the metrics on fd 3.
  const { main } = await import(path.join(root, 'dist/cli/main.js'));
  let out = '';
  const code = await main(ARGS, { stdout: (t) => void (out += t), warn: () => undefined, error: (t) => void process.stderr.write(`error: ${t}\n`) });
  const metrics = code === 0 ? JSON.parse(out).simulation_metrics : null;
  writeSync(3, JSON.stringify({ code, maxRssKiB: process.resourceUsage().maxRSS, metrics }));
  process.exitCode = code;
} else if (process.env.BENCH_SKIP_LARGE === '1') {
  console.log('(L) 2,000,000-request run skipped (BENCH_SKIP_LARGE=1)');
} else {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--requests', String(requests)], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'], cwd: root });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const rep = r.output[3] && r.output[3].length > 0 ? JSON.parse(r.output[3].toString()) : { code: r.status ?? r.signal };
  if (rep.code !== 0) throw new Error(`the ${requests.toLocaleString('en-US')}-request run failed (exit ${rep.code})`);
  const m = rep.metrics;
  console.log(`(L) ${requests.toLocaleString('en-US')} requests, 8 instances, rate 400, llama-3.1-8b H100 TP1, prompts ~64 and outputs ~16 tokens, JSON output, no per-request file`);
  console.log(`    wall ${wallS.toFixed(1)} s | ${Math.round(m.completed_requests / wallS).toLocaleString('en-US')} simulated requests/s | peak RSS ${(rep.maxRssKiB / 1024).toFixed(0)} MiB`);
  console.log(`    completed ${m.completed_requests} of ${m.injected_requests} | simulated ${m.vllm_estimated_duration_s.toFixed(1)} s | TTFT mean ${m.ttft_mean_ms.toFixed(2)} ms, p99 ${m.ttft_p99_ms.toFixed(2)} ms | E2E mean ${m.e2e_mean_ms.toFixed(2)} ms, p99 ${m.e2e_p99_ms.toFixed(2)} ms | ${m.tokens_per_sec.toFixed(0)} tokens/s`);
  console.log(JSON.stringify({ node: process.version, scenario: 'L', requests, wallS, rssMiB: rep.maxRssKiB / 1024, metrics: m }));
}
