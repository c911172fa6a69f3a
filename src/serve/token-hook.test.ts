/**
 * The instance token hook that `blis serve` streams from: one report per token on the metrics clock, and no
 * effect on the simulation itself.
 */
import { describe, expect, it } from 'vitest';
import { Request } from '../domain/request.js';
import { buildCluster } from '../sim/engine-setup.js';
import { MAX_INT64 } from '../domain/units.js';
import { testSetup } from '../../test/io/engine.js';

function workload(n: number): Request[] {
  const out: Request[] = [];
  for (let i = 0; i < n; i++) {
    const input = Int32Array.from({ length: 200 + ((i * 977) % 1500) }, (_, k) => (i * 7919 + k * 31) % 128000);
    const outLen = 1 + ((i * 37) % 60);
    out.push(new Request(`request_${i}`, input, new Int32Array(outLen), i * 15000, outLen, 0));
  }
  return out;
}

describe('Instance.onToken', () => {
  it('reports every token once (deduplicated by index) at arrival + TTFT + ITLs, ending at E2E − post-decode', async () => {
    // A small KV cache forces preemptions, which make the engine report restarted tokens again. Prefill-first
    // steps stall decodes: a stalled token's ITL is kept by value, and the hook must still see that token.
    for (const [blocks, schedulingMode] of [[1000000, 'sync'], [300, 'sync'], [1000000, 'prefill-first'], [300, 'prefill-first'], [300, 'async']] as const) {
      const setup = await testSetup({ totalKvBlocks: blocks, schedulingMode });
      const cs = buildCluster({ ...setup, horizon: MAX_INT64 });
      const seen = new Map<Request, number[]>();
      const inst = cs.instances[0];
      if (inst === undefined) throw new Error('no instance');
      inst.onToken = (req, t) => {
        const idx = req.itlCount + 1;
        const list = seen.get(req) ?? [];
        seen.set(req, list);
        if (idx > list.length) list.push(t);
      };
      const reqs = workload(80);
      cs.run(reqs);
      const post = setup.latency.postDecodeFixedOverhead();
      let completed = 0;
      for (const r of reqs) {
        if (!r.hasE2E) continue;
        completed++;
        const times = seen.get(r) ?? [];
        expect(times.length).toBe(r.outputLen);
        // A preempted request restarts: its TTFT moves later, but the client already has the first token.
        if (blocks > 300) expect(times[0]).toBe(r.arrivalTime + r.ttft);
        else expect(times[0]).toBeLessThanOrEqual(r.arrivalTime + r.ttft);
        expect((times[times.length - 1] as number) + (r.outputLen > 0 ? post : 0)).toBe(r.arrivalTime + r.e2e);
        for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1] as number);
      }
      expect(completed).toBe(reqs.length);
      if (blocks === 300) expect(inst.metrics.preemptionCount).toBeGreaterThan(0);
    }
  });

  it('leaves the simulation unchanged', async () => {
    const setup = await testSetup();
    const run = (hook: boolean): number[] => {
      const cs = buildCluster({ ...setup, horizon: MAX_INT64 });
      if (hook) (cs.instances[0] as NonNullable<(typeof cs.instances)[0]>).onToken = () => undefined;
      const reqs = workload(40);
      cs.run(reqs);
      return reqs.flatMap((r) => [r.ttft, r.e2e, r.itlSum]);
    };
    expect(run(true)).toEqual(run(false));
  });
});
