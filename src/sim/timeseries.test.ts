import { describe, expect, it } from 'vitest';
import { simulate, parseSimulationConfig, type SimulationConfig } from './simulate.js';
import { simulateRun } from './run.js';
import type { SimProgress } from './engine-setup.js';
import type { TimeSeriesData } from '../cluster/timeseries.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
/** Tight KV and a short timeout: preemptions, timeouts and busy queues. */
const PRESSURED: SimulationConfig = {
  mode: 'run', model: MODEL, numInstances: 3, rate: 40, numRequests: 240, totalKvBlocks: 300, timeout: 20,
  routingPolicy: 'least-loaded', seed: 7, promptTokens: 700, outputTokens: 300,
};

const sum = (xs: readonly number[] | undefined): number => (xs ?? []).reduce((a, b) => a + b, 0);
const env = { readText: () => { throw new Error('no files'); }, warn: () => undefined };

function instanceMetrics(report: Record<string, unknown>): Record<string, number>[] {
  return (report['instances'] as Record<string, number>[] | undefined) ?? [];
}

describe('time series', () => {
  it('sums of counters equal the run\'s own totals; gauges add up across instances', async () => {
    const r = await simulate({ ...PRESSURED, timeseriesIntervalUs: 250_000 });
    const ts = r.timeseries as TimeSeriesData;
    expect(ts).not.toBeNull();
    expect(ts.intervalUs).toBe(250_000);
    const m = r.metrics;
    expect(m.preemption_count).toBeGreaterThan(0);
    expect(m.timed_out_requests).toBeGreaterThan(0);
    expect(sum(ts.cluster['completed'])).toBe(m['completed_requests']);
    expect(sum(ts.cluster['timed_out'])).toBe(m['timed_out_requests']);
    expect(sum(ts.cluster['preemptions'])).toBe(m['preemption_count']);
    expect(sum(ts.cluster['dropped'])).toBe(m['dropped_unservable']);
    expect(sum(ts.cluster['arrivals'])).toBe(240);
    const inst = instanceMetrics(r.report);
    expect(ts.instances.map((s) => s.id)).toEqual(inst.map((x) => x['instance_id']));
    ts.instances.forEach((s, i) => {
      expect(sum(s.values['completed'])).toBe(inst[i]?.['completed_requests']);
      expect(sum(s.values['preemptions'])).toBe(inst[i]?.['preemption_count']);
    });
    // Rows are the interval's multiples, then the end of the run.
    ts.times.slice(0, -1).forEach((t, k) => expect(t).toBe((k + 1) * 250_000));
    for (let k = 0; k < ts.times.length; k++) {
      const q = ts.instances.reduce((a, s) => a + (s.values['queue_depth']?.[k] ?? 0), 0);
      expect(ts.cluster['queue_depth']?.[k]).toBe(q);
      for (const s of ts.instances) {
        expect(s.values['batch_size']?.[k]).toBeLessThanOrEqual(256);
        expect(s.values['kv_gpu_utilization']?.[k]).toBeGreaterThanOrEqual(0);
        expect(s.values['kv_gpu_utilization']?.[k]).toBeLessThanOrEqual(1);
      }
    }
    expect(Math.max(...(ts.cluster['queue_depth'] ?? []))).toBeGreaterThan(0);
    expect(ts.cluster['replicas']?.every((v) => v === 3)).toBe(true);
  });

  it('never changes the results: stdout, reference text and metrics file are byte-identical with and without sampling', async () => {
    const configs: SimulationConfig[] = [
      PRESSURED,
      { mode: 'run', model: MODEL, numInstances: 4, rate: 30, numRequests: 200, routingPolicy: 'weighted', prefixTokens: 128, traceLevel: 'decisions', counterfactualK: 2, seed: 3 },
      { mode: 'run', model: MODEL, numInstances: 2, rate: 60, numRequests: 150, flowControl: true, saturationDetector: 'utilization', maxGatewayQueueDepth: 20, seed: 11 },
    ];
    for (const c of configs) {
      const plain = await simulate(c);
      for (const interval of [1, 777, 100_000]) {
        const sampled = await simulate({ ...c, timeseriesIntervalUs: interval });
        expect(sampled.referenceText).toBe(plain.referenceText);
        expect(JSON.stringify(sampled.report)).toBe(JSON.stringify(plain.report));
        expect(sampled.files.metrics).toBe(plain.files.metrics);
        expect(sum(sampled.timeseries?.cluster['completed'])).toBe(plain.metrics['completed_requests']);
      }
    }
  });

  it('coarsens a too-fine interval (doubling, with a warning) and keeps the totals exact', async () => {
    const r = await simulate({ ...PRESSURED, timeseriesIntervalUs: 1, numRequests: 120 });
    const ts = r.timeseries as TimeSeriesData;
    expect(ts.intervalUs).toBeGreaterThan(1);
    expect(Math.log2(ts.intervalUs) % 1).toBe(0);
    expect(ts.times.length).toBeLessThanOrEqual(100_000);
    expect(r.warnings.some((w) => /timeseries-interval-us 1 would give more than 100000 rows/.test(w))).toBe(true);
    expect(sum(ts.cluster['completed'])).toBe(r.metrics['completed_requests']);
    expect(sum(ts.cluster['arrivals'])).toBe(120);
    ts.times.slice(0, -1).forEach((t, k) => expect(t).toBe((k + 1) * ts.intervalUs));
  });

  it('automatic interval: at most 1024 rows, power-of-two multiples of 1 ms', async () => {
    const r = await simulate({ ...PRESSURED, timeseriesPath: 'ts.csv' });
    const ts = r.timeseries as TimeSeriesData;
    expect(ts.times.length).toBeLessThanOrEqual(1024);
    expect(ts.intervalUs % 1000).toBe(0);
    expect(Math.log2(ts.intervalUs / 1000) % 1).toBe(0);
  });

  it('writes CSV and JSON lines with the same values, one row per time and scope', async () => {
    const csv = await simulate({ ...PRESSURED, timeseriesPath: 'out.csv', timeseriesIntervalUs: 500_000 });
    const jsonl = await simulate({ ...PRESSURED, timeseriesPath: 'out.jsonl', timeseriesIntervalUs: 500_000 });
    const lines = (csv.files.timeseries as string).trimEnd().split('\n');
    const header = (lines[0] as string).split(',');
    expect(header.slice(0, 4)).toEqual(['time_us', 'scope', 'queue_depth', 'batch_size']);
    const objs = (jsonl.files.timeseries as string).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, number | string>);
    expect(objs.length).toBe(lines.length - 1);
    const ts = csv.timeseries as TimeSeriesData;
    expect(objs.length).toBe(ts.times.length * 4);
    objs.forEach((o, i) => {
      const cells = (lines[i + 1] as string).split(',');
      expect(String(o['time_us'])).toBe(cells[0]);
      expect(o['scope']).toBe(cells[1]);
      header.slice(2).forEach((h, j) => expect(o[h] === undefined ? '' : String(o[h])).toBe(cells[j + 2]));
    });
    const completed = objs.filter((o) => o['scope'] === 'cluster').reduce((a, o) => a + (o['completed'] as number), 0);
    expect(completed).toBe(csv.metrics['completed_requests']);
    // The same run with an explicit format flag and a neutral name gives the same bytes.
    const flagged = await simulate({ ...PRESSURED, timeseriesPath: 'out.txt', timeseriesFormat: 'jsonl', timeseriesIntervalUs: 500_000 });
    expect(flagged.files.timeseries).toBe(jsonl.files.timeseries);
  });

  it('rejects a path whose format it cannot tell, a bad format and a negative interval', async () => {
    // The library names config keys (the CLI's flags in its own tests).
    await expect(simulate({ ...PRESSURED, timeseriesPath: 'out.txt' })).rejects.toThrow(/timeseriesPath: cannot tell the format of "out.txt".*timeseriesFormat/);
    // @ts-expect-error -- not one of the formats
    await expect(simulate({ ...PRESSURED, timeseriesFormat: 'xml', timeseriesPath: 'a.csv' })).rejects.toThrow(/timeseriesFormat: unknown timeseries format "xml"; valid: auto, csv, jsonl/);
    await expect(simulate({ ...PRESSURED, timeseriesIntervalUs: -5 })).rejects.toThrow(/timeseriesIntervalUs must be >= 0/);
  });

  it('reports progress during a run without changing its output', async () => {
    const { values } = parseSimulationConfig(PRESSURED);
    const plain = await simulateRun(values, env);
    const seen: SimProgress[] = [];
    const withProgress = await simulateRun(values, env, undefined, { onProgress: (p) => seen.push(p) });
    expect(withProgress.stdout).toBe(plain.stdout);
    expect(seen.length).toBeGreaterThan(5);
    for (let i = 1; i < seen.length; i++) {
      expect((seen[i] as SimProgress).simTimeUs).toBeGreaterThanOrEqual((seen[i - 1] as SimProgress).simTimeUs);
      expect((seen[i] as SimProgress).requestsDone).toBeGreaterThanOrEqual((seen[i - 1] as SimProgress).requestsDone);
    }
    const last = seen[seen.length - 1] as SimProgress;
    expect(last.requestsTotal).toBe(240);
    expect(last.requestsDone).toBe(240);
  });
});
