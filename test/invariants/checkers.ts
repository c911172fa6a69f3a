/**
 * Reusable invariant checkers (reference docs/contributing/standards/invariants.md, INV-1..INV-12). Each
 * returns a list of violations (empty = holds) so a test can report every broken invariant of a run at once;
 * {@link assertInvariants} runs all that apply and throws with the full list. Expected values are derived
 * from per-request state, never from the counters under test.
 */
import { PdPart, RequestState } from '../../src/domain/request.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { isCorrected } from '../../src/domain/semantics.js';
import type { Instance } from '../../src/instance/instance.js';
import type { Request } from '../../src/domain/request.js';
import { buildReport } from '../../src/sim/report.js';
import { loraViolations } from './lora.js';
import { classify, countBuckets, indexOf, instanceOf, limitsOf, queuedTime, STATE_NAMES, topLevel, waitingBlockAllowance, type Classification, type InvariantContext } from './context.js';
import { checkEncode } from './encode.js';
import { checkPd } from './pd.js';
import { checkScaling } from './scaling.js';
import { kvTierViolations } from './kv-tiers.js';

export type { InvariantContext } from './context.js';

/**
 * INV-1 request conservation, per instance and for the cluster, plus "every request ends in exactly one
 * counted state". The reference's identity `injected = completed + queued + running + dropped + timed_out`
 * holds by construction of `injected_requests`; what can break is the counters disagreeing with where the
 * requests really are (the encode_routing_rejections term included), so each counter is compared with a count over the requests' own states. The one
 * tolerated gap (requests routed to an instance whose Arrival/Queued event lies past the horizon) is
 * computed exactly: a request is in that gap iff its QueuedEvent time exceeds the horizon.
 */
export function checkConservation(ctx: InvariantContext, cls: Classification = classify(ctx)): string[] {
  const { cs, requests, setup } = ctx;
  const v = [...cls.violations];
  cs.instances.forEach((inst, i) => {
    const m = inst.metrics;
    const mine = new Set(m.requests);
    if (mine.size !== m.requests.length) v.push(`INV-1 ${inst.id}: a request was injected twice`);
    for (const r of m.requests) if (r.assignedInstance !== inst.id) v.push(`INV-1 ${inst.id}: holds ${r.id} routed to '${r.assignedInstance}'`);
    const c = countBuckets(cls, (r) => mine.has(r));
    const eq = (name: string, counter: number, actual: number): void => {
      if (counter !== actual) v.push(`INV-1 ${inst.id}: ${name} counter=${counter} but ${actual} requests are in that state`);
    };
    eq('completed', m.completedRequests, c.completed);
    eq('timed_out', m.timedOutRequests, c.timed_out);
    eq('dropped_unservable', m.droppedUnservable, c.dropped_unservable);
    eq('still_queued', m.stillQueued, c.still_queued);
    eq('still_running', m.stillRunning, c.still_running);
    eq('still_queued (waitQ length)', inst.waitQ.length, c.still_queued);
    eq('still_running (batch length)', inst.runningBatch.length, c.still_running);
    const injected = m.completedRequests + m.stillQueued + m.stillRunning + m.droppedUnservable + m.timedOutRequests;
    // Requests evicted in flight by the gateway or killed by a drain were routed here but leave every instance bucket.
    const gap = m.requests.length - injected;
    if (gap !== c.instance_pipeline + c.gateway_evicted + c.drain_killed) {
      v.push(`INV-1 ${inst.id}: routed=${m.requests.length}, injected=${injected}: gap ${gap} != ${c.instance_pipeline} requests still in the instance pipeline at the horizon + ${c.gateway_evicted} evicted + ${c.drain_killed} killed by a drain`);
    }
    for (const r of m.requests) {
      if (cls.where.has(r) && cls.where.get(r) !== i) v.push(`INV-1 ${inst.id}: ${r.id} is queued/running on another instance`);
    }
  });
  const all = countBuckets(cls, topLevel);
  // A split request reached the instances through its prefill half (counted once).
  let routed = cs.instances.reduce((s, inst) => s + inst.metrics.requests.filter(topLevel).length, 0);
  for (const p of cs.pd?.parents ?? []) if (p.prefill.assignedInstance !== '') routed++;
  const rejections = cs.rejectedRequests + cs.routingRejections;
  if (all.rejected !== rejections) v.push(`INV-1 cluster: ${all.rejected} requests rejected but counters say ${rejections}`);
  const g = cs.gatewayCounters();
  const gw = (name: string, counter: number, actual: number): void => {
    if (counter !== actual) v.push(`INV-1 cluster: gateway ${name} counter=${counter} but ${actual} requests are in that state`);
  };
  gw('queue_shed', g.queueShed, all.gateway_shed);
  gw('queue_rejected', g.queueRejected, all.gateway_rejected);
  gw('expired', g.expired, all.gateway_expired);
  gw('evicted', g.evicted, all.gateway_evicted);
  // A request dispatched from the gateway whose routing event lies past the horizon is in neither place.
  if (setup.routingLatency === 0) gw('queue_depth', g.queueDepth, all.gateway_queued);
  else if (g.queueDepth > all.gateway_queued) gw('queue_depth', g.queueDepth, all.gateway_queued);
  // Drains kill what runs on instances: ordinary requests and P/D halves (a split request follows its half).
  const killed = countBuckets(cls, (r) => !cls.split.has(r)).drain_killed;
  if (cs.drainKilled !== killed) v.push(`INV-1 cluster: ${cs.drainKilled} requests counted as killed by drains but ${killed} are`);
  if (cs.delayedNow.size !== all.admission_delayed) v.push(`INV-1 cluster: ${cs.delayedNow.size} requests counted as delayed but ${all.admission_delayed} are`);
  // E/P/D: lost at encode routing, after the decode pod was chosen but before anything was injected.
  if (cs.encodeRoutingRejections !== all.encode_rejected) v.push(`INV-1 cluster: encode_routing_rejections=${cs.encodeRoutingRejections} but ${all.encode_rejected} requests are in that state`);
  const unrouted = rejections + all.encode_rejected + all.gateway_rejected + all.gateway_shed + all.gateway_expired + all.gateway_queued + all.cluster_pipeline + all.admission_delayed;
  if (requests.length !== routed + unrouted) {
    v.push(`INV-1 cluster: num_requests=${requests.length} != routed ${routed} + never routed ${unrouted} (${JSON.stringify(all)})`);
  }
  const arrived = requests.filter((r) => r.arrivalTime <= setup.horizon).length;
  if (cs.arrivals.length !== arrived) v.push(`INV-1 cluster: ${cs.arrivals.length} ClusterArrival events executed, ${arrived} arrivals are <= horizon`);
  const out = buildReport(cs).clusterOutput;
  const json = (k: string, want: number): void => {
    if (out[k] !== want) v.push(`INV-1 output: ${k}=${String(out[k])}, requests say ${want}`);
  };
  json('completed_requests', all.completed);
  json('still_queued', all.still_queued);
  json('still_running', all.still_running);
  json('dropped_unservable', all.dropped_unservable);
  json('timed_out_requests', all.timed_out);
  json('injected_requests', all.completed + all.still_queued + all.still_running + all.dropped_unservable + all.timed_out);
  return v;
}

/** INV-2 request lifecycle: state and recorded metrics consistent with the bucket the request ended in. */
export function checkLifecycle(ctx: InvariantContext, cls: Classification = classify(ctx)): string[] {
  const { cs, setup } = ctx;
  const v: string[] = [];
  const mml = setup.maxModelLen;
  for (const [r, b] of cls.bucket) {
    // A split request never runs itself; its halves are checked here, the request by checkPd.
    if (cls.split.has(r)) continue;
    const decodeHalf = r.pdPart === PdPart.Decode;
    const bad = (what: string): void => {
      v.push(`INV-2 ${r.id} (${b}, state=${STATE_NAMES[r.state] ?? r.state}): ${what}`);
    };
    if (STATE_NAMES[r.state] === undefined) bad('invalid state value');
    const inst = instanceOf(cs, r);
    const blocks = inst ? inst.kv.blocksOf(r) : 0;
    const wantState = b === 'completed' ? RequestState.Completed : b === 'timed_out' ? RequestState.TimedOut : b === 'still_running' ? RequestState.Running : RequestState.Queued;
    // An in-flight eviction or a drain kill takes the request out of its instance in whatever state it had.
    if (r.state !== wantState && b !== 'gateway_evicted' && b !== 'drain_killed') bad(`expected state ${STATE_NAMES[wantState]}`);
    // A queued decode half keeps the KV its transfer reserved (until a preemption releases it).
    const held = r.pdPart === PdPart.Prefill && cs.pd?.parentOf(r)?.heldOnPrefill === true;
    const allowed = held ? Infinity : b === 'still_queued' && inst ? (decodeHalf ? Math.ceil(r.inputLen / inst.kv.blockSize) : waitingBlockAllowance(inst, r)) : 0;
    if (b !== 'still_running' && blocks > allowed) bad(`holds ${blocks} KV blocks outside the batch (allowed ${allowed})`);
    switch (b) {
      case 'completed':
        // A decode half arrives with its prompt's KV: its first token is the prefill half's, unless a preemption
        // on its pod made it prefill again (the reference then stamps its own TTFT).
        if (!decodeHalf && (!r.hasTTFT || !r.ttftSet)) bad('completed without a TTFT');
        if (decodeHalf && (r.hasTTFT || r.ttftSet) && (inst?.metrics.preemptionCount ?? 0) === 0) bad('decode half with a TTFT of its own');
        if (!r.hasE2E) bad('completed without an E2E');
        if (!r.hasSchedulingDelay) bad('completed without a scheduling delay');
        if (!r.registered) bad('completed but not registered in the instance metrics');
        if (r.scheduledStepIdx < 1 || r.finishedStepIdx < r.scheduledStepIdx) bad(`step indexes scheduled=${r.scheduledStepIdx} finished=${r.finishedStepIdx}`);
        if (!decodeHalf && r.ttft !== r.firstTokenTime) bad(`recorded TTFT ${r.ttft} != first token time ${r.firstTokenTime}`);
        if (decodeHalf && !r.lengthCapped) {
          // Its first decode step moves PI past the input, so a one-token output ends one position later.
          if (r.progressIndex !== r.inputLen + Math.max(r.outputLen - 1, 1)) bad(`decode half completed at PI=${r.progressIndex}, expected ${r.inputLen + Math.max(r.outputLen - 1, 1)}`);
        } else if (r.lengthCapped) {
          const cap = inst?.maxModelLen ?? mml;
          if (!(cap > 0 && r.progressIndex >= cap - 1)) bad(`length-capped at PI=${r.progressIndex} with max-model-len ${cap}`);
        } else if (r.progressIndex !== r.inputLen + Math.max(r.outputLen, 1) - 1) {
          bad(`completed at PI=${r.progressIndex}, expected inputLen+max(outputLen,1)-1 = ${r.inputLen + Math.max(r.outputLen, 1) - 1}`);
        }
        break;
      case 'timed_out':
        if (r.hasE2E) bad('timed out but has an E2E');
        if (!r.registered) bad('timed out but not registered');
        break;
      case 'dropped_unservable':
      case 'rejected':
      case 'encode_rejected':
        if (r.registered) bad('left at the door but still registered');
        if (r.hasTTFT || r.hasE2E || r.hasSchedulingDelay) bad('left at the door but has latency samples');
        if (r.progressIndex !== 0) bad(`left at the door with PI=${r.progressIndex}`);
        if (b !== 'dropped_unservable' && r.assignedInstance !== '') bad('rejected but routed');
        break;
      case 'still_queued':
        if (decodeHalf) {
          if (r.ttftSet || (r.progressIndex !== r.inputLen && r.progressIndex !== 0)) bad(`queued decode half with PI=${r.progressIndex}`);
        // E13 (vLLM recompute preemption): a preempted request that had produced tokens keeps its TTFT.
        } else if (r.progressIndex !== 0 || (r.ttftSet && r.replayTokens === 0) || r.computedTokens !== 0) bad(`queued with PI=${r.progressIndex} ttftSet=${r.ttftSet} computed=${r.computedTokens} (not reset)`);
        break;
      case 'still_running':
        if (!r.registered || !r.hasSchedulingDelay || r.scheduledStepIdx < 1) bad('running without having been scheduled');
        if (r.hasE2E) bad('running but has an E2E');
        break;
      case 'instance_pipeline':
      case 'cluster_pipeline':
      case 'gateway_queued':
      case 'gateway_rejected':
      case 'gateway_shed':
      case 'gateway_expired':
        if (r.progressIndex !== 0 || r.hasTTFT || r.hasSchedulingDelay) bad('never enqueued but has progress or samples');
        break;
      case 'gateway_evicted':
      case 'drain_killed':
        break;
      case 'kv_transfer': {
        // Reserved on the decode pod at the transfer's start (PI at the input's end), not yet registered there.
        if (r.registered || r.hasTTFT || r.hasE2E || r.hasSchedulingDelay) bad('in transfer but registered or has latency samples');
        if (r.progressIndex !== r.inputLen) bad(`in transfer with PI=${r.progressIndex}, expected the input length ${r.inputLen}`);
        const p = cs.pd?.parentOf(r);
        const dec = p === undefined ? undefined : cs.instances[p.decodeIndex];
        const want = dec === undefined ? 0 : Math.ceil(r.inputLen / dec.kv.blockSize);
        const got = dec?.kv.blocksOf(r) ?? -1;
        if (got !== want) bad(`in transfer holding ${got} KV blocks on its decode pod, its reservation is ${want}`);
        break;
      }
    }
  }
  return v;
}

/** INV-3 clock monotonicity (event times from the recorder) and end-time bounds (always). */
export function checkClock(ctx: InvariantContext): string[] {
  const { cs, setup, log } = ctx;
  const v: string[] = [];
  for (const inst of cs.instances) {
    const m = inst.metrics;
    if (m.simEndedTime > setup.horizon) v.push(`INV-3 ${inst.id}: sim ended at ${m.simEndedTime} > horizon ${setup.horizon}`);
    if (m.simEndedTime !== Math.min(inst.clock, setup.horizon)) v.push(`INV-3 ${inst.id}: simEndedTime ${m.simEndedTime} != min(clock ${inst.clock}, horizon)`);
    if (inst.clock > cs.clock) v.push(`INV-3 ${inst.id}: instance clock ${inst.clock} ahead of the cluster clock ${cs.clock}`);
  }
  if (!log) return v;
  v.push(...log.clockViolations());
  cs.instances.forEach((inst, i) => {
    const last = log.lastInstanceTime[i] ?? 0;
    if (last !== inst.clock) v.push(`INV-3 ${inst.id}: clock ${inst.clock} != time of its last executed event ${last}`);
  });
  return v;
}

/** INV-4 KV block conservation at the end of the run, plus no leaked blocks. */
export function checkKV(ctx: InvariantContext): string[] {
  const v: string[] = [];
  ctx.cs.instances.forEach((inst, i) => {
    const err = inst.kv.checkConservation();
    if (err) v.push(`INV-4 ${inst.id}: ${err}`);
    v.push(...kvUsage(inst, reservedOn(ctx, i)));
    v.push(...kvTierViolations(inst));
  });
  return v;
}

/**
 * P/D: requests holding KV on instance `index` outside its queue and batch — decode halves whose KV is
 * reserved while their transfer is in flight, and (single ownership) finished prefill halves holding theirs.
 */
export function reservedOn(ctx: InvariantContext, index: number): Request[] {
  const out: Request[] = [];
  for (const p of ctx.cs.pd?.parents ?? []) {
    if (p.decode !== null && p.decodeIndex === index && p.decodeEnqueueTime === 0) out.push(p.decode);
    if (p.heldOnPrefill && p.prefillIndex === index) out.push(p.prefill);
  }
  return out;
}

/**
 * Used blocks can only be held by requests in the instance (blocks may be shared, so the sum bounds them);
 * waiting requests hold none except the tiered quirk of {@link waitingBlockAllowance}.
 */
export function kvUsage(inst: Instance, reserved: readonly Request[] = []): string[] {
  const used = inst.kv.usedBlocks();
  let held = 0;
  for (const r of reserved) held += inst.kv.blocksOf(r);
  for (const r of inst.runningBatch) held += inst.kv.blocksOf(r);
  for (const r of inst.waitQ.toArray()) held += inst.kv.blocksOf(r);
  if (used > inst.kv.totalBlocks || used < 0) return [`INV-4 ${inst.id}: usedBlocks ${used} outside [0, ${inst.kv.totalBlocks}]`];
  if (used > held) return [`INV-4 ${inst.id}: ${used} blocks in use but running requests hold only ${held} (leak)`];
  return [];
}

/**
 * INV-5 causality for completed requests: arrival <= enqueue (arrival + admission + routing + queueing
 * delay) <= scheduling (arrival + schedulingDelay; corrected semantics: enqueue + schedulingDelay) < first token (TTFT) <= completion (E2E), and E2E is
 * TTFT + the final attempt's ITLs + the post-decode overhead.
 */
export function checkCausality(ctx: InvariantContext, cls: Classification = classify(ctx)): string[] {
  const { setup } = ctx;
  const corrected = isCorrected(setup.semantics);
  const v: string[] = [];
  for (const [r, b] of cls.bucket) {
    if (r.hasTTFT && r.ttft < 1) v.push(`INV-5 ${r.id}: TTFT ${r.ttft} < 1 tick`);
    // Split requests and their decode halves have their own causal chain (INV-PD-4, checkPd).
    if (b !== 'completed' || cls.split.has(r) || r.pdPart === PdPart.Decode) continue;
    const idx = indexOf(ctx.cs, r);
    const lat = idx < 0 ? setup.latency : limitsOf(ctx, idx).latency;
    const post = lat.postDecodeFixedOverhead();
    const otp = lat.outputTokenProcessingTime();
    const enq = queuedTime(setup, r, lat);
    // The reference measures the delay from arrival to the last admission; corrected semantics (E7) from the
    // enqueue to the first admission.
    const sched = (corrected ? r.enqueueTime : r.arrivalTime) + r.schedulingDelay;
    if (!(r.arrivalTime <= enq && enq <= sched)) v.push(`INV-5 ${r.id}: arrival ${r.arrivalTime} <= enqueue ${enq} <= schedule ${sched} violated`);
    if (!(sched - r.arrivalTime < r.ttft)) v.push(`INV-5 ${r.id}: scheduling at ${sched} is not before the first token (arrival ${r.arrivalTime} + TTFT ${r.ttft})`);
    if (!(r.ttft <= r.e2e)) v.push(`INV-5 ${r.id}: TTFT ${r.ttft} > E2E ${r.e2e}`);
    const want = r.firstTokenTime + r.itlSum + (r.outputLen > 0 ? post : 0);
    if (r.e2e !== want) v.push(`INV-5 ${r.id}: E2E ${r.e2e} != TTFT + ΣITL + post-decode = ${want}`);
    // Each ITL is one step (>= 1 tick) plus the per-token overhead, and the final attempt's decode steps all
    // lie between its first token and the step that completed it (which ends by the instance's last event
    // when the horizon is unbounded), so ΣITL is bounded both ways.
    const decoded = r.progressIndex - r.inputLen;
    if (r.itlSum < decoded * (1 + otp)) v.push(`INV-5 ${r.id}: ΣITL ${r.itlSum} < ${decoded} decode steps x (1 + ${otp})`);
    const inst = instanceOf(ctx.cs, r);
    if (inst && setup.horizon >= MAX_INT64) {
      const latest = inst.clock + (decoded + 1) * otp + (r.outputLen > 0 ? post : 0);
      if (r.arrivalTime + r.e2e > latest) v.push(`INV-5 ${r.id}: completes at ${r.arrivalTime + r.e2e}, after the instance's last event ${inst.clock} + token overheads (${latest})`);
    }
  }
  return v;
}

/**
 * INV-8 work-conserving, end state: an instance with queued or running work must have a step pending (at the
 * horizon it lies beyond it); with an unbounded horizon nothing may be left anywhere.
 */
export function checkWorkConserving(ctx: InvariantContext, cls: Classification = classify(ctx)): string[] {
  const v: string[] = [];
  for (const inst of ctx.cs.instances) {
    // A LoRA load in flight is pending work too: its completion forms the next step.
    if ((inst.waitQ.length > 0 || inst.runningBatch.length > 0) && !inst.isStepPending && inst.adapterLoading === '') {
      v.push(`INV-8 ${inst.id}: ${inst.waitQ.length} queued / ${inst.runningBatch.length} running but no step pending (stranded)`);
    }
  }
  if (ctx.setup.horizon >= MAX_INT64) {
    const c = countBuckets(cls, topLevel);
    const left = c.still_queued + c.still_running + c.instance_pipeline + c.cluster_pipeline;
    if (left > 0) v.push(`INV-8: unbounded horizon but ${left} requests never finished (${JSON.stringify(c)})`);
  }
  if (ctx.log) {
    ctx.log.finish();
    v.push(...ctx.log.violations);
  }
  return v;
}

/**
 * Go's enqueue guard, recomputed from the control-plane fields only: input length and the client budget
 * (`maxOutputLen` after auto-fill).
 */
export function unservable(inputLen: number, maxOutputLen: number, maxModelLen: number, blockSize: number, totalBlocks: number): boolean {
  if (maxOutputLen < 0) return true;
  if (maxModelLen > 0 && (inputLen >= maxModelLen || (maxOutputLen > 0 && inputLen + maxOutputLen > maxModelLen))) return true;
  return Math.ceil(inputLen / blockSize) > totalBlocks;
}

/**
 * INV-9 oracle boundary: every enqueue decision must equal the guard computed without OutputTokens, both
 * ways (dropped iff unservable by input length and client budget alone). With a recorder, the auto-filled
 * budget is recomputed from the budget the request had before the run, so a fill that peeks at the oracle
 * output is caught too.
 */
export function checkOracleBoundary(ctx: InvariantContext, cls: Classification = classify(ctx)): string[] {
  const { setup } = ctx;
  const v: string[] = [];
  const passedGuard = new Set(['completed', 'timed_out', 'dropped_unservable', 'still_queued', 'still_running']);
  for (const [r, b] of cls.bucket) {
    if (!passedGuard.has(b)) continue;
    // Decode halves skip the enqueue guards (their KV is already allocated); split requests never enqueue.
    if (cls.split.has(r) || r.pdPart === PdPart.Decode) continue;
    const idx = indexOf(ctx.cs, r);
    const lim = idx < 0 ? null : limitsOf(ctx, idx);
    const mml = lim?.maxModelLen ?? setup.maxModelLen;
    const before = ctx.log?.initialMaxOutputLen.get(r);
    let budget = r.maxOutputLen;
    if (before !== undefined) {
      budget = before === 0 && mml > 0 && r.inputLen < mml ? mml - r.inputLen : before;
      if (r.maxOutputLen !== budget) v.push(`INV-9 ${r.id}: client budget ${before} became ${r.maxOutputLen} at enqueue, expected ${budget}`);
    }
    const want = unservable(r.inputLen, budget, mml, setup.kv.blockSize, lim?.totalBlocks ?? setup.kv.totalBlocks);
    if (want !== (b === 'dropped_unservable')) {
      v.push(`INV-9 ${r.id}: ${b} but the output-blind guard says ${want ? 'unservable' : 'servable'} (input ${r.inputLen}, maxOutputLen ${budget}, outputs ${r.outputLen})`);
    }
  }
  return v;
}

/**
 * Token accounting per instance: total output tokens and AllITLs count match the completed requests (a
 * request with L outputs contributes L tokens and L-1 ITLs; a length-capped one its decoded tokens, +1 for
 * the prefill token), TTFT sum and input tokens (counted at enqueue) match.
 */
export function checkTokenAccounting(ctx: InvariantContext, cls: Classification = classify(ctx)): string[] {
  const v: string[] = [];
  const spec = (ctx.setup.speculative ?? null) !== null;
  for (const inst of ctx.cs.instances) {
    const m = inst.metrics;
    let out = 0;
    let itls = 0;
    let ttftSum = 0;
    let input = 0;
    let capped = 0;
    let evictedInput = 0;
    for (const r of m.requests) {
      const b = cls.bucket.get(r);
      const decodeHalf = r.pdPart === PdPart.Decode;
      // A decode half's prompt was counted by its prefill half.
      if (!decodeHalf && (b === 'completed' || b === 'timed_out' || b === 'still_queued' || b === 'still_running')) input += r.inputLen;
      if (b === 'gateway_evicted' || b === 'drain_killed') evictedInput += r.inputLen;
      if (b !== 'completed') continue;
      const decoded = r.progressIndex - r.inputLen;
      if (r.lengthCapped) {
        capped++;
        out += Math.max(decoded < r.outputLen ? decoded + 1 : decoded, 0);
      } else {
        out += r.outputLen;
        const want = decodeHalf ? Math.max(r.outputLen - 1, 1) : Math.max(r.outputLen - 1, 0);
        if (decoded !== want) v.push(`tokens ${r.id}: ${decoded} ITL-producing decode steps for ${r.outputLen} outputs`);
      }
      // Speculative decoding: one ITL per verification step, which emits one or more tokens.
      itls += spec ? r.itlCount : decoded;
      ttftSum += r.firstTokenTime;
    }
    const eq = (name: string, got: number, want: number): void => {
      if (got !== want) v.push(`tokens ${inst.id}: ${name}=${got}, completed requests say ${want}`);
    };
    eq('total_output_tokens', m.totalOutputTokens, out);
    eq('AllITLs count', allItlCount(inst), itls);
    eq('ttftSum', m.ttftSum, ttftSum);
    // Whether an evicted request had passed the enqueue guard is not recorded, so it bounds the count.
    if (evictedInput === 0) eq('total_input_tokens', m.totalInputTokens, input);
    else if (m.totalInputTokens < input || m.totalInputTokens > input + evictedInput) {
      v.push(`tokens ${inst.id}: total_input_tokens=${m.totalInputTokens} outside [${input}, ${input + evictedInput}]`);
    }
    eq('length_capped_requests', m.lengthCappedRequests, capped);
  }
  return v;
}

/** Size of the instance's AllITLs multiset (per-step ITL values times their use counts, plus the by-value gaps). */
export function allItlCount(inst: Instance): number {
  const m = inst.metrics;
  const counts = m.stepItlUses.counts;
  const n = Math.min(m.stepItl.length, counts.length);
  let total = 0;
  for (let i = 0; i < n; i++) total += counts[i] as number;
  for (let i = n; i < counts.length; i++) if (counts[i] !== 0) return -1; // a use of a step that never ran
  // Prefill-first: a gap that ended a stall is kept by value (the step's ITL plus the stalled ticks).
  return total + m.extraItl.length;
}

/** All checkers that apply to a finished run (the per-event ones too when `ctx.log` recorded the run). */
export function collectViolations(ctx: InvariantContext): string[] {
  const cls = classify(ctx);
  return [
    ...checkConservation(ctx, cls),
    ...checkLifecycle(ctx, cls),
    ...checkClock(ctx),
    ...checkKV(ctx),
    ...checkCausality(ctx, cls),
    ...checkWorkConserving(ctx, cls),
    ...checkOracleBoundary(ctx, cls),
    ...checkTokenAccounting(ctx, cls),
    ...ctx.cs.instances.flatMap((inst) => loraViolations(inst)),
    ...(ctx.cs.pd !== null ? checkPd(ctx, cls) : []),
    ...checkEncode(ctx, cls),
    ...checkScaling(ctx, ctx.scalingBounds ?? null),
  ];
}

/** Throws listing every violation (capped at 50 lines so a cascade stays readable). */
export function assertInvariants(ctx: InvariantContext): void {
  const v = collectViolations(ctx);
  if (v.length === 0) return;
  const shown = v.slice(0, 50);
  if (v.length > shown.length) shown.push(`... and ${v.length - shown.length} more`);
  throw new Error(`${v.length} invariant violation(s):\n  ${shown.join('\n  ')}`);
}
