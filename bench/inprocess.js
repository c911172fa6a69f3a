// The short evaluation (500 requests, 4 instances, weighted, as scenario S) as repeated in-process simulate()
// calls: --warmup calls (default 10), then --calls timed ones (default 40); reports the median and p90 per call.
// Target: median <= 25 ms after warm-up. Works whether simulate() returns a result or a promise of one.
// CPU per call (this process's user+system time, all threads) is printed beside the wall figures: on a shared
// machine it is what load disturbs least.
// Last line: a JSON summary.
import { argValue, fmtS, median, verdict } from './lib.js';
import { simulate } from '../dist/index.js';

const warmup = Number(argValue('warmup', '10'));
const calls = Number(argValue('calls', '40'));
const config = {
  mode: 'run',
  model: 'meta-llama/llama-3.1-8b-instruct',
  hardware: 'H100',
  tp: 1,
  numRequests: 500,
  rate: 60,
  numInstances: 4,
  routingPolicy: 'weighted',
  routingScorers: 'prefix-affinity:3,queue-depth:2,kv-utilization:2',
  prefixTokens: 256,
};

let first = null;
const times = [];
const cpus = [];
for (let i = 0; i < warmup + calls; i++) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = await simulate(config);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  if (i >= warmup) cpus.push((c.user + c.system) / 1e6);
  if (first === null) first = r.referenceText;
  else if (r.referenceText !== first) throw new Error('simulate() gave different results for the same config');
  if (i >= warmup) times.push(s);
}
times.sort((a, b) => a - b);
const med = median(times);
const p90 = times[Math.min(times.length - 1, Math.floor(times.length * 0.9))];
const cpuMed = median(cpus);
const row = { warmup, calls, medianS: med, p90S: p90, minS: times[0], cpuMedianS: cpuMed, target: '<= 25 ms', verdict: verdict(med, med <= 0.025) };
console.log('\n## In-process short evaluations (simulate(), 500 requests, 4 instances)\n');
console.log('| calls after warm-up | median | p90 | min | median CPU | target |');
console.log('|---|---|---|---|---|---|');
console.log(`| ${calls} (after ${warmup}) | ${fmtS(med)} | ${fmtS(p90)} | ${fmtS(times[0])} | ${fmtS(cpuMed)} | <= 25 ms: ${row.verdict} |`);
console.log(JSON.stringify(row));
