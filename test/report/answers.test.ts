/**
 * Issue 29 item 4, "reports that answer the questions": tail views, latency and SLO attainment over time,
 * placed vs routable replicas, time axes that end with the run, distinct colours for any number of instances,
 * the resolved configuration, units, and `compare` marking better and worse. The arithmetic is checked against
 * hand calculations written out here; the P/D time axis end to end through simulate().
 */
import { describe, expect, it } from 'vitest';
import { betterDirection, compareResults } from '../../src/report/compare.js';
import { colorBy, palette, runCharts } from '../../src/report/charts.js';
import { unitOf } from '../../src/report/run-report.js';
import { binLatencies, trimSeries, type LatencyPoint, type ReportData } from '../../src/sim/report-data.js';
import type { TimeSeriesData } from '../../src/cluster/timeseries.js';
import type { RunView } from '../../src/report/model.js';
import { MODEL } from './fixtures.js';

describe('latency and SLO attainment over time (hand calculation)', () => {
  it('bins arrivals, takes nearest-rank p90s and the share meeting the SLO per class', () => {
    // 40 arrivals -> floor(40 / 20) = 2 bins over [0, 39 + 1) µs: width ceil(40 / 2) = 20, bins [0, 20) and [20, 40).
    const pts: LatencyPoint[] = [];
    for (let i = 0; i < 40; i++) {
      const cls = i % 2 === 0 ? 'critical' : 'batch';
      // TTFT = (i + 1) ms; E2E only for completed ones (every request but i = 5); critical ones met their SLO when i < 10.
      pts.push({ cls, arrival: i, ttft: (i + 1) * 1000, e2e: i === 5 ? null : (i + 1) * 2000, met: cls === 'critical' && i < 10 });
    }
    const lt = binLatencies(pts, ['batch', 'critical'], new Set(['critical']));
    expect(lt?.bin_us).toBe(20);
    expect(lt?.time_us).toEqual([0, 20]);
    const all = lt?.classes['all'];
    expect(all?.count).toEqual([20, 20]);
    // Bin 0: TTFTs 1..20 ms; nearest-rank p90 = the ceil(0.9 × 20) = 18th smallest = 18 ms. Bin 1: 21..40 -> 38 ms.
    expect(all?.ttft_p90_ms).toEqual([18, 38]);
    // Bin 0 E2E: 2, 4, ..., 40 ms without i = 5 (12 ms): 19 values, 18th of ceil(0.9 × 19) = 18 -> the 18th smallest = 38 ms.
    expect(all?.e2e_p90_ms).toEqual([38, 76]);
    // 'all' has no targets of its own; 'batch' has none either.
    expect(all?.attainment).toBeNull();
    expect(lt?.classes['batch']?.attainment).toBeNull();
    // critical: 10 arrivals per bin (even i); met when i < 10 -> i = 0, 2, 4, 6, 8: 5 of 10 in bin 0, none in bin 1.
    expect(lt?.classes['critical']?.count).toEqual([10, 10]);
    expect(lt?.classes['critical']?.attainment).toEqual([0.5, 0]);
    // critical TTFTs in bin 0: 1, 3, ..., 19 ms; p90 = 9th of 10 = 17 ms.
    expect(lt?.classes['critical']?.ttft_p90_ms[0]).toBe(17);
  });

  it('an empty bin has no percentile and no attainment', () => {
    const pts: LatencyPoint[] = Array.from({ length: 40 }, (_, i) => ({ cls: 'default', arrival: i < 20 ? i : 39, ttft: 1000, e2e: null, met: false }));
    const lt = binLatencies(pts, ['default'], new Set(['default']));
    // Bins [0, 20), [20, 40): the second holds only arrivals at 39.
    expect(lt?.classes['default']?.count).toEqual([20, 20]);
    expect(lt?.classes['default']?.e2e_p90_ms).toEqual([null, null]);
    expect(lt?.classes['default']?.attainment).toEqual([0, 0]);
    expect(binLatencies([], ['default'], new Set())).toBeNull();
  });
});

describe('time axes end with the run', () => {
  const ts = (extra: number): TimeSeriesData => ({
    intervalUs: 10,
    times: [10, 20, 30, 40, 50],
    columns: { completed: 'counter', queue_depth: 'gauge', replicas: 'gauge' },
    cluster: { completed: [1, 2, 0, extra, 0], queue_depth: [3, 1, 0, 0, 0], replicas: [2, 2, 2, 2, 2] },
    instances: [{ id: 'i0', firstRow: 0, values: { completed: [1, 2, 0, extra, 0], queue_depth: [3, 1, 0, 0, 0] } }],
  });

  it('drops the quiet rows past the end (nothing counted, no gauge moved), keeping the row that closes the run', () => {
    // The run ended at 25 µs: row 30 (the interval (20, 30]) holds the end and stays; rows 40 and 50 are quiet and go.
    const t = trimSeries(ts(0), 25);
    expect(t.times).toEqual([10, 20, 30]);
    expect(t.cluster['completed']).toEqual([1, 2, 0]);
    expect(t.instances[0]?.values['queue_depth']).toEqual([3, 1, 0]);
    // A counter moving at 40 keeps everything up to it (totals never change).
    expect(trimSeries(ts(1), 25).times).toEqual([10, 20, 30, 40]);
    // Nothing past the end: unchanged.
    expect(trimSeries(ts(0), 50)).toEqual(ts(0));
  });

  it('a 24 s P/D run: the series, the timelines\' x axes and their rendered tick labels end at the run\'s end, not at its stale timeouts (~320 s)', async () => {
    const { simulate, runView, renderRunReport } = await import('../../src/index.js');
    const r = await simulate({ mode: 'run', model: MODEL, numInstances: 6, prefillInstances: 2, decodeInstances: 4, decodeTp: 2, pdDecider: 'always', rate: 20, numRequests: 400, promptTokens: 2048, outputTokens: 256, reportData: true });
    const d = r.report['report_data'] as ReportData;
    const endUs = Math.round(r.metrics.vllm_estimated_duration_s * 1e6);
    expect(d.run_end_us).toBe(endUs);
    expect(endUs).toBeLessThan(30e6);
    const ts = d.timeseries as TimeSeriesData;
    const last = ts.times[ts.times.length - 1] as number;
    // The last row is the one that closes the run: at or after its end, less than one interval later.
    expect(last).toBeGreaterThanOrEqual(endUs);
    expect(last - endUs).toBeLessThan(ts.intervalUs);
    // Totals are kept.
    expect((ts.cluster['arrivals'] ?? []).reduce((a, b) => a + b, 0)).toBe(400);
    const charts = runCharts(d, []);
    const timeline = [...charts.instances, ...charts.cluster, ...charts.scaling, ...charts.overTime];
    expect(timeline.length).toBeGreaterThan(5);
    for (const c of timeline) {
      const x = (c.spec as { encoding: { x: { scale: { domain: number[] } } } }).encoding.x;
      expect(x.scale.domain, c.id).toEqual([0, last / 1e6]);
    }
    // In the rendered SVG: the largest x tick label of the queue-depth chart is within the run (24 s -> 24, not 300).
    const html = await renderRunReport(runView(r.report, 'pd'));
    const fig = html.slice(html.indexOf('data-chart="instance-queue-depth"'));
    const svg = fig.slice(0, fig.indexOf('</figure>'));
    const ticks = [...svg.matchAll(/<text[^>]*>([\d,.]+)<\/text>/g)].map((m) => Number((m[1] as string).replace(/,/g, '')));
    expect(ticks).toContain(24);
    expect(Math.max(...ticks.filter((v) => v <= 1000 && Number.isInteger(v)))).toBeLessThanOrEqual(Math.ceil(last / 1e6));
    expect(svg).not.toMatch(/>300</);

    // The resolved configuration: prefill at TP 1, decode at TP 2 (--decode-tp), the default GPU and latency model.
    expect(d.resolved.semantics).toBe('reference');
    expect(d.resolved.groups.map((g) => [g.instances, g.count, g.role, g.gpu, g.tp, g.latency_model])).toEqual([
      ['instance_0, instance_1', 2, 'prefill', 'H100', 1, 'trained-physics'],
      ['instance_2, instance_3, instance_4, instance_5', 4, 'decode', 'H100', 2, 'trained-physics'],
    ]);
    expect(d.resolved.groups.every((g) => g.kv_blocks > 0)).toBe(true);
    expect(html).toContain('<h3>Resolved configuration</h3>');
    expect(html).toMatch(/<td>instance_2, instance_3, instance_4, instance_5<\/td><td class="num">4<\/td><td class="num">decode<\/td><td class="num">meta-llama\/llama-3\.1-8b-instruct<\/td><td class="num">H100<\/td><td class="num">2<\/td>/);
  }, 120_000);
});

describe('placed vs routable replicas', () => {
  it('draws the routable replicas beside the placed ones', () => {
    const ts: TimeSeriesData = {
      intervalUs: 1_000_000,
      times: [1e6, 2e6, 3e6],
      columns: { replicas: 'gauge', replicas_routable: 'gauge' },
      cluster: { replicas: [2, 3, 3], replicas_routable: [2, 2, 3] },
      instances: [],
    };
    const d = { run_end_us: 3e6, timeseries: ts, latency: { ttft_ms: {}, itl_ms: {}, e2e_ms: {} }, slo_classes: [], routing: [], regret: null, latency_over_time: null, cdf_probabilities: [] } as unknown as ReportData;
    const c = runCharts(d, []).scaling.find((x) => x.id === 'replicas-timeline');
    const rows = (c?.spec as { data: { values: { series: string; value: number }[] } }).data.values;
    expect(rows.filter((r) => r.series === 'placed (live) replicas').map((r) => r.value)).toEqual([2, 3, 3]);
    expect(rows.filter((r) => r.series === 'routable replicas').map((r) => r.value)).toEqual([2, 2, 3]);
  });
});

describe('colours, labels and units', () => {
  it('gives every one of any number of series its own colour, and never cuts legend labels', () => {
    for (const n of [1, 10, 11, 25, 64]) {
      const p = palette(n);
      expect(p).toHaveLength(n);
      expect(new Set(p).size, String(n)).toBe(n);
    }
    const rows = Array.from({ length: 30 }, (_, i) => ({ instance: `autoscale-llama-prefill-pool-${String(i).padStart(6, '0')}` }));
    const c = colorBy(rows, 'instance', 'instance') as { scale: { domain: string[]; range: string[] }; legend: { labelLimit: number; columns: number } };
    expect(c.scale.domain).toHaveLength(30);
    expect(new Set(c.scale.range).size).toBe(30);
    expect(c.legend.labelLimit).toBe(0);
    expect(c.legend.columns).toBe(3);
    // A chart drawing only some of a fixed list of series keeps each one's colour, and lists only those drawn.
    const some = colorBy([{ instance: 'b' }], 'instance', 'instance', ['a', 'b', 'c']) as { scale: { domain: string[]; range: string[] } };
    expect(some.scale).toEqual({ domain: ['b'], range: [palette(3)[1]] });
  });

  it('names the unit of every metric', () => {
    expect(['ttft_p99_ms', 'timestamp_us', 'vllm_estimated_duration_s', 'tokens_per_sec', 'responses_per_sec', 'cache_hit_rate', 'completed_requests', 'preemption_count', 'still_queued', 'total_output_tokens'].map(unitOf))
      .toEqual(['ms', 'µs', 's', 'tokens/s', 'requests/s', 'fraction (0–1)', 'count', 'count', 'count', 'tokens']);
  });
});

describe('blis compare marks better and worse', () => {
  it('knows which way each metric is better', () => {
    const cases: [string, 'lower' | 'higher' | null][] = [
      ['ttft_p99_ms', 'lower'], ['e2e_mean_ms', 'lower'], ['scheduling_delay_p99_ms', 'lower'], ['preemption_count', 'lower'], ['timed_out_requests', 'lower'],
      ['still_queued', 'lower'], ['kv_thrashing_rate', 'lower'], ['completed_requests', 'higher'], ['tokens_per_sec', 'higher'], ['responses_per_sec', 'higher'],
      ['slo_attainment', 'higher'], ['goodput_rps', 'higher'], ['cache_hit_rate', 'higher'], ['combined_score', 'higher'], ['scores.ttft_p99', 'higher'],
      ['objectives.ttft_p99', 'lower'], ['injected_requests', null], ['total_input_tokens', null], ['vllm_estimated_duration_s', null], ['features.cache_hit_rate', null],
    ];
    for (const [m, dir] of cases) expect(betterDirection(m), m).toBe(dir);
  });

  it('verdicts follow the delta\'s sign and the direction', () => {
    const run = (label: string, m: Record<string, number>): RunView => ({ kind: 'run', label, metrics: m, instances: [], sections: {}, anomalies: [], anomalyCounts: {}, data: null });
    const c = compareResults([
      run('a', { ttft_p99_ms: 100, tokens_per_sec: 50, injected_requests: 10, completed_requests: 10 }),
      run('b', { ttft_p99_ms: 80, tokens_per_sec: 40, injected_requests: 12, completed_requests: 10 }),
      run('c', { ttft_p99_ms: 120, tokens_per_sec: 60, injected_requests: 10, completed_requests: 9 }),
    ]);
    const row = (m: string) => c.metrics.find((x) => x.metric === m);
    // b: TTFT 80 < 100 (lower is better) -> better; throughput 40 < 50 -> worse. c: the opposite.
    expect(row('ttft_p99_ms')?.verdicts).toEqual([null, 'better', 'worse']);
    expect(row('tokens_per_sec')?.verdicts).toEqual([null, 'worse', 'better']);
    expect(row('completed_requests')?.verdicts).toEqual([null, 'same', 'worse']);
    // No direction, no mark, whatever the delta.
    expect(row('injected_requests')?.verdicts).toEqual([null, null, null]);
    expect(row('ttft_p99_ms')?.better).toBe('lower');
  });
});
