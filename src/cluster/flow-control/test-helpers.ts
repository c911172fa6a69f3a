/** Test helpers: minimal requests and a host that records what the controller schedules. */
import { Request } from '../../domain/request.js';
import { routingSnapshot, type RouterState, type RoutingSnapshot } from '../../routing/types.js';
import type { FlowControlHost } from './controller.js';

export interface ReqFields {
  readonly slo?: string;
  readonly tenant?: string;
  readonly enqueueAt?: number;
  readonly sloTargetUs?: number;
  readonly dispatchAt?: number;
}

export function req(id: string, f: ReqFields = {}): Request {
  const r = new Request(id, new Int32Array(0), new Int32Array(0), 0);
  r.sloClass = f.slo ?? '';
  r.tenantId = f.tenant ?? '';
  r.gatewayEnqueueTime = f.enqueueAt ?? 0;
  r.sloTargetUs = f.sloTargetUs ?? 0;
  r.gatewayDispatchTime = f.dispatchAt ?? 0;
  return r;
}

export function state(snapshots: readonly RoutingSnapshot[], clock = 0): RouterState {
  return { snapshots, clock };
}

export function snaps(...fields: Partial<Omit<RoutingSnapshot, 'id'>>[]): RoutingSnapshot[] {
  return fields.map((f, i) => routingSnapshot(`instance_${i}`, f));
}

export type HostCall =
  | { readonly kind: 'state' }
  | { readonly kind: 'tick'; readonly at: number }
  | { readonly kind: 'ttl'; readonly at: number; readonly id: string }
  | { readonly kind: 'evict'; readonly at: number; readonly id: string; readonly instance: string }
  | { readonly kind: 'route'; readonly at: number; readonly id: string };

/** Records every host call in order; `view` supplies the router state the detector reads. */
export class RecordingHost implements FlowControlHost {
  readonly calls: HostCall[] = [];
  view: RouterState = state([routingSnapshot('instance_0')]);

  routerState(): RouterState {
    this.calls.push({ kind: 'state' });
    return this.view;
  }
  scheduleDispatchTick(at: number): void {
    this.calls.push({ kind: 'tick', at });
  }
  scheduleTtl(at: number, r: Request): void {
    this.calls.push({ kind: 'ttl', at, id: r.id });
  }
  scheduleEviction(at: number, r: Request, instance: string): void {
    this.calls.push({ kind: 'evict', at, id: r.id, instance });
  }
  scheduleRouting(r: Request, at: number): void {
    this.calls.push({ kind: 'route', at, id: r.id });
  }
  /** The calls since the last take, without the state reads. */
  take(): HostCall[] {
    const out = this.calls.filter((c) => c.kind !== 'state');
    this.calls.length = 0;
    return out;
  }
}
