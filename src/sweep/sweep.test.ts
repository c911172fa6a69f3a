/**
 * The sweep layer without a queue: sweep files (points, order, located errors), job content addresses, rows,
 * the summary (hand-computed), and local execution in this thread and on the pool giving the same outcomes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BlisError } from '../domain/errors.js';
import { ensureBuilt, ROOT } from '../../test/io/processes.js';
import { loadSweep, MAX_POINTS } from './file.js';
import { canonicalJson, jobId, simulationJob } from './jobs.js';
import { LocalRunner } from './local.js';
import runPoint from './worker.js';
import { gridPoints, samplePoints, withSeeds } from './points.js';
import { buildRows, rowsCsv, rowsJsonl } from './rows.js';
import { summarize } from './summary.js';
import type { JobOutcome, SweepRow } from './types.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const SPEC = 'version: "2"\nseed: 1\naggregate_rate: 20\nnum_requests: 30\nclients: [{id: c, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 100}}, output_distribution: {type: constant, params: {value: 20}}}]\n';
const noFiles = { readText: (p: string): string => {
  throw new BlisError('io', `cannot read ${p}`);
} };

async function sweepError(text: string, env = noFiles): Promise<string> {
  try {
    await loadSweep(text, 'sw.yaml', env);
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return (e as Error).message;
  }
  throw new Error('no error');
}

describe('points', () => {
  it('grid: the first axis outermost, seeds innermost, values and their sources', () => {
    const g = withSeeds(gridPoints([['a', [1, 2]], ['b', ['x', 'y', 'z']]]), [7, 8]);
    expect(g.map((p) => p.params)).toEqual([
      { a: 1, b: 'x', seed: 7 }, { a: 1, b: 'x', seed: 8 }, { a: 1, b: 'y', seed: 7 }, { a: 1, b: 'y', seed: 8 }, { a: 1, b: 'z', seed: 7 }, { a: 1, b: 'z', seed: 8 },
      { a: 2, b: 'x', seed: 7 }, { a: 2, b: 'x', seed: 8 }, { a: 2, b: 'y', seed: 7 }, { a: 2, b: 'y', seed: 8 }, { a: 2, b: 'z', seed: 7 }, { a: 2, b: 'z', seed: 8 },
    ]);
    expect(g[11]?.sources).toEqual([{ from: 'axes', key: 'a', index: 1 }, { from: 'axes', key: 'b', index: 2 }, { from: 'seeds', key: 'seed', index: 1 }]);
    expect(gridPoints([])).toEqual([{ params: {}, sources: [] }]);
  });
  it('samples: seeded, in range, integers for integer options, choices from lists', () => {
    const ranges = [['rate', { min: 5, max: 20, log: false }], ['n', { min: 1, max: 4, log: false }], ['p', { choices: ['a', 'b'] }], ['l', { min: 1, max: 1000, log: true }]] as const;
    const isInt = (k: string): boolean => k === 'n';
    const a = samplePoints(200, 3, ranges, isInt);
    expect(samplePoints(200, 3, ranges, isInt)).toEqual(a);
    expect(samplePoints(200, 4, ranges, isInt)).not.toEqual(a);
    const rates = a.map((p) => p.params['rate'] as number);
    const ns = a.map((p) => p.params['n'] as number);
    const logs = a.map((p) => p.params['l'] as number);
    expect(Math.min(...rates)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...rates)).toBeLessThan(20);
    expect(new Set(ns)).toEqual(new Set([1, 2, 3, 4]));
    expect(new Set(a.map((p) => p.params['p']))).toEqual(new Set(['a', 'b']));
    expect(Math.min(...logs)).toBeGreaterThanOrEqual(1);
    // log-uniform over [1, 1000]: about a third of the draws below 10 (a uniform draw would give 1%)
    expect(logs.filter((x) => x < 10).length).toBeGreaterThan(40);
  });
});

describe('sweep files', () => {
  it('expands the example of the issue: base, grid, seeds, objectives; params and configs', async () => {
    const plan = await loadSweep(`base: {model: ${MODEL}, numRequests: 200, rate: 10}
axes: {numInstances: [1, 2], routingPolicy: [round-robin, least-loaded]}
seeds: [1, 2]
objectives: {ttft_p99_ms: minimize, responses_per_sec: maximize}
`, 'sw.yaml', noFiles);
    expect(plan.points).toHaveLength(8);
    expect(plan.params).toEqual(['numInstances', 'routingPolicy', 'seed']);
    expect(plan.points[3]?.params).toEqual({ numInstances: 1, routingPolicy: 'least-loaded', seed: 2 });
    expect(plan.points[3]?.config).toEqual({ mode: 'run', model: MODEL, numRequests: 200, rate: 10, numInstances: 1, routingPolicy: 'least-loaded', seed: 2 });
    expect(plan.objectives).toEqual([{ metric: 'ttft_p99_ms', direction: 'minimize' }, { metric: 'responses_per_sec', direction: 'maximize' }]);
    expect(plan.defaultObjectives).toBe(false);
  });
  it('reads the files the options name once, and each point carries the ones it uses', async () => {
    const reads: string[] = [];
    const env = { readText: (p: string): string => {
      reads.push(p);
      if (p === 'spec.yaml') return SPEC;
      throw new BlisError('io', `cannot read ${p}`);
    } };
    const plan = await loadSweep(`{"base": {"model": "${MODEL}", "workloadSpec": "spec.yaml"}, "axes": {"numInstances": [1, 2, 3]}}`, 'sw.json', env);
    expect(reads).toEqual(['spec.yaml']);
    expect(plan.points.map((p) => p.config['files'])).toEqual([{ 'spec.yaml': SPEC }, { 'spec.yaml': SPEC }, { 'spec.yaml': SPEC }]);
  });
  it('bad files: one error at file:line:col naming the key or value and the fix', async () => {
    expect(await sweepError(`base: {model: ${MODEL}}\naxes: {numInstance: [1, 2]}\n`)).toMatch(/^sw\.yaml:2:8: axes\.numInstance: unknown configuration key .*did you mean numInstances\?/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes:\n  rate: []\n`)).toMatch(/^sw\.yaml:3:9: axes\.rate: an empty list/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes:\n  numInstances: [1, 0]\n  routingPolicy: [round-robin]\n`)).toMatch(/^sw\.yaml:3:21: axes\.numInstances\[1\]: point 2 of 2 \(numInstances=0, routingPolicy=round-robin\) is not a valid configuration: .*num-instances/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes: {routingPolicy: [round-robin, fancy]}\n`)).toMatch(/^sw\.yaml:2:37: axes\.routingPolicy\[1\]: .*unknown routing policy "fancy"/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes: {numInstances: [1, two]}\n`)).toMatch(/^sw\.yaml:2:26: axes\.numInstances\[1\]: .*expected number/);
    expect(await sweepError(`base: {model: ${MODEL}, rate: -1}\n`)).toMatch(/^sw\.yaml:1:55: base\.rate: point 1 of 1 \(the base configuration\)/);
    expect(await sweepError(`base: {model: ${MODEL}, workloadSpec: gone.yaml}\n`)).toMatch(/^sw\.yaml:1:63: base\.workloadSpec: .*cannot read gone\.yaml/);
    expect(await sweepError(`axis: {rate: [1]}\n`)).toMatch(/^sw\.yaml:1:1: axis: unknown key; did you mean axes\?/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes: {rate: [1]}\nsample: {n: 2, ranges: {rate: {min: 1, max: 2}}}\n`)).toMatch(/^sw\.yaml:3:1: sample: both axes: and sample:/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes: {seed: [1]}\nseeds: [1, 2]\n`)).toMatch(/^sw\.yaml:2:8: axes\.seed: seed is varied twice/);
    expect(await sweepError(`base: {model: ${MODEL}, metricsPath: m.json}\n`)).toMatch(/^sw\.yaml:1:49: base\.metricsPath: metricsPath names an output file/);
    expect(await sweepError(`base: {model: ${MODEL}}\nobjectives: {ttft_p99: minimize}\n`)).toMatch(/^sw\.yaml:2:14: objectives\.ttft_p99: unknown metric "ttft_p99"; did you mean ttft_p99_ms\?/);
    expect(await sweepError(`base: {model: ${MODEL}}\nsample: {n: 3, ranges: {routingPolicy: {min: 1, max: 2}}}\n`)).toMatch(/^sw\.yaml:2:40: sample\.ranges\.routingPolicy: a \{min, max\} range needs a numeric option/);
    expect(await sweepError(`base: {model: ${MODEL}}\nsample: {n: 3, ranges: {numInstances: {min: 1.2, max: 1.8}}}\n`)).toMatch(/no integer lies in \[1\.2, 1\.8\]/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes: {numInstances: [${Array.from({ length: 400 }, (_, i) => i + 1).join(',')}], rate: [${Array.from({ length: 300 }, (_, i) => i + 1).join(',')}]}\n`)).toMatch(new RegExp(`expands to 120,000 points, more than ${MAX_POINTS.toLocaleString('en-US')}`));
    expect(await sweepError(`base: {model: ${MODEL}\n`)).toMatch(/^sw\.yaml:2:1: invalid YAML/);
  });
  it('a replay sweep names its trace files; mode cannot vary', async () => {
    expect(await sweepError(`base: {model: ${MODEL}, mode: replay}\n`)).toMatch(/base: point 1 of 1 .*--trace-header is required/);
    expect(await sweepError(`base: {model: ${MODEL}}\naxes: {mode: [run, replay]}\n`)).toMatch(/axes\.mode: mode cannot vary/);
    expect(await sweepError(`base: {model: ${MODEL}, traceHeader: h.yaml}\n`)).toMatch(/base\.traceHeader: unknown configuration key for mode run/);
  });
});

describe('docs/sweep.md', () => {
  it('every sweep file shown loads as documented', async () => {
    const text = readFileSync(path.join(ROOT, 'docs', 'sweep.md'), 'utf8');
    const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const env = { readText: (p: string): string => (p === 'workload.yaml' ? SPEC : noFiles.readText(p)) };
    const plans = await Promise.all(blocks.map((b) => loadSweep(b, 'doc.yaml', env)));
    expect(plans.map((p) => p.points.length)).toEqual([8, 36]);
    expect(plans[1]?.params).toEqual(['numInstances', 'maxNumSeqs', 'routingPolicy', 'seed']);
  });
});

describe('jobs', () => {
  it('content addresses ignore key order and change with the configuration, its files and the version', () => {
    const a = simulationJob({ mode: 'run', model: MODEL, rate: 1, files: { 'x.yaml': 'a' } });
    const b = simulationJob({ files: { 'x.yaml': 'a' }, rate: 1, model: MODEL, mode: 'run' });
    expect(canonicalJson(a.config)).toBe(canonicalJson(b.config));
    expect(jobId(a)).toBe(jobId(b));
    expect(jobId(a)).toMatch(/^sim-[0-9a-f]{40}$/);
    expect(jobId(simulationJob({ ...a.config, rate: 2 }))).not.toBe(jobId(a));
    expect(jobId(simulationJob({ ...a.config, files: { 'x.yaml': 'b' } }))).not.toBe(jobId(a));
    expect(jobId({ ...a, version: '9.9.9' })).not.toBe(jobId(a));
  });
});

const rowsFixture: SweepRow[] = [
  { params: { n: 1, p: 'a,b', seed: 1 }, metrics: { ttft_p99_ms: 10, responses_per_sec: 5 } },
  { params: { n: 1, p: 'a,b', seed: 2 }, metrics: { ttft_p99_ms: 20, responses_per_sec: 7 } },
  { params: { n: 2, p: 'c', seed: 1 }, metrics: { ttft_p99_ms: 12, responses_per_sec: 8, goodput_rps: 3 } },
  { params: { n: 2, p: 'c', seed: 2 }, metrics: { ttft_p99_ms: 12, responses_per_sec: 8 } },
  { params: { n: 3, p: 'd', seed: 1 }, metrics: { ttft_p99_ms: 30, responses_per_sec: 6 } },
  { params: { n: 3, p: 'd', seed: 2 }, metrics: { ttft_p99_ms: 30, responses_per_sec: 6 } },
  { params: { n: 4, p: 'e', seed: 1 }, metrics: {}, error: { code: 'JOB_STALLED', message: 'gone' } },
  { params: { n: 4, p: 'e', seed: 2 }, metrics: { ttft_p99_ms: 1, responses_per_sec: 100 } },
];

describe('rows and summary', () => {
  it('rows in point order whatever the outcomes; JSON lines and quoted CSV', () => {
    const points = [{ params: { n: 1 }, config: {} }, { params: { n: 2 }, config: {} }, { params: { n: 3 }, config: {} }];
    const outcomes: JobOutcome[] = [
      { ok: true, value: { metrics: { a: 1.5, b: null } } },
      { ok: true, value: { error: { code: 'bad-flag', message: 'x, "y"' } } },
      { ok: false, error: { code: 'EVAL_WORKER_DIED', message: 'died' } },
    ];
    const rows = buildRows(points, outcomes);
    expect(rowsJsonl(rows)).toBe('{"params":{"n":1},"metrics":{"a":1.5,"b":null}}\n{"params":{"n":2},"metrics":{},"error":{"code":"bad-flag","message":"x, \\"y\\""}}\n{"params":{"n":3},"metrics":{},"error":{"code":"EVAL_WORKER_DIED","message":"died"}}\n');
    expect(rowsCsv(rows, ['n'])).toBe('n,a,b,error,error_message\n1,1.5,,,\n2,,,bad-flag,"x, ""y"""\n3,,,EVAL_WORKER_DIED,died\n');
    expect(rowsCsv([rowsFixture[0]!], ['n', 'p', 'seed']).split('\n')[1]).toBe('1,"a,b",1,10,5,,');
  });
  it('means over seeds, best per objective, Pareto front; a point with a failed seed is not ranked', () => {
    const s = summarize(rowsFixture, [{ metric: 'ttft_p99_ms', direction: 'minimize' }, { metric: 'responses_per_sec', direction: 'maximize' }], true);
    expect(s.rows).toBe(8);
    expect(s.points).toBe(4);
    expect(s.failed_rows).toBe(1);
    expect(s.averaged_over).toEqual(['seed']);
    // means: n=1 (15, 6), n=2 (12, 8), n=3 (30, 6); n=4 failed
    expect(s.best['ttft_p99_ms']).toEqual({ params: { n: 2, p: 'c' }, value: 12 });
    expect(s.best['responses_per_sec']).toEqual({ params: { n: 2, p: 'c' }, value: 8 });
    expect(s.pareto_front).toEqual([{ params: { n: 2, p: 'c' }, objectives: { ttft_p99_ms: 12, responses_per_sec: 8 } }]);
    expect(s.failed_points).toEqual([{ params: { n: 4, p: 'e' }, error: { code: 'JOB_STALLED', message: 'gone' } }]);
    // goodput_rps is left out of a row when zero: n=2 averages 3 and 0
    const g = summarize(rowsFixture, [{ metric: 'goodput_rps', direction: 'maximize' }, { metric: 'ttft_p99_ms', direction: 'minimize' }], true);
    expect(g.best['goodput_rps']).toEqual({ params: { n: 2, p: 'c' }, value: 1.5 });
    expect(g.pareto_front.map((p) => p.params['n'])).toEqual([2]);
  });
});

describe('local execution', () => {
  it('in this thread and on two worker threads: the same outcomes; a refused configuration is a result', async () => {
    ensureBuilt();
    const jobs = [
      simulationJob({ mode: 'run', model: MODEL, numRequests: 40, rate: 10, numInstances: 2, seed: 3 }),
      simulationJob({ mode: 'run', model: MODEL, workloadSpec: 'spec.yaml', routingPolicy: 'least-loaded', numInstances: 2, files: { 'spec.yaml': SPEC } }),
      simulationJob({ mode: 'run', model: MODEL, numRequests: 40, routingPolicy: 'nope' }),
    ];
    const inThread = new LocalRunner({ workers: 1, timeoutMs: 0 });
    const pool = new LocalRunner({ workers: 2, timeoutMs: 0 });
    try {
      const a = await inThread.runAll(jobs);
      const b = await pool.runAll(jobs);
      expect(JSON.stringify(b)).toBe(JSON.stringify(a));
      expect(a[0]).toMatchObject({ ok: true, value: { metrics: { completed_requests: 40, injected_requests: 40 } } });
      expect(a[1]).toMatchObject({ ok: true, value: { metrics: { completed_requests: 30 } } });
      expect(a[2]).toMatchObject({ ok: true, value: { error: { code: 'bad-config' } } });
      expect(JSON.stringify(a[2])).toContain('unknown routing policy \\"nope\\"');
    } finally {
      await inThread.close();
      await pool.close();
    }
  });
  it('a point over its wall-clock budget is a failure (EVAL_TIMEOUT), not a result', async () => {
    ensureBuilt();
    const runner = new LocalRunner({ workers: 1, timeoutMs: 50 });
    try {
      const [out] = await runner.runAll([simulationJob({ mode: 'run', model: MODEL, numRequests: 20_000, rate: 100, numInstances: 4 })]);
      expect(out).toMatchObject({ ok: false, error: { code: 'EVAL_TIMEOUT' } });
    } finally {
      await runner.close();
    }
  });
});

describe('sweep --timeout-s: the in-run wall-clock budget of each point', () => {
  /** A fast-engine routing policy that spends most of its instruction budget on every call (slow, within the accounting). */
  const BUSY = 'routing:\n  type: code\n  engine: fast\n  source: |\n    function route(request, state) { let s = 0; for (let i = 0; i < 900000; i++) s += i; return state.instances[s % state.instances.length].id; }\n';
  const config = { mode: 'run', model: MODEL, hardware: 'H100', tp: 1, numInstances: 2, numRequests: 3000, rate: 50, policyConfig: 'p.yaml', files: { 'p.yaml': BUSY } };

  it('the job carries the budget outside its content address', () => {
    const plain = simulationJob(config);
    const budgeted = simulationJob(config, 300);
    expect(budgeted.wallClockMs).toBe(300);
    expect(plain.wallClockMs).toBeUndefined();
    expect(jobId(budgeted)).toBe(jobId(plain));
  });

  it("the point's run stops at the budget, inside the thread running it, as a timeout naming the call (not a result)", async () => {
    const t0 = performance.now();
    const reply = await runPoint(simulationJob(config, 300));
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(reply).toHaveProperty('timeout');
    expect((reply as { timeout: string }).timeout).toMatch(/wall-clock backstop: .*wall-clock budget of 300 ms/);
  }, 30_000);

  it("a point's own policyWallClockS wins over the sweep's budget", async () => {
    const reply = await runPoint(simulationJob({ ...config, policyWallClockS: 0.2 }, 60_000));
    expect((reply as { timeout: string }).timeout).toMatch(/wall-clock budget of 200 ms/);
  }, 30_000);
});
