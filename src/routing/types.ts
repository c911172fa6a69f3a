/**
 * Admission and routing contracts. Policies are pure: they read a snapshot of router state and return a
 * decision; only the cluster's handlers mutate state.
 */
import type { Request } from '../domain/request.js';

/** What the router knows about one routable instance when it decides. */
export interface InstanceView {
  readonly id: string;
  readonly index: number;
  readonly queueDepth: number;
  readonly batchSize: number;
  /** Router-local count of requests routed here and not yet finished (always live). */
  readonly inFlight: number;
}

export interface RouterState {
  readonly instances: readonly InstanceView[];
  readonly clock: number;
}

export interface AdmissionDecision {
  readonly admitted: boolean;
  readonly reason: string;
}

export interface AdmissionPolicy {
  readonly name: string;
  admit(req: Request, state: RouterState): AdmissionDecision;
}

export interface RoutingDecision {
  /** Index into `state.instances`. */
  readonly target: number;
  readonly reason: string;
  /** Per-instance scores (by instance id) when the policy scores; null otherwise. */
  readonly scores: ReadonlyMap<string, number> | null;
}

export interface RoutingPolicy {
  readonly name: string;
  route(req: Request, state: RouterState): RoutingDecision;
}
