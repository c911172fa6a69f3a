import fc from 'fast-check';
import { it } from 'vitest';
import { buildCluster } from '../../src/sim/engine-setup.js';
import { buildRequests, engineSpecArb, toSetup } from '../property/scenarios.js';
it('ev', () => {
  for (const [mi, mr, seed, n] of [[1, 30, 20260501, 1000], [4, 50, 4242, 600]] as const) {
    const specs = fc.sample(engineSpecArb({ maxInstances: mi, maxRequests: mr }), { seed, numRuns: n });
    const counts: number[] = []; let ll = 0;
    for (const s of specs) {
      const cs = buildCluster(toSetup(s)); let k = 0;
      cs.onEvent = () => { if (++k > 100000) throw new Error('g'); };
      try { cs.run(buildRequests(s)); counts.push(k); } catch { ll++; }
    }
    counts.sort((a, b) => a - b);
    process.stderr.write(`EV ${mi} ll=${ll} p50=${counts[counts.length>>1]} p99=${counts[Math.floor(counts.length*0.99)]} max=${counts[counts.length-1]}\n`);
  }
});
