/**
 * Gateway flow control (`--flow-control`; reference gateway_queue.go, flow_control_admission.go,
 * eviction_tracker.go, sim/saturation.go and the Gateway* events of cluster_event.go; blis-cluster.md §2.4).
 *
 * INTEGRATION NOTES (for the cluster: construction in src/cluster/core.ts, the host and handlers in
 * src/cluster/pipeline.ts, the event dispatch in src/cluster/cluster.ts)
 *
 * Construction — after the admission policy is built, before tenant budgets:
 *   const r = resolveFlowControlFlags(flags)            // CLI: print r.warnings; r.ok === false → usage error
 *   fc = new FlowController(r.config, priorities, host) // only when r.config !== null
 *   admission = fc.admission                            // REPLACES --admission-policy entirely
 *   if budgets: admission = tenantBudget(admission, tenantTracker, priorities)  // budget checked before enqueue
 *
 * New cluster event kinds (same-tick order by priority, then push sequence):
 *   GatewayEviction      prio 5   payload { req, instanceId }
 *   GatewayQueueTTL      prio 6   payload req
 *   GatewayDispatchTick  prio 7   no payload (the time is the argument)
 *
 * The host (implemented by the cluster; each schedule* pushes exactly one event immediately, because the
 * controller calls them in the reference's push order):
 *   routerState()                       buildRouterState(cs, nil): all routable instances, NO model filter, with
 *                                       the usual refresh-on-read side effects. Called only when the queue is
 *                                       non-empty (never build it eagerly: a read refreshes periodic snapshots).
 *   scheduleDispatchTick(at)            GatewayDispatchTick at `at`
 *   scheduleTtl(at, req)                GatewayQueueTTL at `at`
 *   scheduleEviction(at, req, inst)     GatewayEviction at `at` (= now)
 *   scheduleRouting(req, dispatchedAt)  RoutingDecision at dispatchedAt + routingLatency. The routing event
 *                                       builds its own fresh, model-filtered state then ("late binding": the
 *                                       target is chosen at dispatch, not at enqueue).
 *
 * Handlers:
 *   AdmissionDecision(req, now):
 *     d = admission.admit(req, routerState(req))         // fc.admission only stamps state.clock and enqueues
 *     !d.admitted → rejectedRequests++, shedByTier[tier(req)]++, trace record, stop (tenant-budget-shed only;
 *                   flow control itself always admits)
 *     trace record Admitted:true, reason d.reason ('flow-control-enqueued' | 'flow-control-queue-rejected';
 *                   queue-rejected/shed/expired requests keep this Admitted:true record and get no routing record)
 *     r = fc.onAdmitted(req, now)                         // instead of scheduling RoutingDecision
 *     r.outcome === 'shed-victim' → shedByTier[tier(r.victim)]++
 *     (onAdmitted, unless rejected: scheduleTtl(now + TTL) when TTL > 0, then one tryDispatch(now))
 *   GatewayDispatchTick(at):  fc.onDispatchTick(at)     // dispatches ≤ 1, reschedules at+interval while non-empty
 *   GatewayQueueTTL(req):     if (fc.onTtlExpiry(req)) shedByTier[tier(req)]++   // no-op once dispatched/shed
 *   GatewayEviction(req, inst): ok = instance(inst).evictRequest(req) (remove from wait queue or running batch,
 *                   free its KV, state Completed, no completion counted); if !ok stop; else inFlight[inst]−−
 *                   (clamp 0), tenantTracker.onComplete(req.tenantId), fc.onEvicted(req), shedByTier[tier(req)]++
 *   After a routing injection: fc.onRouted(req, targetInstanceId) — on the standard path and on the PD path
 *                   that decides not to disaggregate; prefill and decode sub-requests are not tracked.
 *   Instance request-done hook (every terminal state): tenant onComplete, then fc.onRequestDone(req).
 *   tier(req) = req.sloClass || 'standard'.
 *   End of run: when fc.depth > 0 the reference logs the warning
 *                   "[cluster] <n> requests remain in gateway queue at simulation end".
 *
 * Dispatch rate (Hard part 5): one attempt per accepted enqueue plus one per tick; each attempt releases at
 * most one request. The tick (default 1000 µs; --dispatch-tick-interval 0 also means 1000) is demand-driven:
 * the first attempt on a non-empty queue schedules it at now + interval, it reschedules itself while the queue
 * is non-empty and stops (clearing the pending flag) when it finds the queue empty. An attempt under saturation
 * ≥ 1 with --in-flight-eviction, a tracked sheddable request and a non-sheddable class waiting evicts one and
 * dispatches nothing. Gating uses band ceilings over ALL bands ever created (empty ones too), highest first,
 * whatever --dispatch-order says; "fifo" only differs from "priority" in the ungated dequeue nobody calls.
 *
 * Counters: fc.counters() = { queueDepth (still queued at the end), queueShed, queueRejected, evicted, expired }
 * is metrics' GatewayCounters. Queue rejections are NOT admission rejections and NOT in shedByTier; shed
 * victims, TTL expiries and evictions are in shedByTier. Anomaly Counters prints, after "Length-Capped
 * Requests", each of "Gateway Queue Depth (horizon)", "Gateway Queue Shed", "Gateway Queue Rejected",
 * "Gateway Evicted (in-flight)", "Gateway Expired (TTL)" only when > 0 (and any of them makes the section
 * appear); the "  Shed (<tier>): n" lines under "Rejected Requests (Admission)" come from shedByTier.
 * INV-1: injected = completed + still queued + still running + dropped + timed out + routing rejections
 * + queueDepth + queueShed + queueRejected + evicted + expired (+ encode routing rejections).
 *
 * Per-request metrics: req.gatewayEnqueueTime / gatewayDispatchTime are stamped here. metrics.json writes
 * "gateway_queue_delay_ms": (dispatch − enqueue) / 1000 only when both are > 0 and the delay is non-zero
 * (Go omitempty), between "length_capped" and "session_id". A request enqueued at t = 0 therefore never shows
 * a delay (reference oddity, kept).
 */
export {
  FlowController,
  DEFAULT_FLOW_CONTROL_CONFIG,
  DEFAULT_DISPATCH_TICK_INTERVAL,
  FLOW_CONTROL_ENQUEUED_REASON,
  FLOW_CONTROL_REJECTED_REASON,
  type FlowControlConfig,
  type FlowControlCounters,
  type FlowControlHost,
} from './controller.js';
export { GatewayQueue, DISPATCH_ORDERS, DEFAULT_TENANT, type DispatchOrder, type EnqueueOutcome, type EnqueueResult } from './gateway-queue.js';
export { FAIRNESS_POLICY_NAMES, makeFairnessPolicy, globalStrictPolicy, roundRobinPolicy, type FairnessPolicy, type FairnessPolicyName } from './bands.js';
export { EvictionTracker, type EvictionCandidate } from './eviction-tracker.js';
export {
  SATURATION_DETECTOR_NAMES,
  DEFAULT_QUEUE_DEPTH_THRESHOLD,
  DEFAULT_KV_CACHE_UTIL_THRESHOLD,
  DEFAULT_MAX_CONCURRENCY,
  isSaturationDetectorName,
  makeSaturationDetector,
  neverSaturated,
  utilizationDetector,
  concurrencyDetector,
  type SaturationDetector,
  type SaturationDetectorName,
  type SaturationDetectorOptions,
} from './saturation.js';
export { resolveFlowControlFlags, parseSloTargets, type FlowControlFlagValues, type FlowControlFlagResult } from './flags.js';
