import { describe, expect, it } from 'vitest';
import { parsePolicyBundle } from './bundle.js';
import { PolicyConfigError } from './errors.js';

const FILE = 'policy.yaml';

/** Same content as the reference's shipped example: every section at its default, comments aside. */
const DEFAULTS_EXAMPLE = `
# Defaults spelled out; flags given on the command line still win.
admission:
  policy: always-admit
routing:
  policy: round-robin
priority:
  policy: constant
scheduler: fcfs
`;

describe('parsePolicyBundle: well-formed bundles', () => {
  it('reads the defaults example', () => {
    const b = parsePolicyBundle(DEFAULTS_EXAMPLE, FILE);
    expect(b.admission.policy).toBe('always-admit');
    expect(b.admission.tokenBucketCapacity).toBeNull();
    expect(b.routing).toEqual({ policy: 'round-robin', scorers: null });
    expect(b.priority.policy).toBe('constant');
    expect(b.scheduler).toBe('fcfs');
    expect(b.preemption.policy).toBe('');
    expect(b.tenantBudgets).toBeNull();
    expect(b.nodePools).toBeNull();
    expect(b.autoscaler.intervalUs).toBe(0);
    expect(b.warnings).toEqual([]);
  });

  it('reads every section', () => {
    const b = parsePolicyBundle(`
admission:
  policy: token-bucket
  token_bucket_capacity: 5000
  token_bucket_refill_rate: 250.5
  tier_shed_threshold: 12
  tier_shed_min_priority: -1
  gaie_qd_threshold: 7
  gaie_kv_threshold: 0.5
  slo_priorities: {critical: 10, batch: -5}
  slo_targets: {critical: 100000}
routing:
  policy: weighted
  scorers:
    - {name: queue-depth, weight: 2}
    - name: kv-utilization
      weight: 0.5
priority: {policy: constant}
scheduler: priority-fcfs
preemption: {policy: priority}
tenant_budgets:
  tenant-a: 0.25
  tenant-b: 1
node_pools:
  - name: pool-a
    gpu_type: H100
    gpus_per_node: 8
    gpu_memory_gib: 80
    initial_nodes: 1
    min_nodes: 1
    max_nodes: 4
    provisioning_delay: {mean: 30, stddev: 5}
    cost_per_hour: 12.5
autoscaler:
  interval_us: 1000000
  scale_up_stabilization_window_us: 0
  scale_down_stabilization_window_us: 300000000
  hpa_scrape_delay: {mean: 1, stddev: 0.5}
  analyzer: {kv_cache_threshold: 0.9, scale_up_threshold: 0.7, scale_down_boundary: 0.3, avg_input_tokens: 512}
instance_lifecycle:
  loading_delay: {mean: 20, stddev: 2}
  warm_start_initial_instances: yes
`, FILE);
    expect(b.admission).toEqual({
      policy: 'token-bucket', tokenBucketCapacity: 5000, tokenBucketRefillRate: 250.5, tierShedThreshold: 12,
      tierShedMinPriority: -1, gaieQdThreshold: 7, gaieKvThreshold: 0.5,
      sloPriorities: new Map([['critical', 10], ['batch', -5]]), sloTargets: new Map([['critical', 100000]]),
    });
    expect(b.routing.scorers).toEqual([{ name: 'queue-depth', weight: 2 }, { name: 'kv-utilization', weight: 0.5 }]);
    expect(b.scheduler).toBe('priority-fcfs');
    expect(b.preemption.policy).toBe('priority');
    expect([...(b.tenantBudgets ?? [])]).toEqual([['tenant-a', 0.25], ['tenant-b', 1]]);
    expect(b.nodePools?.[0]).toEqual({
      name: 'pool-a', gpuType: 'H100', gpusPerNode: 8, gpuMemoryGiB: 80, initialNodes: 1, minNodes: 1, maxNodes: 4,
      provisioningDelay: { mean: 30, stddev: 5 }, costPerHour: 12.5,
    });
    expect(b.autoscaler.analyzer.avgInputTokens).toBe(512);
    expect(b.autoscaler.scaleDownStabilizationWindowUs).toBe(300000000);
    expect(b.instanceLifecycle).toEqual({ loadingDelay: { mean: 20, stddev: 2 }, warmStartInitialInstances: true });
  });

  it('treats an explicit empty document and null sections as "nothing set"', () => {
    for (const text of ['---\n', '~\n', 'admission:\nrouting: ~\ntenant_budgets:\nscheduler:\n']) {
      const b = parsePolicyBundle(text, FILE);
      expect(b.admission.policy).toBe('');
      expect(b.tenantBudgets).toBeNull();
      expect(b.scheduler).toBe('');
    }
  });

  it('keeps an empty tenant_budgets mapping distinct from an absent one', () => {
    expect(parsePolicyBundle('tenant_budgets: {}\n', FILE).tenantBudgets).toEqual(new Map());
  });

  it('gives a null map entry its zero value, as the reference does', () => {
    const b = parsePolicyBundle('tenant_budgets:\n  t1:\nadmission:\n  slo_priorities: {batch: ~}\n', FILE);
    expect(b.tenantBudgets?.get('t1')).toBe(0);
    expect(b.admission.sloPriorities?.get('batch')).toBe(0);
  });

  it('resolves integers by the reference YAML library rules (underscores, octal, binary)', () => {
    const b = parsePolicyBundle('admission:\n  tier_shed_threshold: 010\n  tier_shed_min_priority: 0b11\n  token_bucket_capacity: 1_000\n', FILE);
    expect(b.admission.tierShedThreshold).toBe(8);
    expect(b.admission.tierShedMinPriority).toBe(3);
    expect(b.admission.tokenBucketCapacity).toBe(1000);
  });

  it('truncates a fractional integer field like the reference, with a located warning', () => {
    const b = parsePolicyBundle('admission:\n  tier_shed_threshold: 2.9\n  tier_shed_min_priority: 3.0\n', FILE);
    expect(b.admission.tierShedThreshold).toBe(2);
    expect(b.admission.tierShedMinPriority).toBe(3);
    expect(b.warnings).toEqual(['policy.yaml:2:24: admission.tier_shed_threshold: 2.9 is not an integer; it is truncated to 2 as the reference does']);
  });

  it('warns (not fails) on a priority policy other than constant', () => {
    const b = parsePolicyBundle('priority:\n  policy: slo-based\n', FILE);
    expect(b.priority.policy).toBe('slo-based');
    expect(b.warnings).toHaveLength(1);
    expect(b.warnings[0]).toMatch(/^policy\.yaml:2:11: priority\.policy: priority policy "slo-based" has no effect/);
  });

  it('expands << merge keys with explicit keys winning', () => {
    const merged = parsePolicyBundle('admission:\n  slo_priorities:\n    <<: {batch: 1, standard: 2}\n    batch: 7\n', FILE);
    expect([...(merged.admission.sloPriorities ?? [])]).toEqual([['batch', 7], ['standard', 2]]);
    const aliased = parsePolicyBundle('tenant_budgets: &tb {t1: 1, t2: 0}\nadmission:\n  slo_priorities: {<<: *tb, t1: 9}\n', FILE);
    expect([...(aliased.admission.sloPriorities ?? [])]).toEqual([['t1', 9], ['t2', 0]]);
    const listed = parsePolicyBundle('routing:\n  <<: [{policy: weighted}, {policy: least-loaded}]\n', FILE);
    expect(listed.routing.policy).toBe('weighted');
  });

  it('decodes only the first document, as the reference does', () => {
    const b = parsePolicyBundle('scheduler: sjf\n---\nnot: [valid\n', FILE);
    expect(b.scheduler).toBe('sjf');
  });

  it('drops null scorer items with a warning, as the reference drops them', () => {
    const b = parsePolicyBundle('routing:\n  policy: weighted\n  scorers:\n    - ~\n    - {name: load-balance, weight: 1}\n', FILE);
    expect(b.routing.scorers).toEqual([{ name: 'load-balance', weight: 1 }]);
    expect(b.warnings[0]).toMatch(/^policy\.yaml:4:7: routing\.scorers\[0\]: an empty list item is ignored/);
  });

  it('rejects an empty file like the reference (EOF)', () => {
    for (const text of ['', '# only a comment\n']) {
      const err = (() => { try { parsePolicyBundle(text, FILE); } catch (e) { return e; } return null; })();
      expect(err).toBeInstanceOf(PolicyConfigError);
      expect((err as PolicyConfigError).code).toBe('POLICY_YAML');
      expect((err as PolicyConfigError).message).toMatch(/^policy\.yaml:1:1: .*no YAML document/);
    }
  });
});
