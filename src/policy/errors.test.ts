import { describe, expect, it } from 'vitest';
import { parsePolicyBundle } from './bundle.js';
import { PolicyConfigError } from './errors.js';
import type { PolicyConfigErrorCode } from './errors.js';

const FILE = 'cfg/policy.yaml';

function errorOf(text: string, names?: Parameters<typeof parsePolicyBundle>[2]): PolicyConfigError {
  try {
    parsePolicyBundle(text, FILE, names);
  } catch (e) {
    if (e instanceof PolicyConfigError) return e;
    throw e;
  }
  throw new Error('expected a PolicyConfigError');
}

interface Case {
  readonly name: string;
  readonly yaml: string;
  readonly code: PolicyConfigErrorCode;
  readonly line: number;
  readonly col: number;
  readonly field: string;
  readonly text: RegExp;
}

const CASES: readonly Case[] = [
  { name: 'YAML syntax', yaml: 'admission:\n  policy: [tier-shed\n', code: 'POLICY_YAML', line: 3, col: 1, field: '', text: /invalid YAML/ },
  { name: 'unknown top-level key', yaml: 'scheduler: fcfs\nschedular: sjf\n', code: 'POLICY_UNKNOWN_KEY', line: 2, col: 1, field: 'schedular', text: /unknown key "schedular" in the policy config; remove it or use one of: admission, routing/ },
  { name: 'removed routing key', yaml: 'routing:\n  policy: weighted\n  cache_weight: 0.6\n', code: 'POLICY_UNKNOWN_KEY', line: 3, col: 3, field: 'routing.cache_weight', text: /unknown key "cache_weight" in routing/ },
  { name: 'removed autoscaler key', yaml: 'autoscaler:\n  scale_up_cooldown_us: 6\n', code: 'POLICY_UNKNOWN_KEY', line: 2, col: 3, field: 'autoscaler.scale_up_cooldown_us', text: /in autoscaler/ },
  { name: 'unknown scorer key', yaml: 'routing:\n  scorers:\n    - {name: queue-depth, wieght: 1}\n', code: 'POLICY_UNKNOWN_KEY', line: 3, col: 27, field: 'routing.scorers[0].wieght', text: /unknown key "wieght" in a routing scorer/ },
  { name: 'duplicate key', yaml: 'tenant_budgets:\n  a: 0.1\n  a: 0.2\n', code: 'POLICY_DUPLICATE_KEY', line: 3, col: 3, field: 'tenant_budgets.a', text: /key "a" appears twice \(first at line 2\)/ },
  { name: 'quoted number', yaml: 'admission:\n  token_bucket_capacity: "10"\n', code: 'POLICY_TYPE', line: 2, col: 26, field: 'admission.token_bucket_capacity', text: /expected a number, got the string "10"/ },
  { name: 'text for an integer', yaml: 'admission:\n  tier_shed_threshold: high\n', code: 'POLICY_TYPE', line: 2, col: 24, field: 'admission.tier_shed_threshold', text: /expected an integer, got the string "high"/ },
  { name: 'list for a section', yaml: 'admission:\n  - tier-shed\n', code: 'POLICY_TYPE', line: 2, col: 3, field: 'admission', text: /expected a mapping for admission, got a list/ },
  { name: 'scalar for the scorer list', yaml: 'routing:\n  scorers: queue-depth:1\n', code: 'POLICY_TYPE', line: 2, col: 12, field: 'routing.scorers', text: /expected a list of scorers/ },
  { name: 'mapping for a name', yaml: 'scheduler: {name: fcfs}\n', code: 'POLICY_TYPE', line: 1, col: 12, field: 'scheduler', text: /expected a name \(text\), got a mapping/ },
  { name: 'text for a bool', yaml: 'instance_lifecycle:\n  warm_start_initial_instances: "true"\n', code: 'POLICY_TYPE', line: 2, col: 33, field: 'instance_lifecycle.warm_start_initial_instances', text: /expected true or false/ },
  { name: 'bad tag', yaml: 'admission:\n  tier_shed_threshold: !!int abc\n', code: 'POLICY_TYPE', line: 2, col: 30, field: 'admission.tier_shed_threshold', text: /cannot decode !!str `abc` as a !!int/ },
  { name: 'unknown admission policy', yaml: 'admission:\n  policy: tiershed\n', code: 'POLICY_UNKNOWN_NAME', line: 2, col: 11, field: 'admission.policy', text: /unknown admission policy "tiershed"; use one of: always-admit, gaie-legacy, reject-all, tier-shed, token-bucket/ },
  { name: 'unknown routing policy', yaml: 'routing: {policy: random}\n', code: 'POLICY_UNKNOWN_NAME', line: 1, col: 19, field: 'routing.policy', text: /unknown routing policy "random"/ },
  { name: 'number as scheduler name', yaml: 'scheduler: 5\n', code: 'POLICY_UNKNOWN_NAME', line: 1, col: 12, field: 'scheduler', text: /unknown scheduler "5"/ },
  { name: 'unknown preemption policy', yaml: 'preemption:\n  policy: lifo\n', code: 'POLICY_UNKNOWN_NAME', line: 2, col: 11, field: 'preemption.policy', text: /unknown preemption policy "lifo"; use one of: fcfs, priority/ },
  { name: 'bad scorer name', yaml: 'routing:\n  policy: weighted\n  scorers:\n    - name: queue-dept\n      weight: 1\n', code: 'POLICY_UNKNOWN_NAME', line: 4, col: 13, field: 'routing.scorers[0].name', text: /unknown scorer "queue-dept"; use one of: active-requests/ },
  { name: 'duplicate scorer', yaml: 'routing:\n  scorers:\n    - {name: load-aware, weight: 1}\n    - {name: load-aware, weight: 2}\n', code: 'POLICY_DUPLICATE_SCORER', line: 4, col: 14, field: 'routing.scorers[1].name', text: /scorer "load-aware" is listed twice/ },
  { name: 'missing scorer weight', yaml: 'routing:\n  scorers:\n    - name: vllm-dp\n', code: 'POLICY_RANGE', line: 3, col: 7, field: 'routing.scorers[0].weight', text: /weight of "vllm-dp" must be a finite positive number, got 0/ },
  { name: 'NaN scorer weight', yaml: 'routing:\n  scorers:\n    - {name: vllm-dp, weight: .nan}\n', code: 'POLICY_RANGE', line: 3, col: 31, field: 'routing.scorers[0].weight', text: /got NaN/ },
  { name: 'negative token bucket', yaml: 'admission:\n  token_bucket_refill_rate: -1\n', code: 'POLICY_RANGE', line: 2, col: 29, field: 'admission.token_bucket_refill_rate', text: /must be non-negative, got -1/ },
  { name: 'infinite token bucket', yaml: 'admission:\n  token_bucket_capacity: .inf\n', code: 'POLICY_RANGE', line: 2, col: 26, field: 'admission.token_bucket_capacity', text: /must be a finite number, got \+Inf/ },
  { name: 'negative tier-shed threshold', yaml: 'admission:\n  tier_shed_threshold: -1\n', code: 'POLICY_RANGE', line: 2, col: 24, field: 'admission.tier_shed_threshold', text: /must be >= 0, got -1/ },
  { name: 'GAIE KV above 1', yaml: 'admission:\n  gaie_kv_threshold: 1.5\n', code: 'POLICY_RANGE', line: 2, col: 22, field: 'admission.gaie_kv_threshold', text: /in \(0, 1\.0\], got 1\.5/ },
  { name: 'GAIE QD zero', yaml: 'admission:\n  gaie_qd_threshold: 0\n', code: 'POLICY_RANGE', line: 2, col: 22, field: 'admission.gaie_qd_threshold', text: /finite value > 0, got 0/ },
  { name: 'tenant budget above 1', yaml: 'tenant_budgets:\n  ok: 0.5\n  bulk: 1.2\n', code: 'POLICY_RANGE', line: 3, col: 9, field: 'tenant_budgets.bulk', text: /must be in \[0, 1\], got 1\.2/ },
  { name: 'SLO priority above 100', yaml: 'admission:\n  slo_priorities:\n    critical: 101\n', code: 'POLICY_RANGE', line: 3, col: 15, field: 'admission.slo_priorities.critical', text: /priority 101 is out of range \[-100, 100\]/ },
  { name: 'SLO priority below -100', yaml: 'admission:\n  slo_priorities: {batch: -101}\n', code: 'POLICY_RANGE', line: 2, col: 27, field: 'admission.slo_priorities.batch', text: /priority -101 is out of range/ },
  { name: 'negative autoscaler interval', yaml: 'autoscaler:\n  interval_us: -5\n', code: 'POLICY_RANGE', line: 2, col: 16, field: 'autoscaler.interval_us', text: /must be >= 0 \(0 = disabled\), got -5/ },
  { name: 'analyzer cross-check', yaml: 'autoscaler:\n  analyzer:\n    scale_down_boundary: 0.9\n', code: 'POLICY_RANGE', line: 3, col: 26, field: 'autoscaler.analyzer.scale_down_boundary', text: /\(0\.9\) must be < the effective scale_up_threshold \(0\.8\)/ },
  { name: 'node pool without a name', yaml: 'node_pools:\n  - gpu_type: H100\n    gpus_per_node: 8\n', code: 'POLICY_RANGE', line: 2, col: 5, field: 'node_pools[0].name', text: /name must not be empty/ },
  { name: 'node pool max below initial', yaml: 'node_pools:\n  - {name: p, gpu_type: A100, gpus_per_node: 8, gpu_memory_gib: 40, initial_nodes: 3, max_nodes: 2}\n', code: 'POLICY_RANGE', line: 2, col: 98, field: 'node_pools[0].max_nodes', text: /max_nodes \(2\) must be >= initial_nodes \(3\)/ },
  { name: 'negative loading delay', yaml: 'instance_lifecycle:\n  loading_delay: {mean: -1}\n', code: 'POLICY_RANGE', line: 2, col: 25, field: 'instance_lifecycle.loading_delay.mean', text: /must be >= 0, got -1/ },
];

describe('parsePolicyBundle: every error names file:line:col, the field and a fix', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const e = errorOf(c.yaml);
      expect(e.code).toBe(c.code);
      expect({ file: e.file, line: e.line, col: e.col, field: e.field }).toEqual({ file: FILE, line: c.line, col: c.col, field: c.field });
      const prefix = `${FILE}:${c.line}:${c.col}: ${c.field === '' ? '' : `${c.field}: `}`;
      expect(e.message.startsWith(prefix)).toBe(true);
      expect(e.message).toMatch(c.text);
      // One line, and always a fix after the problem.
      expect(e.message).not.toContain('\n');
      expect(e.message).toMatch(/; \S/);
    });
  }

  it('reports problems in the reference order (names before ranges)', () => {
    const e = errorOf('tenant_budgets: {a: 2}\nscheduler: nope\n');
    expect(e.field).toBe('scheduler');
  });

  it('reports decoding problems before any range check', () => {
    const e = errorOf('admission:\n  tier_shed_threshold: -1\n  bogus: 1\n');
    expect(e.code).toBe('POLICY_UNKNOWN_KEY');
  });

  it('validates against caller-supplied name lists', () => {
    const names = { names: { schedulers: ['fcfs', 'edf'] } };
    expect(parsePolicyBundle('scheduler: edf\n', FILE, names).scheduler).toBe('edf');
    expect(errorOf('scheduler: sjf\n', names).message).toMatch(/use one of: fcfs, edf/);
  });
});
