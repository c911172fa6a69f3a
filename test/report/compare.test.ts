import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, MODEL, tempDir } from './fixtures.js';

const RUN = ['run', '--model', MODEL, '--num-instances', '4', '--rate', '45', '--num-requests', '300', '--prefix-tokens', '256', '--seed', '21', '--total-kv-blocks', '1500'];

interface CompareJson {
  runs: string[];
  baseline: string;
  kind: string;
  metrics: { metric: string; values: (number | null)[]; deltas: (number | null)[]; relative: (number | null)[]; better: 'lower' | 'higher' | null; verdicts: (string | null)[] }[];
}

describe('blis compare', () => {
  it('prints the deltas the two runs\' own outputs imply (table and JSON), and an HTML report with overlays', async () => {
    const dir = tempDir();
    const rr = await cli([...RUN, '--routing-policy', 'round-robin', '--report-data']);
    const ll = await cli([...RUN, '--routing-policy', 'least-loaded', '--report-data']);
    expect(rr.code, rr.err).toBe(0);
    expect(ll.code, ll.err).toBe(0);
    const a = path.join(dir, 'round-robin.json');
    const b = path.join(dir, 'least-loaded.json');
    writeFileSync(a, rr.out);
    writeFileSync(b, ll.out);
    const ma = (JSON.parse(rr.out) as { simulation_metrics: Record<string, unknown> }).simulation_metrics;
    const mb = (JSON.parse(ll.out) as { simulation_metrics: Record<string, unknown> }).simulation_metrics;

    const j = await cli(['compare', a, b, '--format', 'json']);
    expect(j.code, j.err).toBe(0);
    const cmp = JSON.parse(j.out) as CompareJson;
    expect(cmp.runs).toEqual(['round-robin', 'least-loaded']);
    expect(cmp.baseline).toBe('round-robin');
    const numeric = Object.keys(ma).filter((k) => typeof ma[k] === 'number');
    expect(cmp.metrics.map((m) => m.metric).sort()).toEqual(numeric.sort());
    for (const row of cmp.metrics) {
      const va = ma[row.metric] as number;
      const vb = mb[row.metric] as number;
      expect(row.values).toEqual([va, vb]);
      expect(row.deltas).toEqual([null, vb - va]);
      expect(row.relative).toEqual([null, va === 0 ? null : (vb - va) / Math.abs(va)]);
      // The mark: the delta's sign read through the metric's direction.
      const d = vb - va;
      expect(row.verdicts).toEqual([null, row.better === null ? null : d === 0 ? 'same' : (d < 0) === (row.better === 'lower') ? 'better' : 'worse']);
    }
    expect(cmp.metrics.find((m) => m.metric === 'ttft_mean_ms')?.better).toBe('lower');
    expect(cmp.metrics.find((m) => m.metric === 'tokens_per_sec')?.better).toBe('higher');
    expect(cmp.metrics.find((m) => m.metric === 'injected_requests')?.better).toBeNull();
    // The policies differ on this workload: at least the latency rows move.
    const ttft = cmp.metrics.find((m) => m.metric === 'ttft_mean_ms');
    expect(ttft?.deltas[1]).not.toBe(0);

    const t = await cli(['compare', a, b]);
    expect(t.code, t.err).toBe(0);
    const lines = t.out.split('\n');
    expect(lines[0]).toBe('baseline: round-robin');
    expect(lines[1]).toMatch(/^metric\s+round-robin\s+least-loaded\s+Δ least-loaded\s+Δ% least-loaded\s+least-loaded is$/);
    const ttftLine = lines.find((l) => l.startsWith('ttft_mean_ms ')) as string;
    const d = (mb['ttft_mean_ms'] as number) - (ma['ttft_mean_ms'] as number);
    const shown = `${d > 0 ? '+' : ''}${Math.round(d * 1000) / 1000}`;
    expect(ttftLine.split(/\s+/)).toEqual(['ttft_mean_ms', String(Math.round((ma['ttft_mean_ms'] as number) * 1000) / 1000), String(Math.round((mb['ttft_mean_ms'] as number) * 1000) / 1000), shown, expect.stringMatching(/^[+-]\d+\.\d\d%$/), d < 0 ? 'better' : 'worse']);

    const h1 = path.join(dir, 'c1.html');
    const h2 = path.join(dir, 'c2.html');
    expect((await cli(['compare', a, b, '--report', h1])).code).toBe(0);
    expect((await cli(['compare', a, b, '--report', h2])).code).toBe(0);
    const html = readFileSync(h1, 'utf8');
    expect(readFileSync(h2, 'utf8')).toBe(html);
    expect(html).not.toMatch(/(https?:|\/\/[a-z0-9]|<script|src=)/i);
    for (const id of ['compare-cdf-ttft', 'compare-tail-ttft', 'compare-cdf-itl', 'compare-tail-itl', 'compare-cdf-e2e', 'compare-tail-e2e', 'compare-queue-depth', 'compare-in-flight', 'compare-completed', 'compare-throughput-tokens-per-s', 'compare-kv-gpu-utilization']) {
      expect(html).toMatch(new RegExp(`data-chart="${id}" data-points="[1-9]\\d*"`));
    }
    // Better and worse are marked (and coloured) in the HTML table too.
    expect(html).toMatch(/<td class="num (better|worse)">(▲ better|▼ worse)<\/td>/);
  }, 120_000);

  it('compares evaluation results on combined score, objectives, scores and features', async () => {
    const dir = tempDir();
    const doc = (score: number, ttft: number): string => JSON.stringify({
      combined_score: score, objectives: { ttft_p99: ttft }, scores: { ttft_p99: score }, features: { cache_hit_rate: 0.5 },
      scenarios: [], candidate: { id: 'c' }, suite: { name: 's' },
    });
    writeFileSync(path.join(dir, 'x.json'), doc(0.5, 200));
    writeFileSync(path.join(dir, 'y.json'), doc(0.75, 150));
    const r = await cli(['compare', path.join(dir, 'x.json'), path.join(dir, 'y.json'), '--format', 'json']);
    expect(r.code, r.err).toBe(0);
    const cmp = JSON.parse(r.out) as CompareJson;
    expect(cmp.kind).toBe('evaluation');
    expect(cmp.metrics).toEqual([
      { metric: 'combined_score', values: [0.5, 0.75], deltas: [null, 0.25], relative: [null, 0.5], better: 'higher', verdicts: [null, 'better'] },
      { metric: 'objectives.ttft_p99', values: [200, 150], deltas: [null, -50], relative: [null, -0.25], better: 'lower', verdicts: [null, 'better'] },
      { metric: 'scores.ttft_p99', values: [0.5, 0.75], deltas: [null, 0.25], relative: [null, 0.5], better: 'higher', verdicts: [null, 'better'] },
      { metric: 'features.cache_hit_rate', values: [0.5, 0.5], deltas: [null, 0], relative: [null, 0], better: null, verdicts: [null, null] },
    ]);
    const run = await cli([...RUN, '--num-requests', '20']);
    writeFileSync(path.join(dir, 'run.json'), run.out);
    const mixed = await cli(['compare', path.join(dir, 'x.json'), path.join(dir, 'run.json')]);
    expect(mixed.code).toBe(2);
    expect(mixed.out).toBe('');
    expect(mixed.err).toMatch(/cannot compare an evaluation result with a run result/);
    const fmt = await cli(['compare', path.join(dir, 'x.json'), path.join(dir, 'y.json'), '--format', 'xml']);
    expect(fmt.code).toBe(2);
    expect(fmt.err).toMatch(/--format must be table or json/);
  }, 60_000);
});
