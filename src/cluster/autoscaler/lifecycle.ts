/**
 * Instance lifecycle (reference instance.go, blis-cluster.md §7.4): Loading -> WarmingUp -> Active -> Draining
 * -> Terminated, with the reference's table of valid transitions (anything else is a bug and throws). Only
 * Active and WarmingUp instances are routable. A Draining instance becomes Terminated when the cluster
 * processes one of its own events and finds it empty (an idle draining instance stays Draining, as in the
 * reference).
 */

export const InstanceState = {
  Loading: 1,
  WarmingUp: 2,
  Active: 3,
  Draining: 4,
  Terminated: 5,
} as const;
export type InstanceState = (typeof InstanceState)[keyof typeof InstanceState];

export const INSTANCE_STATE_NAMES: Record<InstanceState, string> = {
  [InstanceState.Loading]: 'Loading',
  [InstanceState.WarmingUp]: 'WarmingUp',
  [InstanceState.Active]: 'Active',
  [InstanceState.Draining]: 'Draining',
  [InstanceState.Terminated]: 'Terminated',
};

const VALID: Record<InstanceState, readonly InstanceState[]> = {
  [InstanceState.Loading]: [InstanceState.WarmingUp, InstanceState.Active, InstanceState.Terminated],
  [InstanceState.WarmingUp]: [InstanceState.Active, InstanceState.Draining, InstanceState.Terminated],
  [InstanceState.Active]: [InstanceState.Draining, InstanceState.Terminated],
  [InstanceState.Draining]: [InstanceState.Terminated],
  [InstanceState.Terminated]: [],
};

/** One state change, for the replica timeline and GPU-hour accounting. */
export interface LifecycleChange {
  readonly clock: number;
  readonly index: number;
  readonly from: InstanceState | 0;
  readonly to: InstanceState;
}

export class Lifecycle {
  readonly states: InstanceState[] = [];
  /** Every transition in order (first entry of each instance has from = 0). */
  readonly changes: LifecycleChange[] = [];

  add(state: InstanceState, clock: number): number {
    const index = this.states.length;
    this.states.push(state);
    this.changes.push({ clock, index, from: 0, to: state });
    return index;
  }

  state(index: number): InstanceState {
    return this.states[index] as InstanceState;
  }

  routable(index: number): boolean {
    const s = this.states[index];
    return s === InstanceState.Active || s === InstanceState.WarmingUp;
  }

  transition(index: number, to: InstanceState, clock: number): void {
    const from = this.state(index);
    if (!VALID[from].includes(to)) throw new Error(`instance lifecycle: invalid transition ${INSTANCE_STATE_NAMES[from]} -> ${INSTANCE_STATE_NAMES[to]} (instance #${index})`);
    this.states[index] = to;
    this.changes.push({ clock, index, from, to });
  }

  /** Instances in `state`. */
  count(state: InstanceState): number {
    let n = 0;
    for (const s of this.states) if (s === state) n++;
    return n;
  }
}
