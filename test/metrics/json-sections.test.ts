/**
 * The JSON output's breakdown and P/D sections are data (issue 25, item 7): numbers in ms, counts as integers,
 * real model names as keys, checked against the per-request rows of the metrics document computed here
 * independently; the reference text keeps its strings.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { simulate } from '../../src/index.js';
import type { PerSloMetrics, SimulationReport, SimulationResult } from '../../src/index.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const QWEN = 'qwen/qwen2.5-7b-instruct';

const SPEC = `version: "2"
seed: 42
aggregate_rate: 20
num_requests: 80
clients:
  - id: chat
    tenant_id: acme
    slo_class: critical
    rate_fraction: 3
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 500, std_dev: 100, min: 100, max: 1000}}
    output_distribution: {type: exponential, params: {mean: 60}}
  - id: batch
    tenant_id: globex
    slo_class: batch
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 1500, std_dev: 300, min: 100, max: 3000}}
    output_distribution: {type: empirical, params: {"32": 0.5, "128": 0.5}}
`;

async function cli(argv: string[]): Promise<string> {
  let out = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (out += `ERR ${t}`) });
  expect(code).toBe(0);
  return out;
}

interface Row {
  readonly ttft_ms: number;
  readonly itl_ms: number;
  readonly e2e_ms: number;
  readonly num_decode_tokens: number;
  readonly slo_class?: string;
  readonly tenant_id?: string;
  readonly model?: string;
}

function rows(metricsFile: string | undefined): Row[] {
  expect(metricsFile).toBeDefined();
  return (JSON.parse(metricsFile as string) as { requests: Row[] }).requests;
}

/** Linear interpolation at rank p/100·(n−1) of the sorted values. */
function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return (s[lo] as number) + (rank - lo) * ((s[hi] as number) - (s[lo] as number));
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** `<prefix>_{mean,p50,p90,p95,p99}_ms` of `section` agree with `values` (ms). */
function expectStats(section: object, prefix: string, values: readonly number[]): void {
  const s = section as Record<string, unknown>;
  expect(s[`${prefix}_mean_ms`] as number).toBeCloseTo(mean(values), 9);
  for (const p of [50, 90, 95, 99]) expect(s[`${prefix}_p${p}_ms`] as number).toBeCloseTo(percentile(values, p), 9);
}

function groupBy(rs: readonly Row[], key: (r: Row) => string): Map<string, Row[]> {
  const m = new Map<string, Row[]>();
  for (const r of rs) m.set(key(r), [...(m.get(key(r)) ?? []), r]);
  return m;
}

/** Every value of a section (nested objects included) is a finite number, or null. */
function expectNumeric(v: unknown): void {
  if (v !== null && typeof v === 'object') for (const x of Object.values(v)) expectNumeric(x);
  else expect(v === null || (typeof v === 'number' && Number.isFinite(v)), `${String(v)} is not a number`).toBe(true);
}

describe('per-SLO and per-tenant sections as data', () => {
  let r: SimulationResult;
  let report: SimulationReport;
  let reqs: Row[];
  beforeAll(async () => {
    r = await simulate({ mode: 'run', model: MODEL, numInstances: 2, workloadSpec: 'w.yaml', files: { 'w.yaml': SPEC }, outputs: { metrics: true }, log: 'error' });
    report = r.report;
    reqs = rows(r.files.metrics);
  });

  it('every request completed (the cross-checks below count them all)', () => {
    expect(r.metrics.completed_requests).toBe(80);
    expect(reqs).toHaveLength(80);
    for (const q of reqs) expect(q.e2e_ms).toBeGreaterThan(0);
  });

  it('per_slo_metrics: per class, counts and TTFT / mean-ITL / E2E statistics in ms equal the requests\' own', () => {
    const slo = report.per_slo_metrics as PerSloMetrics;
    expectNumeric(slo);
    const byClass = groupBy(reqs, (q) => q.slo_class ?? '');
    expect(Object.keys(slo)).toEqual(['batch', 'critical']);
    for (const [cls, qs] of byClass) {
      const m = slo[cls];
      expect(m).toBeDefined();
      if (m === undefined) continue;
      expect(m.completed_requests).toBe(qs.length);
      expect(m.ttft_count).toBe(qs.length);
      expect(Number.isInteger(m.completed_requests)).toBe(true);
      expectStats(m, 'ttft', qs.map((q) => q.ttft_ms));
      expectStats(m, 'itl', qs.map((q) => q.itl_ms));
      expectStats(m, 'e2e', qs.map((q) => q.e2e_ms));
    }
  });

  it('per_tenant_metrics: completed requests and output tokens per tenant under `tenants`, Jain\'s index as a number', () => {
    const t = report.per_tenant_metrics;
    expect(t).toBeDefined();
    if (t === undefined) return;
    expectNumeric(t);
    const byTenant = groupBy(reqs, (q) => q.tenant_id ?? '');
    expect(Object.keys(t.tenants)).toEqual(['acme', 'globex']);
    const tokens: number[] = [];
    for (const [id, qs] of byTenant) {
      const sum = qs.reduce((a, q) => a + q.num_decode_tokens, 0);
      expect(t.tenants[id]).toEqual({ completed_requests: qs.length, output_tokens: sum });
      tokens.push(sum);
    }
    const sx = tokens.reduce((a, b) => a + b, 0);
    const sx2 = tokens.reduce((a, b) => a + b * b, 0);
    expect(t.jain_fairness_index).toBeCloseTo((sx * sx) / (tokens.length * sx2), 12);
  });

  it('the reference text keeps its strings, and they print the same figures', () => {
    const slo = report.per_slo_metrics as PerSloMetrics;
    const text = r.referenceText;
    expect(text).toContain('=== Per-SLO Metrics ===\n  batch:\n    TTFT: mean=');
    const critical = / {2}critical:\n {4}TTFT: mean=([\d.]+) p99=([\d.]+) \(n=(\d+)\)\n {4}ITL: {2}mean=([\d.]+) p99=([\d.]+) \(n=(\d+)\)\n {4}E2E: {2}mean=([\d.]+) p99=([\d.]+) \(n=(\d+)\)\n/.exec(text);
    expect(critical).not.toBeNull();
    const [, ttftMean, ttftP99, ttftN, , , itlN, e2eMean] = critical as RegExpExecArray;
    const c = slo['critical'];
    expect(Number(ttftMean)).toBeCloseTo((c?.ttft_mean_ms ?? NaN) * 1000, 2);
    expect(Number(ttftP99)).toBeCloseTo((c?.ttft_p99_ms ?? NaN) * 1000, 2);
    expect(Number(ttftN)).toBe(c?.ttft_count);
    expect(Number(itlN)).toBe(c?.completed_requests);
    expect(Number(e2eMean)).toBeCloseTo((c?.e2e_mean_ms ?? NaN) * 1000, 2);
    const t = report.per_tenant_metrics;
    expect(text).toContain(`=== Per-Tenant Metrics ===\n  acme: requests=${t?.tenants['acme']?.completed_requests}, tokens=${t?.tenants['acme']?.output_tokens}\n`);
    expect(text).toMatch(/\n {2}Jain Fairness Index: \d\.\d{4}\n/);
  });

  it('the CLI prints the same: the strings with --output-format reference, the data by default', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blis-json-sections-'));
    try {
      writeFileSync(join(dir, 'w.yaml'), SPEC);
      const argv = ['run', '--model', MODEL, '--num-instances', '2', '--workload-spec', join(dir, 'w.yaml'), '--log', 'error'];
      expect(await cli([...argv, '--output-format', 'reference'])).toBe(r.referenceText);
      expect(r.referenceText).toMatch(/\n {4}TTFT: mean=\d+\.\d{2} p99=\d+\.\d{2} \(n=\d+\)\n/);
      expect(await cli(argv)).toBe(`${JSON.stringify(report, null, 2)}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is byte-identical across runs', async () => {
    const again = await simulate({ mode: 'run', model: MODEL, numInstances: 2, workloadSpec: 'w.yaml', files: { 'w.yaml': SPEC }, log: 'error' });
    expect(JSON.stringify(again.report)).toBe(JSON.stringify(report));
  });
});

describe('per_model_metrics as data', () => {
  it('is keyed by the real model names, with the requests\' own statistics and throughput', async () => {
    const deployment = `models:
  - name: ${MODEL}
    configurations: [{name: llama, hardware: H100, tp: 1, replicas: 2}]
  - name: ${QWEN}
    configurations: [{name: qwen, hardware: A100-80, tp: 2, replicas: 1}]
default_model: ${MODEL}
`;
    const spec = `version: "2"
seed: 3
aggregate_rate: 10
num_requests: 40
clients:
  - {id: a, model: ${MODEL}, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 256}}, output_distribution: {type: constant, params: {value: 32}}}
  - {id: b, model: ${QWEN}, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 512}}, output_distribution: {type: constant, params: {value: 16}}}
`;
    const r = await simulate({ mode: 'run', deployment: 'd.yaml', workloadSpec: 'w.yaml', files: { 'd.yaml': deployment, 'w.yaml': spec }, outputs: { metrics: true }, log: 'error' });
    const pm = r.report.per_model_metrics;
    expect(pm).toBeDefined();
    if (pm === undefined) return;
    expectNumeric(pm);
    expect(Object.keys(pm)).toEqual([MODEL, QWEN]);
    const doc = JSON.parse(r.files.metrics as string) as { requests: Row[]; vllm_estimated_duration_s: number };
    const byModel = groupBy(doc.requests, (q) => q.model ?? '');
    expect([...byModel.keys()].sort()).toEqual([MODEL, QWEN]);
    for (const [name, qs] of byModel) {
      const m = pm[name];
      expect(m?.completed_requests).toBe(qs.length);
      expect(m?.ttft_count).toBe(qs.length);
      expectStats(m as object, 'ttft', qs.map((q) => q.ttft_ms));
      expectStats(m as object, 'e2e', qs.map((q) => q.e2e_ms));
      const secs = doc.vllm_estimated_duration_s;
      expect(m?.responses_per_sec).toBeCloseTo(qs.length / secs, 9);
      expect(m?.tokens_per_sec).toBeCloseTo(qs.reduce((a, q) => a + q.num_decode_tokens, 0) / secs, 9);
    }
    expect(r.referenceText).toContain(`=== Per-Model Metrics ===\n  ${MODEL}:\n    TTFT: p50=`);
  });
});

describe('pd_metrics as data', () => {
  it('counts, throughputs and the parents\' TTFT and KV transfer durations in ms', async () => {
    const r = await simulate({
      mode: 'run', model: MODEL, numInstances: 3, prefillInstances: 1, decodeInstances: 2, pdDecider: 'always', pdTransferContention: true,
      rate: 20, numRequests: 30, promptTokens: 1024, outputTokens: 32, seed: 5, traceLevel: 'decisions', outputs: { metrics: true }, log: 'error',
    });
    const pd = r.report.pd_metrics;
    expect(pd).toBeDefined();
    if (pd === undefined) return;
    expectNumeric(pd);
    expect(pd.disaggregated_requests).toBe(30);
    expect(pd.dropped_at_decode_kv).toBe(0);
    expect(pd.parent_ttft_count).toBe(30);
    expect(pd.kv_transfer_count).toBe(30);
    expect(Number.isInteger(pd.peak_concurrent_transfers)).toBe(true);
    expect(typeof pd.mean_transfer_queue_depth).toBe('number');
    expectStats(pd, 'parent_ttft', rows(r.files.metrics).map((q) => q.ttft_ms));
    const transfers = r.report.trace?.kv_transfers ?? [];
    expectStats(pd, 'kv_transfer', transfers.map((k) => k.duration_us / 1000));
    // One prefill and two decode pods complete one sub-request per request each.
    expect(pd.prefill_sub_requests_per_sec).toBeCloseTo(pd.decode_sub_requests_per_sec, 9);
    expect(pd.load_imbalance_ratio).toBe(1);
    const line = /Parent TTFT \(us\): mean=([\d.]+) p50=([\d.]+) p95=([\d.]+) p99=([\d.]+)\n/.exec(r.referenceText);
    expect(line).not.toBeNull();
    expect(Number(line?.[1])).toBeCloseTo(pd.parent_ttft_mean_ms * 1000, 1);
    expect(r.referenceText).toContain(`=== PD Metrics ===\nDisaggregated Requests: 30\nDropped at Decode KV: 0\nPrefill Throughput: `);
    expect(r.referenceText).toMatch(/\nPrefill Throughput: \d+\.\d{4} sub-req\/s\n/);
  });
});
