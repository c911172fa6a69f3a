import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface PublicRun {
  id: string;
  source: string;
  gpu_family: string;
  config: { hardware: string; hardwareConfig?: string; modelConfig?: string; tp: number };
  load: { kind: 'burst' | 'closed' | 'trace'; requests: number; concurrency?: number; input?: number; output?: number };
  path?: string;
  measured: Record<string, number>;
}
interface PublicData {
  sources: Record<string, { repository?: string; commit?: string; url?: string; what: string }>;
  hardware: Record<string, unknown>;
  models: Record<string, unknown>;
  runs: PublicRun[];
}

const doc = JSON.parse(readFileSync(new URL('../../fidelity-data/public-non-h100.json', import.meta.url), 'utf8')) as PublicData;

describe('fidelity-data/public-non-h100.json (the public non-H100 validation set)', () => {
  it('cites every source by repository and commit, or by URL', () => {
    for (const [name, s] of Object.entries(doc.sources)) {
      const cited = (s.repository !== undefined && /^[0-9a-f]{40}$/.test(s.commit ?? '')) || /^https:\/\//.test(s.url ?? '');
      expect(cited, name).toBe(true);
      expect(s.what.length, name).toBeGreaterThan(20);
    }
  });

  it('holds at least two GPU families other than H100 and a multi-GPU deployment, each run complete', () => {
    const families = new Set(doc.runs.map((r) => r.gpu_family));
    expect(families.has('H100')).toBe(false);
    expect(families.size).toBeGreaterThanOrEqual(2);
    expect(doc.runs.some((r) => r.config.tp > 1)).toBe(true);
    expect(new Set(doc.runs.map((r) => r.id)).size).toBe(doc.runs.length);
    for (const r of doc.runs) {
      expect(doc.sources[r.source], r.id).toBeDefined();
      if (r.config.hardwareConfig !== undefined) expect(doc.hardware[r.config.hardwareConfig], r.id).toBeDefined();
      if (r.config.modelConfig !== undefined) expect(doc.models[r.config.modelConfig], r.id).toBeDefined();
      expect(r.load.requests > 0, r.id).toBe(true);
      // A fixed-length load names its lengths; a recorded trace names the file in its source's repository.
      if (r.load.kind === 'trace') expect(r.path, r.id).toMatch(/^bench\/examples\//);
      else expect(r.load.input! > 0 && r.load.output! > 0, r.id).toBe(true);
      expect(Object.keys(r.measured).length, r.id).toBeGreaterThan(0);
      for (const v of Object.values(r.measured)) expect(Number.isFinite(v) && v > 0, r.id).toBe(true);
    }
  });

  it('derives E2E means exactly from TTFT + TPOT × (output − 1) where the source prints no E2E', () => {
    for (const r of doc.runs.filter((x) => x.measured['e2e_mean_ms'] !== undefined && x.load.kind !== 'trace')) {
      const m = r.measured;
      expect(m['e2e_mean_ms']).toBeCloseTo(m['ttft_mean_ms']! + m['tpot_mean_ms']! * (r.load.output! - 1), 1);
    }
  });

  it('has a MoE deployment (DP × EP) and runs whose load is a recorded per-request trace', () => {
    expect(doc.runs.some((r) => (r.config as { enableExpertParallel?: boolean }).enableExpertParallel === true)).toBe(true);
    const traces = doc.runs.filter((r) => r.load.kind === 'trace');
    expect(traces.length).toBeGreaterThanOrEqual(4);
    // Each names its measured mean, p50 and p90 of E2E, TTFT and TPOT, ordered as percentiles are.
    for (const r of traces) {
      for (const k of ['e2e', 'ttft', 'tpot']) {
        expect(r.measured[`${k}_p90_ms`]!, r.id).toBeGreaterThanOrEqual(r.measured[`${k}_p50_ms`]!);
        expect(r.measured[`${k}_mean_ms`], r.id).toBeGreaterThan(0);
      }
    }
  });
});
