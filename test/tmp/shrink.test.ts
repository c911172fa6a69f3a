import fc from 'fast-check';
import { it } from 'vitest';
import { buildCluster } from '../../src/sim/engine-setup.js';
import { buildRequests, engineSpecArb, toSetup } from '../property/scenarios.js';
it('shrink', () => {
  const r = fc.check(fc.property(engineSpecArb({ maxInstances: 1, maxRequests: 30 }), (s) => {
    const cs = buildCluster(toSetup(s));
    let n = 0;
    cs.onEvent = () => { if (++n > 20000) throw new Error('guard'); };
    cs.run(buildRequests(s));
  }), { seed: 20260501, numRuns: 300 });
  process.stderr.write(`CE ${JSON.stringify(r.counterexample)}\n`);
});
