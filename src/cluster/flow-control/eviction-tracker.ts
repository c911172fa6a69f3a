/**
 * In-flight eviction candidates (`--in-flight-eviction`; reference `sim/cluster/eviction_tracker.go`).
 *
 * Every routed request of a sheddable class (priority < 0) is tracked until it terminates; when the gateway is
 * saturated and a non-sheddable request waits, the most evictable one — lowest priority, then most recently
 * dispatched — is popped and terminated on its instance.
 *
 * The order is only partial (equal priority and dispatch time tie), and the reference resolves ties by the
 * layout of Go's container/heap. The sift-up / sift-down / remove steps below follow that algorithm exactly so
 * tied candidates pop in the same order.
 */
import type { Request } from '../../domain/request.js';
import type { SloPriorityMap } from '../../domain/slo.js';

interface Entry {
  readonly req: Request;
  readonly priority: number;
  readonly dispatchTime: number;
  readonly instanceId: string;
  index: number;
}

export interface EvictionCandidate {
  readonly request: Request;
  readonly instanceId: string;
}

export class EvictionTracker {
  private readonly heap: Entry[] = [];
  private readonly byId = new Map<string, Entry>();
  private readonly priorities: SloPriorityMap;

  constructor(priorities: SloPriorityMap) {
    this.priorities = priorities;
  }

  get length(): number {
    return this.heap.length;
  }

  /** Tracks a request just injected on `instanceId`; non-sheddable classes are ignored. */
  track(req: Request, instanceId: string): void {
    if (!this.priorities.isSheddable(req.sloClass)) return;
    const e: Entry = { req, priority: this.priorities.priority(req.sloClass), dispatchTime: req.gatewayDispatchTime, instanceId, index: this.heap.length };
    this.heap.push(e);
    this.up(e.index);
    this.byId.set(req.id, e);
  }

  /** Forgets a request that terminated normally; unknown ids are ignored. */
  untrack(requestId: string): void {
    const e = this.byId.get(requestId);
    if (e === undefined) return;
    this.removeAt(e.index);
    this.byId.delete(requestId);
  }

  /** Removes and returns the most evictable request; null when nothing is tracked. */
  pop(): EvictionCandidate | null {
    if (this.heap.length === 0) return null;
    const e = this.removeAt(0);
    this.byId.delete(e.req.id);
    return { request: e.req, instanceId: e.instanceId };
  }

  private less(i: number, j: number): boolean {
    const a = this.heap[i] as Entry;
    const b = this.heap[j] as Entry;
    if (a.priority !== b.priority) return a.priority < b.priority;
    return a.dispatchTime > b.dispatchTime;
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i] as Entry;
    const b = this.heap[j] as Entry;
    this.heap[i] = b;
    this.heap[j] = a;
    b.index = i;
    a.index = j;
  }

  private up(j: number): void {
    while (j > 0) {
      const i = (j - 1) >> 1;
      if (!this.less(j, i)) break;
      this.swap(i, j);
      j = i;
    }
  }

  private down(i0: number, n: number): boolean {
    let i = i0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      let j = left;
      if (left + 1 < n && this.less(left + 1, left)) j = left + 1;
      if (!this.less(j, i)) break;
      this.swap(i, j);
      i = j;
    }
    return i > i0;
  }

  /** container/heap.Remove: swap with the last element, restore order, then drop the last slot. */
  private removeAt(i: number): Entry {
    const n = this.heap.length - 1;
    if (n !== i) {
      this.swap(i, n);
      if (!this.down(i, n)) this.up(i);
    }
    const e = this.heap.pop() as Entry;
    e.index = -1;
    return e;
  }
}
