/**
 * What the P/D coordinator and its encode stage need from the cluster (PdHost): below both, so that neither
 * imports the other for it.
 */
import type { Request, RequestState } from '../../domain/request.js';
import type { EventKind } from '../../instance/events.js';
import type { Instance } from '../../instance/instance.js';
import type { RouterState, RoutingDecision } from '../../routing/types.js';

/** What the coordinator needs from the cluster. */
export interface PdHost {
  readonly instances: readonly Instance[];
  readonly inFlight: number[];
  readonly clock: number;
  scheduleCluster(time: number, kind: EventKind, payload: object | null): void;
  /** Router state over the routable instances whose role has `role` (and serve `model`, unless null). */
  poolState(role: number, model: string | null): RouterState;
  /** Routes a request of a model without P/D pools the standard way. */
  standardRoute(req: Request, time: number): void;
  /** The scaling target (configuration) of instance `index`. */
  targetOf(index: number): string | undefined;
  instanceIndex(id: string): number;
  routable(index: number): boolean;
  /** The standard injection path (routing record, in-flight, tenants, eviction tracking) for a local request. */
  deliver(req: Request, time: number, state: RouterState, d: RoutingDecision, index: number): void;
  /** Writes the standard routing record of a split request (corrected semantics: its decode pod, D4). */
  recordSplit(req: Request, state: RouterState, d: RoutingDecision): void;
  /** A request lost at routing (no routable instance): counted as a routing rejection. */
  rejectAtRouting(req: Request): void;
  /** A request lost at encode routing (no routable encode pod): INV-1's encode_routing_rejections term. */
  rejectAtEncode(req: Request): void;
  /** A sub-request starts occupying an instance (in-flight, tenants, signals). */
  startSub(req: Request, index: number): void;
  /** Session follow-ups of the parent's end, as the reference does for a decode completion or timeout. */
  parentDone(parent: Request, state: RequestState, progressIndex: number, tick: number): void;
  cachedBlocks(index: number, req: Request): number;
  readonly traceDecisions: boolean;
  readonly counterfactualK: number;
}
