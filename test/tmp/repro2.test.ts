import { it } from 'vitest';
import { buildCluster } from '../../src/sim/engine-setup.js';
import { buildRequests, toSetup, type EngineSpec } from '../property/scenarios.js';
it('repro', () => {
  const s: EngineSpec = {"numInstances":1,"blockSize":4,"totalBlocks":2,"cpuBlocks":2,"transferBandwidth":0.2,"transferBaseLatency":0,"maxNumSeqs":1,"maxNumBatchedTokens":1,"longPrefillTokenThreshold":1,"scheduler":"fcfs","preemptionPolicy":"fcfs","horizon":0,"admissionLatency":0,"routingLatency":0,"latency":{"kind":"roofline","alpha":[0,0,0]},"requests":[{"gap":50000,"input":8,"output":0,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"zero"},{"gap":0,"input":1,"output":4,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"zero"},{"gap":0,"input":4,"output":3,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"zero"}],"maxModelLen":0};
  const cs = buildCluster(toSetup(s));
  let n = 0;
  const i = cs.instances[0]!;
  const dump = (t: number, k: number) => process.stderr.write(`E${n} t=${t} k=${k} batch=${i.runningBatch.map(r=>r.id+':'+r.progressIndex+'/'+r.inputLen+'+'+r.outputLen+':blk'+i.kv.blocksOf(r)+':nn'+r.numNewTokens).join(',')} pre=${i.metrics.preemptionCount} done=${i.metrics.completedRequests} used=${i.kv.usedBlocks()} waiting=${i.waitQ.toArray().map(r=>r.id+':blk'+i.kv.blocksOf(r)).join(',')}\n`);
  cs.onEvent = (t, k) => { n++; if (n < 60) dump(t, k); if (n > 40000) { dump(t,k); throw new Error('x'); } };
  try { cs.run(buildRequests(s)); } catch {}
});
