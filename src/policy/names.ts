/**
 * The policy and scorer names a bundle or a flag may use. Kept here (not imported from the routing or
 * admission code) so the bundle parser has no dependency on how those layers are built; callers that grow a
 * registry can pass their own lists through {@link PolicyNameSets}.
 */

export interface PolicyNameSets {
  readonly admission: readonly string[];
  readonly routing: readonly string[];
  readonly schedulers: readonly string[];
  readonly preemption: readonly string[];
  readonly scorers: readonly string[];
}

/** Sorted, as the reference lists them in its "valid options" messages. */
export const DEFAULT_POLICY_NAMES: PolicyNameSets = {
  admission: ['always-admit', 'gaie-legacy', 'reject-all', 'tier-shed', 'token-bucket'],
  routing: ['always-busiest', 'least-loaded', 'round-robin', 'weighted'],
  schedulers: ['fcfs', 'priority-fcfs', 'reverse-priority', 'sjf'],
  preemption: ['fcfs', 'priority'],
  scorers: [
    'active-requests', 'kv-utilization', 'load-aware', 'load-balance', 'lora-affinity', 'no-hit-lru',
    'precise-prefix-cache', 'prefix-affinity', 'queue-depth', 'running-requests', 'vllm-dp',
  ],
};

export interface ScorerSetting {
  readonly name: string;
  readonly weight: number;
}

/** The weighted-routing profile used when neither `--routing-scorers` nor the bundle gives one (llm-d's). */
export const DEFAULT_SCORERS: readonly ScorerSetting[] = [
  { name: 'precise-prefix-cache', weight: 2 },
  { name: 'queue-depth', weight: 1 },
  { name: 'kv-utilization', weight: 1 },
];

/** Merges caller-supplied lists over the defaults. */
export function nameSets(overrides: Partial<PolicyNameSets> | undefined): PolicyNameSets {
  return { ...DEFAULT_POLICY_NAMES, ...(overrides ?? {}) };
}

/** The empty name always means "not set" (the reference keeps "" in every validity table). */
export function isKnownName(list: readonly string[], name: string): boolean {
  return name === '' || list.includes(name);
}
