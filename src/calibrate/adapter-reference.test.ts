import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { adapterReportToJson, compareAdapterReference, parseBlisAggregate, parseDtReference } from './adapter-reference.js';

const DT = JSON.stringify({ model: 'm', adapter_aware: { ttft: 200, output_throughput: 1000, total_throughput: 3000 }, adapter_blind: { ttft: 100, output_throughput: 1250 }, provenance: { note: 'x' } });
const AWARE = JSON.stringify({ ttft_mean_ms: 150, total_output_tokens: 9000, vllm_estimated_duration_s: 10 });
const BLIND = JSON.stringify({ ttft_mean_ms: 100, total_output_tokens: 9900, vllm_estimated_duration_s: 9 });

describe('calibrate --adapter-reference', () => {
  it('reports |BLIS - DT| / DT per metric and the error of the aware/blind ratios', () => {
    const rep = compareAdapterReference(parseDtReference(DT, 'dt.json'), parseBlisAggregate(AWARE, 'a.json', '--sim-metrics'), parseBlisAggregate(BLIND, 'b.json', '--sim-metrics-blind'), 0.2);
    // ttft: |150 - 200| / 200; ratios 150/100 vs 200/100. throughput: 900 vs 1000; ratios (900/1100) vs (1000/1250).
    expect(rep.metrics.map((m) => [m.metric, m.blisValue, m.mape, m.within, m.deltaMape])).toEqual([
      ['ttft', 150, 0.25, false, 0.25],
      ['throughput', 900, 0.1, true, Math.abs(900 / 1100 - 0.8) / 0.8],
    ]);
    expect(rep.allWithin).toBe(false);
    expect(Object.keys(adapterReportToJson(rep))).toEqual(['model', 'mape_threshold', 'metrics', 'all_within_threshold']);
  });

  it('leaves the ratio error out without a blind run', () => {
    const rep = compareAdapterReference(parseDtReference(DT, 'dt.json'), parseBlisAggregate(AWARE, 'a.json', '--sim-metrics'), null, 0.3);
    expect(rep.allWithin).toBe(true);
    expect((adapterReportToJson(rep)['metrics'] as Record<string, unknown>[]).every((m) => !('delta_mape' in m))).toBe(true);
  });

  it('writes the report file through the CLI; bad input is one error, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blis-adref-'));
    const put = (n: string, t: string): string => {
      writeFileSync(join(dir, n), t);
      return join(dir, n);
    };
    const dt = put('dt.json', DT);
    const aware = put('a.json', AWARE);
    const report = join(dir, 'r.json');
    const io = (errs: string[]): { stdout: () => void; warn: () => void; info: () => void; error: (t: string) => void } => ({ stdout: () => undefined, warn: () => undefined, info: () => undefined, error: (t) => void errs.push(t) });
    expect(await main(['calibrate', '--adapter-reference', dt, '--sim-metrics', aware, '--report', report], io([]))).toBe(0);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ model: 'm', mape_threshold: 0.2, all_within_threshold: false });
    const cases: [string[], RegExp][] = [
      [['--adapter-reference', dt, '--report', report], /--sim-metrics is required with --adapter-reference/],
      [['--adapter-reference', dt, '--sim-metrics', aware, '--report', report, '--adapter-mape-threshold', '0'], /--adapter-mape-threshold must be a finite number > 0/],
      [['--adapter-reference', put('z.json', '{"adapter_aware": {"ttft": 0}}'), '--sim-metrics', aware, '--report', report], /adapter_aware ttft and output_throughput must be positive/],
      [['--adapter-reference', dt, '--sim-metrics', put('d.json', '{"ttft_mean_ms": 1}'), '--report', report], /vllm_estimated_duration_s must be > 0/],
      [['--adapter-reference', put('bad.json', '{'), '--sim-metrics', aware, '--report', report], /bad\.json:1:2: invalid JSON/],
    ];
    for (const [args, msg] of cases) {
      const errs: string[] = [];
      expect(await main(['calibrate', ...args], io(errs)), args.join(' ')).toBe(2);
      expect(errs).toHaveLength(1);
      expect(errs[0]).toMatch(msg);
    }
  });
});
