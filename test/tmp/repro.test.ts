import { it } from 'vitest';
import { buildCluster } from '../../src/sim/engine-setup.js';
import { buildRequests, toSetup, type EngineSpec } from '../property/scenarios.js';
it('repro', () => {
  const s: EngineSpec = {"numInstances":1,"blockSize":4,"totalBlocks":12,"cpuBlocks":1,"transferBandwidth":0.2,"transferBaseLatency":0,"maxNumSeqs":2,"maxNumBatchedTokens":2048,"longPrefillTokenThreshold":0,"scheduler":"sjf","preemptionPolicy":"fcfs","horizon":0,"admissionLatency":1,"routingLatency":0,"latency":{"kind":"trained-physics"},"requests":[{"gap":0,"input":1,"output":0,"vocab":1,"family":0,"slo":"","deadline":20000,"maxOut":"zero"},{"gap":0,"input":16,"output":2,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"half"},{"gap":0,"input":36,"output":6,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"zero"},{"gap":0,"input":38,"output":0,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"exact"},{"gap":0,"input":1,"output":0,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"zero"},{"gap":0,"input":1,"output":14,"vocab":1,"family":0,"slo":"","deadline":0,"maxOut":"exact"},{"gap":0,"input":37,"output":9,"vocab":3,"family":0,"slo":"","deadline":0,"maxOut":"exact"},{"gap":0,"input":1,"output":0,"vocab":1,"family":0,"slo":"","deadline":1,"maxOut":"exact"}],"maxModelLen":0};
  const cs = buildCluster(toSetup(s));
  let n = 0;
  const i = cs.instances[0]!;
  cs.onEvent = (t, k) => { n++; if (n > 20000) { process.stderr.write(`STATE t=${t} batch=${i.runningBatch.map(r=>r.id+':'+r.progressIndex+'/'+r.inputLen+'+'+r.outputLen+':blk'+i.kv.blocksOf(r)).join(',')} pre=${i.metrics.preemptionCount} done=${i.metrics.completedRequests} used=${i.kv.usedBlocks()} waiting=${i.waitQ.toArray().map(r=>r.id+':in'+r.inputLen+'+'+r.outputLen+':blk'+i.kv.blocksOf(r)).join(',')}\n`); throw new Error('x'); } };
  try { cs.run(buildRequests(s)); } catch {}
});
