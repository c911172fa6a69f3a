/**
 * Event kinds of both layers in one table. Same-tick precedence comes from the priority column (lower fires
 * first), mirroring the reference's event priorities; the cluster layer's events always precede instance
 * events at equal time, and lower instance indexes precede higher ones (see {@link eventOrder}).
 */
export const EventKind = {
  // cluster layer
  ClusterArrival: 0,
  AdmissionDecision: 1,
  RoutingDecision: 2,
  GatewayEviction: 3,
  GatewayQueueTTL: 4,
  GatewayDispatchTick: 5,
  PrefillRouting: 6,
  KVTransferStarted: 7,
  KVTransferCompleted: 8,
  ScalingTick: 9,
  ScaleActuation: 12,
  InstanceLoaded: 14,
  /** Beyond the reference: an autoscaler event trigger, a drain timeout. */
  ScalingTrigger: 17,
  DrainTimeout: 18,
  // instance layer
  Arrival: 10,
  Queued: 11,
  Step: 13,
  RequestLeft: 15,
  Timeout: 16,
  /** A LoRA adapter load finished (the instance knows which: loads are serialised). */
  AdapterLoad: 19,
  /** Beyond the reference: a --lora-placement-schedule entry takes force on the instance. */
  AdapterPlace: 20,
} as const;
export type EventKind = (typeof EventKind)[keyof typeof EventKind];

/** Reference priorities (cluster: blis-cluster.md §1.2; instance: blis-core.md §1). */
export const EVENT_PRIORITY = {
  [EventKind.ClusterArrival]: 0,
  [EventKind.AdmissionDecision]: 1,
  [EventKind.RoutingDecision]: 2,
  [EventKind.GatewayEviction]: 5,
  [EventKind.GatewayQueueTTL]: 6,
  [EventKind.GatewayDispatchTick]: 7,
  [EventKind.PrefillRouting]: 4,
  [EventKind.KVTransferStarted]: 5,
  [EventKind.KVTransferCompleted]: 6,
  [EventKind.ScalingTick]: 8,
  [EventKind.ScaleActuation]: 9,
  [EventKind.InstanceLoaded]: -1,
  [EventKind.ScalingTrigger]: 8,
  [EventKind.DrainTimeout]: 9,
  [EventKind.Arrival]: 0,
  [EventKind.Queued]: 1,
  [EventKind.Step]: 3,
  [EventKind.RequestLeft]: 5,
  [EventKind.Timeout]: 6,
  // Before a co-timed step, so the loaded adapter's request is admitted that same tick.
  [EventKind.AdapterLoad]: 2,
  // With the loads: before a co-timed step, which may then admit what the placement's load brought.
  [EventKind.AdapterPlace]: 2,
} as const satisfies Record<EventKind, number>;

/** Same-tick order key: cluster events (instance = -1) first, then instances by index, then event priority. */
export function eventOrder(instanceIndex: number, kind: EventKind): number {
  return (instanceIndex + 1) * 16 + EVENT_PRIORITY[kind] + 2;
}

/** Inverse of {@link eventOrder}'s instance part. */
export function orderInstance(order: number): number {
  return Math.floor(order / 16) - 1;
}
