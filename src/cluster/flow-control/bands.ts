/**
 * Building blocks of the gateway queue: per-tenant FIFO flows, priority bands holding them, and the fairness
 * policies that pick a flow inside a band (reference `sim/cluster/gateway_queue.go`).
 *
 * A flow is removed from its band as soon as it empties (the reference deletes the map entry), which matters
 * for round-robin: a cursor that names a vanished tenant restarts at the first tenant. A band, in contrast, is
 * never removed once created, because the usage-limit ceilings are computed over band positions.
 */
import type { Request } from '../../domain/request.js';

export interface FlowEntry {
  readonly request: Request;
  /** The flow controller's admission counter: a strict arrival order across all bands. */
  readonly seq: number;
}

/**
 * FIFO of one (band, tenant) pair. Dispatch takes the head, shedding takes the tail and TTL expiry may take any
 * position, so it is an array with a moving head instead of repeated `shift()` (long queues would make that
 * quadratic).
 */
export class Flow {
  readonly tenantId: string;
  private items: FlowEntry[] = [];
  private head = 0;

  constructor(tenantId: string) {
    this.tenantId = tenantId;
  }

  get length(): number {
    return this.items.length - this.head;
  }

  at(i: number): FlowEntry {
    return this.items[this.head + i] as FlowEntry;
  }

  push(e: FlowEntry): void {
    this.items.push(e);
  }

  removeAt(i: number): FlowEntry {
    if (i === 0) {
      const e = this.items[this.head] as FlowEntry;
      this.head++;
      // Compact once the dead prefix dominates, keeping pushes amortised O(1) and memory bounded.
      if (this.head >= 64 && this.head * 2 >= this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return e;
    }
    const [e] = this.items.splice(this.head + i, 1);
    return e as FlowEntry;
  }
}

/** Go's string order (bytewise UTF-8 = code-point order); JS `<` differs only for astral characters. */
export function compareTenantIds(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : 1;
}

export class Band {
  readonly priority: number;
  readonly flows = new Map<string, Flow>();
  /** Tenant ids of `flows` in sorted order: every pick visits flows this way for determinism. */
  readonly order: string[] = [];
  total = 0;

  constructor(priority: number) {
    this.priority = priority;
  }

  flowFor(tenantId: string): Flow {
    let f = this.flows.get(tenantId);
    if (f === undefined) {
      f = new Flow(tenantId);
      this.flows.set(tenantId, f);
      let lo = 0;
      let hi = this.order.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareTenantIds(this.order[mid] as string, tenantId) < 0) lo = mid + 1;
        else hi = mid;
      }
      this.order.splice(lo, 0, tenantId);
    }
    return f;
  }

  /** Removes entry `i` of `flow`, dropping the flow when it empties. */
  take(flow: Flow, i: number): FlowEntry {
    const e = flow.removeAt(i);
    this.total--;
    if (flow.length === 0) {
      this.flows.delete(flow.tenantId);
      this.order.splice(this.order.indexOf(flow.tenantId), 1);
    }
    return e;
  }
}

/** `--fairness-policy`: which flow of a band dispatches next. */
export interface FairnessPolicy {
  readonly name: FairnessPolicyName;
  pick(band: Band): Flow | null;
}

export const FAIRNESS_POLICY_NAMES = ['global-strict', 'round-robin'] as const;
export type FairnessPolicyName = (typeof FAIRNESS_POLICY_NAMES)[number];

/** The flow whose head arrived first; ties (impossible with a strict counter) go to the first tenant in order. */
export function globalStrictPolicy(): FairnessPolicy {
  return {
    name: 'global-strict',
    pick(band: Band): Flow | null {
      let best: Flow | null = null;
      let bestSeq = 0;
      for (const tid of band.order) {
        const f = band.flows.get(tid) as Flow;
        if (f.length === 0) continue;
        const seq = f.at(0).seq;
        if (best === null || seq < bestSeq) {
          best = f;
          bestSeq = seq;
        }
      }
      return best;
    },
  };
}

/**
 * Cycles tenants in sorted order with one cursor per band priority (the last tenant served). When that tenant's
 * flow has since emptied and vanished, the reference restarts the scan at the first tenant, which favours the
 * tenants that sort first; `continueFromSuccessor` (--semantics corrected) resumes at the tenant after it.
 */
export function roundRobinPolicy(continueFromSuccessor = false): FairnessPolicy {
  const cursors = new Map<number, string>();
  return {
    name: 'round-robin',
    pick(band: Band): Flow | null {
      const keys = band.order;
      const n = keys.length;
      if (n === 0) return null;
      const last = cursors.get(band.priority);
      let start = 0;
      if (last !== undefined) {
        const i = keys.indexOf(last);
        if (i >= 0) start = (i + 1) % n;
        else if (continueFromSuccessor) start = successorIndex(keys, last) % n;
      }
      for (let k = 0; k < n; k++) {
        const tid = keys[(start + k) % n] as string;
        const f = band.flows.get(tid) as Flow;
        if (f.length > 0) {
          cursors.set(band.priority, tid);
          return f;
        }
      }
      cursors.delete(band.priority);
      return null;
    },
  };
}

/** Index of the first of the sorted `keys` after `id` (keys.length when none). */
function successorIndex(keys: readonly string[], id: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareTenantIds(keys[mid] as string, id) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `corrected`: round-robin resumes after a vanished tenant (see {@link roundRobinPolicy}). */
export function makeFairnessPolicy(name: string, corrected = false): FairnessPolicy {
  switch (name) {
    case '':
    case 'global-strict':
      return globalStrictPolicy();
    case 'round-robin':
      return roundRobinPolicy(corrected);
    default:
      throw new RangeError(`unknown fairness policy ${JSON.stringify(name)} (must be global-strict or round-robin)`);
  }
}
