import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulateRun } from '../../src/sim/run.js';
import { parseSimulationConfig } from '../../src/sim/simulate.js';
import { simulationReportHtml } from '../../src/report/index.js';
import { runCharts } from '../../src/report/charts.js';
import { coarsenSeries, type ReportData } from '../../src/sim/report-data.js';
import { runEngine } from '../../src/sim/engine-setup.js';
import { attachSampler, resolveTimeSeries } from '../../src/sim/timeseries.js';
import { SERIES_NAMES, type SeriesProbe, type TimeSeriesData } from '../../src/cluster/timeseries.js';
import { cli, MODEL, sloRunArgs, tempDir } from './fixtures.js';

/** Anything a browser could fetch or run: URLs of any scheme, protocol-relative links, scripts, imports. */
const EXTERNAL = /(https?:|ftp:|file:|data:|\/\/[a-z0-9]|<script|<link|<iframe|<img|src=|@import|url\((?!#))/i;

const CHART_IDS = [
  'cdf-ttft', 'tail-ttft', 'cdf-itl', 'tail-itl', 'cdf-e2e', 'tail-e2e', 'latency-ttft-over-time', 'latency-e2e-over-time', 'slo-attainment-over-time', 'instance-queue-depth', 'instance-batch-size', 'instance-kv-gpu-utilization', 'instance-step-time-us',
  'cluster-flow', 'cluster-throughput', 'cluster-load', 'routing-distribution', 'routing-regret', 'events-timeline', 'anomalies-timeline',
];

function charts(html: string): Map<string, number> {
  return new Map([...html.matchAll(/data-chart="([^"]+)" data-points="(\d+)"/g)].map((m) => [m[1] as string, Number(m[2])]));
}

describe('blis run --report', () => {
  it('is deterministic, self-contained, draws every chart, and equals blis report of the saved --report-data output', async () => {
    const dir = tempDir();
    const args = sloRunArgs(dir);
    const a = await cli([...args, '--report', path.join(dir, 'a.html')]);
    expect(a.code, a.err).toBe(0);
    const b = await cli([...args, '--report', path.join(dir, 'b.html')]);
    expect(b.code, b.err).toBe(0);
    const plain = await cli(args);
    // --report never changes stdout.
    expect(a.out).toBe(plain.out);
    const html = readFileSync(path.join(dir, 'a.html'), 'utf8');
    expect(readFileSync(path.join(dir, 'b.html'), 'utf8')).toBe(html);
    expect(html).not.toMatch(EXTERNAL);
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    const found = charts(html);
    for (const id of CHART_IDS) expect(found.get(id), id).toBeGreaterThan(0);
    // Both SLO classes are drawn and tabled.
    expect(html).toContain('>critical<');
    expect(html).toContain('>batch<');
    // Unique ids across the inlined SVGs.
    const ids = [...html.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);

    // Saved with --report-data under the name "run", then drawn: the same bytes as the live report.
    const saved = await cli([...args, '--report-data']);
    expect(saved.code, saved.err).toBe(0);
    writeFileSync(path.join(dir, 'run.json'), saved.out);
    const r = await cli(['report', path.join(dir, 'run.json'), '-o', path.join(dir, 'c.html')]);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(path.join(dir, 'c.html'), 'utf8')).toBe(html);
  }, 180_000);

  it('the latency tables agree with the run\'s own percentiles, and counters with its totals', async () => {
    const dir = tempDir();
    const r = await cli([...sloRunArgs(dir), '--report-data']);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as { simulation_metrics: Record<string, number>; report_data: ReportData };
    const d = doc.report_data;
    const m = doc.simulation_metrics;
    const at = (c: { readonly values: readonly number[] } | undefined, p: number): number => (c?.values ?? [])[d.cdf_probabilities.indexOf(p)] as number;
    const ttft = d.latency.ttft_ms['all'];
    const e2e = d.latency.e2e_ms['all'];
    const itl = d.latency.itl_ms['all'];
    expect(ttft?.count).toBe(m['completed_requests']);
    expect(ttft?.mean).toBeCloseTo(m['ttft_mean_ms'] as number, 2);
    expect(e2e?.mean).toBeCloseTo(m['e2e_mean_ms'] as number, 2);
    expect(itl?.mean).toBeCloseTo(m['itl_mean_ms'] as number, 2);
    // Nearest rank against the reference's interpolated percentile: within one sample's spacing.
    expect(Math.abs(at(ttft, 0.99) - (m['ttft_p99_ms'] as number))).toBeLessThan(0.05 * (m['ttft_p99_ms'] as number));
    expect(Math.abs(at(itl, 0.9) - (m['itl_p90_ms'] as number))).toBeLessThan(0.05 * (m['itl_p90_ms'] as number));
    expect(Object.keys(d.latency.ttft_ms).sort()).toEqual(['all', 'batch', 'critical']);
    expect((d.latency.ttft_ms['critical']?.count ?? 0) + (d.latency.ttft_ms['batch']?.count ?? 0)).toBe(ttft?.count);
    const ts = d.timeseries as TimeSeriesData;
    const sum = (xs: readonly number[] | undefined): number => (xs ?? []).reduce((x, y) => x + y, 0);
    expect(sum(ts.cluster['completed'])).toBe(m['completed_requests']);
    expect(sum(ts.cluster['preemptions'])).toBe(m['preemption_count']);
    expect(d.routing.reduce((x, y) => x + y.routed, 0)).toBe(m['injected_requests']);
    expect(d.regret?.decisions.reduce((x, y) => x + y, 0)).toBe(400);
  }, 120_000);

  it('stays under 5 MB for a 50,000-request run', async () => {
    const { values } = parseSimulationConfig({ mode: 'run', model: MODEL, numInstances: 4, rate: 120, numRequests: 50_000, promptTokens: 256, outputTokens: 96, routingPolicy: 'least-loaded', seed: 5 });
    const env = { readText: () => '', warn: () => undefined };
    const out = await simulateRun(values, env, undefined, { timeseries: true });
    const html = await simulationReportHtml(out, values, 'run');
    const bytes = Buffer.byteLength(html);
    expect(out.report.clusterOutput['completed_requests']).toBe(50_000);
    expect(bytes).toBeLessThan(5 * 1024 * 1024);
    expect(charts(html).get('instance-queue-depth')).toBeGreaterThan(0);
  }, 300_000);

  it('shows replica, pool and P/D panels when a probe feeds those series', async () => {
    const { values } = parseSimulationConfig({ mode: 'run', model: MODEL, numInstances: 2, rate: 20, numRequests: 60, timeseriesIntervalUs: 200_000 });
    const env = { readText: () => '', warn: () => undefined };
    const plain = await simulateRun(values, env, undefined, { timeseries: true });
    const d0 = (await import('../../src/report/index.js')).simulationView(plain, values, 'run').data as ReportData;
    // Today's engine: one constant replica count, no pools, no P/D -> no scaling panels.
    expect(runCharts(d0, []).scaling).toEqual([]);
    // A probe as the P/D and autoscaler work would provide: pools and transfers, replicas moving.
    let transfers = 0;
    const probe: SeriesProbe = {
      columns: [{ name: `${SERIES_NAMES.poolPrefix}prefill`, kind: 'gauge' }, { name: `${SERIES_NAMES.pdPrefix}transfers_started`, kind: 'counter' }],
      read: (clock, out) => {
        out[0] = clock < 2_000_000 ? 1 : 2;
        out[1] = (transfers += 3);
      },
    };
    const { resolveEngineFlags } = await import('../../src/sim/resolve-engine.js');
    const { setup } = await resolveEngineFlags(values, env);
    const req = resolveTimeSeries(values, true);
    let data: TimeSeriesData | null = null;
    const { generateDistributionWorkload } = await import('../../src/workload/distribution.js');
    const requests = generateDistributionWorkload({ seed: 1n, rate: 20, numRequests: 60, horizon: Number.MAX_SAFE_INTEGER, prefixTokens: 0, prompt: { mean: 300, stdev: 50, min: 10, max: 600 }, output: { mean: 50, stdev: 10, min: 5, max: 100 }, timeoutUs: 0 });
    let sampler: ReturnType<typeof attachSampler> | null = null;
    runEngine({ ...setup, horizon: Number.MAX_SAFE_INTEGER }, requests, null, (cs) => {
      sampler = attachSampler(cs, req as NonNullable<typeof req>, 0, [probe]);
    });
    data = (sampler as unknown as { data(): TimeSeriesData }).data();
    expect(data.columns[`${SERIES_NAMES.pdPrefix}transfers_started`]).toBe('counter');
    expect(data.cluster[`${SERIES_NAMES.pdPrefix}transfers_started`]?.every((v) => v === 3)).toBe(true);
    const scaling = runCharts({ ...d0, timeseries: data }, []).scaling.map((c) => c.id);
    expect(scaling).toEqual(['replicas-timeline', 'pd-timeline']);
  }, 120_000);

  it('P/D: split requests are in the E2E and ITL distributions like the TTFT one (their parents keep no outcome)', async () => {
    const { simulate } = await import('../../src/index.js');
    const r = await simulate({ mode: 'run', model: MODEL, numInstances: 3, prefillInstances: 1, decodeInstances: 2, pdDecider: 'always', rate: 10, numRequests: 40, reportData: true });
    const d = r.report['report_data'] as ReportData;
    const m = r.metrics;
    expect(m.completed_requests).toBe(40);
    expect(d.latency.ttft_ms['all']?.count).toBe(40);
    expect(d.latency.e2e_ms['all']?.count).toBe(40);
    expect(d.latency.e2e_ms['all']?.mean).toBeCloseTo(m.e2e_mean_ms, 2);
    expect(d.latency.itl_ms['all']?.mean).toBeCloseTo(m.itl_mean_ms, 2);
  }, 60_000);

  it('library: simulate({reportData: true}) carries report_data that renderRunReport draws', async () => {
    const { simulate, runView, renderRunReport } = await import('../../src/index.js');
    const r = await simulate({ mode: 'run', model: MODEL, numInstances: 2, rate: 30, numRequests: 80, reportData: true });
    const d = r.report['report_data'] as ReportData;
    expect(d.version).toBe(2);
    expect(d.options).toEqual({ model: MODEL, 'num-instances': '2', rate: '30', 'num-requests': '80' });
    expect((d.timeseries?.times.length ?? 0)).toBeGreaterThan(0);
    const html = await renderRunReport(runView(r.report, 'lib'));
    expect(charts(html).get('cdf-ttft')).toBeGreaterThan(0);
    expect(html).toContain('<title>blis report: lib</title>');
  }, 60_000);

  it('coarsening keeps counter totals and the last gauge of each group', () => {
    const ts: TimeSeriesData = {
      intervalUs: 10,
      times: [10, 20, 30, 40, 50, 55],
      columns: { completed: 'counter', queue_depth: 'gauge', steps: 'counter', step_time_us: 'gauge', output_tokens: 'counter', throughput_tokens_per_s: 'gauge' },
      cluster: { completed: [1, 2, 3, 4, 5, 6], queue_depth: [9, 8, 7, 6, 5, 4], steps: [1, 1, 2, 0, 1, 1], step_time_us: [10, 20, 30, 0, 50, 60], output_tokens: [10, 0, 0, 0, 0, 5], throughput_tokens_per_s: [0, 0, 0, 0, 0, 0] },
      instances: [{ id: 'i1', firstRow: 3, values: { completed: [4, 5, 6], queue_depth: [6, 5, 4], steps: [0, 1, 1], step_time_us: [0, 50, 60], output_tokens: [0, 0, 5], throughput_tokens_per_s: [0, 0, 0] } }],
    };
    const c = coarsenSeries(ts, 3);
    expect(c.times).toEqual([20, 40, 55]);
    expect(c.intervalUs).toBe(20);
    expect(c.cluster['completed']).toEqual([3, 7, 11]);
    expect(c.cluster['queue_depth']).toEqual([8, 6, 4]);
    expect(c.cluster['step_time_us']).toEqual([15, 30, 55]);
    expect(c.cluster['throughput_tokens_per_s']).toEqual([500000, 0, 333333.333]);
    expect(c.instances[0]?.firstRow).toBe(1);
    expect(c.instances[0]?.values['completed']).toEqual([4, 11]);
    expect(c.instances[0]?.values['queue_depth']).toEqual([6, 4]);
  });
});

describe('blis report: bad input', () => {
  it('one error line, exit 2, empty stdout', async () => {
    const dir = tempDir();
    const notResult = path.join(dir, 'x.json');
    writeFileSync(notResult, '{"hello": 1}');
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, '{"simulation_metrics": {}, "report_data": {"version": 99}}');
    const cases: [string[], RegExp][] = [
      [['report', notResult], /x\.json: neither a blis run\/replay JSON output .* nor a blis evaluate result/],
      [['report', path.join(dir, 'missing.json')], /cannot read .*missing\.json/],
      [['report', broken], /report_data is not what this blis-ts writes.*--report-data/],
      [['compare', notResult], /at least two results/],
    ];
    for (const [argv, re] of cases) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(re);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
    expect(statSync(dir).isDirectory()).toBe(true);
    // An unwritable report or series file: the error comes before anything is printed.
    const run = ['run', '--model', MODEL, '--num-requests', '10'];
    for (const extra of [['--report', path.join(dir, 'no/such/dir/r.html')], ['--timeseries-path', path.join(dir, 'no/such/dir/t.csv')]]) {
      const r = await cli([...run, ...extra]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/^(--report|--timeseries-path): cannot write /);
    }
  });

  it('blis replay --report draws the replayed trace', async () => {
    const dir = tempDir();
    const prefix = path.join(dir, 't');
    expect((await cli(['run', '--model', MODEL, '--num-instances', '2', '--rate', '20', '--num-requests', '80', '--trace-output', prefix])).code).toBe(0);
    const out = path.join(dir, 'replay.html');
    const r = await cli(['replay', '--model', MODEL, '--num-instances', '2', '--trace-header', `${prefix}.yaml`, '--trace-data', `${prefix}.csv`, '--report', out]);
    expect(r.code, r.err).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toMatch(/replay · \d+ of 80 requests completed/);
    expect(charts(html).get('instance-queue-depth')).toBeGreaterThan(0);
    expect(html).not.toMatch(EXTERNAL);
  }, 60_000);
});
