/**
 * SLO classes and the instance priority mapping (reference blis-cluster.md §6).
 *
 * Class priorities (higher = more important): critical 4, standard 3, batch -1, sheddable -2, background -3;
 * unknown or empty classes get 3. At enqueue the instance converts to the vLLM convention (lower = more urgent):
 * `priority = maxPri - pri(class)` where maxPri = max(3, every mapped value).
 */
export const DEFAULT_SLO_PRIORITIES = {
  critical: 4,
  standard: 3,
  batch: -1,
  sheddable: -2,
  background: -3,
} as const satisfies Record<string, number>;

export type SloClassName = keyof typeof DEFAULT_SLO_PRIORITIES;

const DEFAULT_PRIORITY = 3;

export class SloPriorityMap {
  private readonly map: ReadonlyMap<string, number>;
  private readonly maxPri: number;

  constructor(overrides: Readonly<Record<string, number>> = {}) {
    const m = new Map<string, number>(Object.entries(DEFAULT_SLO_PRIORITIES));
    for (const k of Object.keys(overrides).sort()) m.set(k, overrides[k] as number);
    this.map = m;
    let maxPri = DEFAULT_PRIORITY;
    for (const v of m.values()) if (v > maxPri) maxPri = v;
    this.maxPri = maxPri;
  }

  /** Class priority (higher = more important). */
  priority(sloClass: string): number {
    return this.map.get(sloClass) ?? DEFAULT_PRIORITY;
  }

  isSheddable(sloClass: string): boolean {
    return this.priority(sloClass) < 0;
  }

  /** vLLM-convention instance priority: lower = more urgent. */
  invertForVllm(sloClass: string): number {
    return this.maxPri - this.priority(sloClass);
  }
}
