/**
 * P/D disaggregation invariants (reference invariants.md INV-PD-1..6, 6b, INV-P2-1/2), checked on a finished
 * run from the parents' recorded phase times, their halves and the instances — never from the counters or the
 * projected values they check against each other:
 *   INV-PD-1 decode enqueue >= transfer complete; INV-PD-2 halves only on pool members; INV-PD-3 transfers
 *   initiated == completed (+ those still in flight at a bounded horizon); INV-PD-4 phase causality;
 *   INV-PD-5 pool membership unchanged; INV-PD-6 the cluster's per-request view holds parents only, each
 *   completed parent once; INV-PD-6b completion includes the decode pod's post-decode overhead; INV-P2-1 each
 *   instance was built with its pool's configuration; INV-P2-2 every transfer took the fair-share duration.
 */
import { PdPart, type Request } from '../../src/domain/request.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { hasRole, PoolRole } from '../../src/cluster/pd/pools.js';
import type { PdParent } from '../../src/cluster/pd/parent.js';
import { buildReport } from '../../src/sim/report.js';
import { overridesOf, type Classification, type InvariantContext } from './context.js';

/** Transfer duration recomputed independently of the simulator (reference formula). */
function expectedDuration(ctx: InvariantContext, p: PdParent, active: number): number {
  const pd = ctx.setup.pd as NonNullable<InvariantContext['setup']['pd']>;
  const t = pd.transfer;
  // Each configuration sizes its transfers with its own prefill TP (deployment files); else the global one.
  const perToken = pd.kvBytesPerTokenOf?.(ctx.cs.facts[p.prefillIndex]?.target) ?? t.kvBytesPerToken;
  const bytes = p.numKVBlocks * (t.blockSize * perToken);
  const bw = (t.bandwidthGBps * 1000) / (t.contention && active > 1 ? active : 1);
  return Math.max(1, Math.ceil(t.baseLatencyMs * 1000 + bytes / bw));
}

export function checkPd(ctx: InvariantContext, cls: Classification): string[] {
  const { cs, setup } = ctx;
  const pd = cs.pd;
  const pdSetup = setup.pd;
  if (pd === null || !pdSetup) return [];
  const v: string[] = [];
  const unbounded = setup.horizon >= MAX_INT64;
  // INV-PD-5 / INV-P2-1: membership as configured, each member built with its pool's KV size.
  // Node pools may leave configured instances unplaced (they take no position): a placed instance keeps the
  // role its configured index gives it, wherever it sits.
  cs.instances.forEach((inst, j) => {
    const m = /^instance_(\d+)$/.exec(inst.id);
    const k = m === null ? -1 : Number(m[1]);
    if (k < 0 || k >= pdSetup.roles.length) return;
    if (pd.role(j) !== pdSetup.roles[k]) v.push(`INV-PD-5: ${inst.id} role ${pd.role(j)} != configured ${pdSetup.roles[k]}`);
  });
  pdSetup.roles.forEach((role, i) => {
    if (i >= cs.instances.length || cs.instances[i]?.id !== `instance_${i}`) return;
    const inst = cs.instances[i];
    if (inst === undefined) return;
    const want = overridesOf(setup, i)?.kvTotalBlocks ?? setup.kv.totalBlocks;
    if (inst.kv.totalBlocks !== want) v.push(`INV-P2-1: ${inst.id} has ${inst.kv.totalBlocks} KV blocks, its pool's configuration says ${want}`);
  });
  let inFlight = 0;
  for (const p of pd.parents) {
    const id = p.id;
    const pi = p.prefillIndex;
    // INV-PD-2
    if (pi >= 0 && !hasRole(pd.role(pi), PoolRole.Prefill)) v.push(`INV-PD-2: ${id} prefill on ${cs.instances[pi]?.id}, not a prefill pod`);
    if (!hasRole(pd.role(p.decodeIndex), PoolRole.Decode)) v.push(`INV-PD-2: ${id} decode on ${cs.instances[p.decodeIndex]?.id}, not a decode pod`);
    if (p.prefill.assignedInstance !== '' && p.prefill.assignedInstance !== cs.instances[pi]?.id) v.push(`INV-PD-2: ${id} prefill half ran on ${p.prefill.assignedInstance}`);
    if (p.decode !== null && p.decodeEnqueueTime > 0 && p.decode.assignedInstance !== cs.instances[p.decodeIndex]?.id) v.push(`INV-PD-2: ${id} decode half on ${p.decode.assignedInstance}`);
    // INV-PD-1 and INV-PD-4
    if (p.decodeEnqueueTime > 0 && p.decodeEnqueueTime < p.transferCompleteTime) v.push(`INV-PD-1: ${id} decode enqueued at ${p.decodeEnqueueTime} before its transfer completed at ${p.transferCompleteTime}`);
    const chain: [string, number][] = [
      ['arrival', p.req.arrivalTime], ['prefill enqueue', p.prefillEnqueueTime], ['prefill complete', p.prefillCompleteTime],
      ['transfer start', p.transferStartTime], ['transfer complete', p.transferCompleteTime], ['decode enqueue', p.decodeEnqueueTime],
      ['completion', p.completionTime],
    ];
    const reached = chain.filter(([, t], k) => k === 0 || t > 0);
    for (let k = 1; k < reached.length; k++) {
      const [a, ta] = reached[k - 1] as [string, number];
      const [b, tb] = reached[k] as [string, number];
      if (tb < ta) v.push(`INV-PD-4: ${id} ${b} ${tb} < ${a} ${ta}`);
    }
    // (Corrected semantics stamp the completion at its step's end, which a horizon can cut before the transfer starts.)
    if (p.prefillCompleteTime > 0 && p.prefillCompleteTime <= setup.horizon && p.transferStartTime === 0) v.push(`INV-PD-4: ${id} prefill completed but no transfer started`);
    if (p.decode !== null && p.decodeEnqueueTime === 0 && p.transferStartTime > 0) inFlight++;
    // INV-P2-2 (the reference's transfer model; pipelining and granularity time transfers their own way)
    if (p.transferCompleteTime > 0 && pd.beyond === null) checkDuration(ctx, p, v);
    // Ownership: once the decode half has the KV, the prefill pod holds none of it (no block owned twice).
    const pInst = cs.instances[p.prefillIndex];
    if (p.decodeEnqueueTime > 0 && pInst !== undefined && pInst.kv.blocksOf(p.prefill) > 0) v.push(`ownership: ${id} prefill half still holds ${pInst.kv.blocksOf(p.prefill)} blocks on ${pInst.id} after its transfer`);
    if (p.heldOnPrefill && (p.decodeEnqueueTime > 0 || p.dropped)) v.push(`ownership: ${id} still marked held after its transfer ended`);
    // INV-PD-6b
    const dec = p.decode;
    if (dec !== null && dec.outcome === 'completed') {
      const post = (cs.instances[p.decodeIndex] as { postDecodeFixedOverhead(): number }).postDecodeFixedOverhead();
      if (p.completionTime - post < p.decodeEnqueueTime) v.push(`INV-PD-6b: ${id} completion ${p.completionTime} - overhead ${post} before its decode enqueue ${p.decodeEnqueueTime}`);
      if (p.req.hasE2E && p.req.arrivalTime + p.req.e2e < p.completionTime) v.push(`INV-PD-6b: ${id} arrival + E2E ${p.req.arrivalTime + p.req.e2e} < completion ${p.completionTime}`);
      if (p.req.hasTTFT && p.req.hasE2E && p.req.ttft > p.req.e2e) v.push(`INV-5 ${id}: parent TTFT ${p.req.ttft} > E2E ${p.req.e2e}`);
    }
  }
  // INV-PD-3
  const diff = pd.transfersInitiated - pd.transfersCompleted;
  if (unbounded && diff !== 0) v.push(`INV-PD-3: ${pd.transfersInitiated} transfers initiated, ${pd.transfersCompleted} completed`);
  if (diff !== inFlight) v.push(`INV-PD-3: initiated - completed = ${diff}, but ${inFlight} transfers are in flight`);
  let halvesInTransfer = 0;
  for (const b of cls.bucket.values()) if (b === 'kv_transfer') halvesInTransfer++;
  if (halvesInTransfer !== inFlight) v.push(`INV-PD-3: ${inFlight} transfers in flight, but ${halvesInTransfer} decode halves are between their transfer's start and end`);
  // INV-PD-6: the cluster's per-request view.
  const agg = buildReport(cs).aggregate.requests;
  const seen = new Set<Request>();
  for (const r of agg) {
    if (r.pdPart !== PdPart.None || /_(prefill|decode)$/.test(r.id)) v.push(`INV-PD-6: ${r.id} (a half) in the cluster's per-request view`);
    if (seen.has(r)) v.push(`INV-PD-6: ${r.id} twice in the cluster's per-request view`);
    seen.add(r);
  }
  for (const p of pd.parents) {
    // Corrected semantics (D3): a parent dropped at the decode pod has no per-request entry.
    const completed = p.completionTime > 0 && !(pd.corrected && p.dropped);
    if (completed !== p.req.registered) v.push(`INV-PD-6: ${p.id} ${completed ? 'completed but has no per-request entry' : 'incomplete but has a per-request entry'}`);
    if (!completed && (p.req.hasTTFT || p.req.hasE2E)) v.push(`INV-PD-6: incomplete ${p.id} has latency samples`);
    if (cls.bucket.get(p.req) === 'completed' && !(p.req.hasTTFT && p.req.hasE2E)) v.push(`INV-PD-6: completed ${p.id} lacks TTFT or E2E`);
  }
  return v;
}

/** INV-P2-2: the transfer took the duration of its blocks at the bandwidth share it started with. */
function checkDuration(ctx: InvariantContext, p: PdParent, v: string[]): void {
  const pd = ctx.cs.pd;
  if (pd === null || p.dropped && p.transferCompleteTime === 0) return;
  const d = p.transferCompleteTime - p.transferStartTime;
  const t = ctx.setup.pd?.transfer;
  if (!t) return;
  if (!t.contention) {
    const want = expectedDuration(ctx, p, 1);
    if (d !== want) v.push(`INV-P2-2: ${p.id} transfer took ${d} µs, ${p.numKVBlocks} blocks at full bandwidth take ${want}`);
    return;
  }
  // Active at start: this one plus every other transfer started no later and not yet completed then
  // (ties at the same tick depend on event order, so they bound the count from above).
  let lo = 1;
  let hi = 1;
  for (const q of pd.parents) {
    if (q === p || q.transferStartTime === 0 || q.decode === null && q.transferCompleteTime === 0) continue;
    const end = q.transferCompleteTime === 0 ? Infinity : q.transferCompleteTime;
    if (q.transferStartTime < p.transferStartTime && end >= p.transferStartTime) {
      lo++;
      hi++;
    } else if (q.transferStartTime === p.transferStartTime) hi++;
  }
  for (let k = lo; k <= hi; k++) if (expectedDuration(ctx, p, k) === d) return;
  v.push(`INV-P2-2: ${p.id} transfer took ${d} µs; with ${lo}..${hi} transfers sharing the link it should take ${expectedDuration(ctx, p, lo)}..${expectedDuration(ctx, p, hi)}`);
}
