import fc from 'fast-check';
import { it } from 'vitest';
import { buildCluster } from '../../src/sim/engine-setup.js';
import { buildRequests, engineSpecArb, toSetup } from '../property/scenarios.js';
it('stats', () => {
  for (const [mi, mr, seed] of [[1, 30, 20260501], [4, 50, 4242]] as const) {
    const specs = fc.sample(engineSpecArb({ maxInstances: mi, maxRequests: mr }), { seed, numRuns: 300 });
    const agg: Record<string, number> = {};
    const add = (k: string, c: boolean) => { agg[k] = (agg[k] ?? 0) + (c ? 1 : 0); };
    let events = 0, reqs = 0;
    const t0 = performance.now();
    for (const s of specs) {
      const rs = buildRequests(s);
      const cs = buildCluster(toSetup(s));
      let n = 0;
      cs.onEvent = () => { if (++n > 100000) throw new Error('guard'); };
      try { cs.run(rs); } catch { add('LIVELOCK', true); continue; }
      events += n;
      reqs += rs.length;
      const sum = (f: (m: any) => number) => cs.instances.reduce((a, i) => a + f(i.metrics), 0);
      add('preempt', sum((m) => m.preemptionCount) > 0);
      add('timeout', sum((m) => m.timedOutRequests) > 0);
      add('dropped', sum((m) => m.droppedUnservable) > 0);
      add('capped', sum((m) => m.lengthCappedRequests) > 0);
      add('completed>0', sum((m) => m.completedRequests) > 0);
      add('allcompleted', sum((m) => m.completedRequests) === rs.length);
      add('stillQ', sum((m) => m.stillQueued) > 0);
      add('stillR', sum((m) => m.stillRunning) > 0);
      add('pipeline', rs.some((r) => r.outcome === '' && r.state === 0 && !cs.instances.some(i => i.waitQ.toArray().includes(r))));
      add('cachehit', cs.instances.some((i) => i.kv.cacheHitRate() > 0));
      add('kvfail', sum((m) => m.kvAllocationFailures) > 0);
      add('tiered', s.cpuBlocks > 0);
      add('prio-preempt', s.preemptionPolicy === 'priority' && sum((m) => m.preemptionCount) > 0);
      add('multi', s.numInstances > 1);
    }
    process.stderr.write(`STATS ${mi} ${JSON.stringify(agg)} reqs=${reqs} events=${events} ms=${(performance.now() - t0).toFixed(0)}\n`);
  }
});
