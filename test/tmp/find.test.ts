import fc from 'fast-check';
import { it } from 'vitest';
import { buildCluster } from '../../src/sim/engine-setup.js';
import { buildRequests, engineSpecArb, toSetup } from '../property/scenarios.js';
it('find', () => {
  for (const [mi, mr, seed] of [[1, 30, 20260501], [4, 50, 4242]] as const) {
    const specs = fc.sample(engineSpecArb({ maxInstances: mi, maxRequests: mr }), { seed, numRuns: 300 });
    specs.forEach((s, k) => {
      const cs = buildCluster(toSetup(s));
      let n = 0;
      cs.onEvent = () => { if (++n > 300000) throw new Error('guard'); };
      try { cs.run(buildRequests(s)); } catch (e) {
        process.stderr.write(`LIVELOCK ${mi} #${k} ${JSON.stringify(s)}\n`);
        const i = cs.instances[0]!;
        process.stderr.write(`STATE clock=${cs.clock} wq=${i.waitQ.length} batch=${i.runningBatch.map(r=>r.id+':'+r.progressIndex+'/'+r.inputLen+'+'+r.outputLen).join(',')} pre=${i.metrics.preemptionCount} done=${i.metrics.completedRequests} used=${i.kv.usedBlocks()} waiting=${i.waitQ.toArray().map(r=>r.id+':in'+r.inputLen+':blk'+i.kv.blocksOf(r)).join(',')}\n`);
      }
    });
  }
});
