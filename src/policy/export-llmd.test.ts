import { describe, expect, it } from 'vitest';
import { parse as parseYamlText } from 'yaml';
import { parsePolicyBundle } from './bundle.js';
import { exportLlmd, integerWeights, LLMD_SCORERS } from './export-llmd.js';
import { SCORER_NAMES } from '../routing/scorer-registry.js';

const run = (text: string, opts: Parameters<typeof exportLlmd>[1] = { file: 'b.yaml' }): ReturnType<typeof exportLlmd> => exportLlmd(parsePolicyBundle(text, 'b.yaml'), opts);

describe('blis policies export --format llm-d', () => {
  it('exports the default weighted profile as the exact EndpointPickerConfig (hand-written)', () => {
    const r = run('routing:\n  policy: weighted\n');
    expect(r.yaml).toBe([
      '# llm-d endpoint picker configuration exported by blis-ts (blis policies export --format llm-d) from b.yaml',
      '# routing: weighted precise-prefix-cache:2,queue-depth:1,kv-utilization:1',
      'apiVersion: inference.networking.x-k8s.io/v1alpha1',
      'kind: EndpointPickerConfig',
      'plugins:',
      '- type: precise-prefix-cache-scorer',
      '- type: queue-scorer',
      '- type: kv-cache-utilization-scorer',
      '- type: max-score-picker',
      '- type: single-profile-handler',
      'schedulingProfiles:',
      '- name: default',
      '  plugins:',
      '  - pluginRef: precise-prefix-cache-scorer',
      '    weight: 2',
      '  - pluginRef: queue-scorer',
      '    weight: 1',
      '  - pluginRef: kv-cache-utilization-scorer',
      '    weight: 1',
      '  - pluginRef: max-score-picker',
      '',
    ].join('\n'));
    expect(r.warnings).toEqual([expect.stringContaining('precise-prefix-cache-scorer needs llm-d\'s KV-event indexer')]);
  });

  it('parses as YAML with the fields the EPP requires: apiVersion, kind, plugins with types, profiles referencing them', () => {
    const r = run('routing:\n  policy: weighted\n  scorers:\n    - {name: prefix-affinity, weight: 0.5}\n    - {name: load-aware, weight: 1.25}\n    - {name: lora-affinity, weight: 1}\n', { file: 'b.yaml', apiVersion: 'llm-d.ai/v1' });
    const doc = parseYamlText(r.yaml) as { apiVersion: string; kind: string; plugins: { type: string }[]; schedulingProfiles: { name: string; plugins: { pluginRef: string; weight?: number }[] }[] };
    expect(doc.apiVersion).toBe('llm-d.ai/v1');
    expect(doc.kind).toBe('EndpointPickerConfig');
    const types = doc.plugins.map((p) => p.type);
    expect(types).toEqual(['prefix-cache-scorer', 'load-aware-scorer', 'lora-affinity-scorer', 'max-score-picker', 'single-profile-handler']);
    expect(doc.schedulingProfiles).toHaveLength(1);
    const refs = doc.schedulingProfiles[0]!.plugins;
    for (const p of refs) expect(types).toContain(p.pluginRef);
    // 0.5 : 1.25 : 1 scaled by 100 (50 : 125 : 100), divided by their gcd 25: 2 : 5 : 4, integers in proportion.
    expect(refs.map((p) => [p.pluginRef, p.weight])).toEqual([['prefix-cache-scorer', 2], ['load-aware-scorer', 5], ['lora-affinity-scorer', 4], ['max-score-picker', undefined]]);
    expect(r.warnings.some((w) => w.startsWith('prefix-cache-scorer: blis-ts hashed'))).toBe(true);
  });

  it('maps the weighted templates of policy search (the best bundle, JSON)', () => {
    const best = JSON.stringify({ routing: { type: 'parameterized', template: 'weighted_affinity_routing', parameters: { cache_affinity_weight: 3, queue_depth_weight: 1.5, kv_utilization_weight: 0 } } });
    expect(run(best).scorers).toEqual([{ type: 'precise-prefix-cache-scorer', weight: 2 }, { type: 'queue-scorer', weight: 1 }]);
    const ws = JSON.stringify({ routing: { type: 'parameterized', template: 'weighted_scorers', parameters: { precise_prefix_cache: 0, queue_depth: 2, kv_utilization: 0, running_requests: 3, active_requests: 1 } } });
    // Order: the default profile's scorers first, then the others alphabetically (the weighted_scorers template's order).
    expect(run(ws).scorers).toEqual([{ type: 'queue-scorer', weight: 2 }, { type: 'active-request-scorer', weight: 1 }, { type: 'running-requests-size-scorer', weight: 3 }]);
  });

  it.each([
    ['routing:\n  policy: round-robin\n', 'b.yaml:2:11: routing policy "round-robin" cannot be exported'],
    ['routing:\n  policy: weighted\n  scorers:\n    - {name: queue-depth, weight: 1}\n    - {name: load-balance, weight: 1}\n', 'b.yaml:5:14: scorer "load-balance" (weight 1) has no llm-d counterpart: llm-d has no 1/(1 + load) scorer'],
    ['routing:\n  policy: weighted\n  scorers:\n    - {name: vllm-dp, weight: 1}\n', 'scorer "vllm-dp" (weight 1) has no llm-d counterpart'],
    ['admission:\n  policy: token-bucket\nrouting:\n  policy: weighted\n', 'b.yaml:2:3: admission cannot be exported'],
    ['scheduler: sjf\nrouting:\n  policy: weighted\n', 'b.yaml:1:12: the instance scheduler "sjf" cannot be exported'],
    ['preemption:\n  policy: priority\nrouting:\n  policy: weighted\n', 'preemption cannot be exported'],
    ['tenant_budgets: {a: 0.5}\nrouting:\n  policy: weighted\n', 'tenant budgets cannot be exported'],
    ['priority:\n  policy: constant\nrouting:\n  policy: weighted\n', 'priority cannot be exported'],
    ['admin: 1\n', 'unknown'],
    ['{}\n', 'b.yaml:1:1: the bundle sets no routing policy'],
    ['routing:\n  scorers: [{name: queue-depth, weight: 1}]\n', 'routing.scorers without routing.policy: weighted'],
    ['routing:\n  type: decision_tree\n  tree:\n    route: {minimize: instance.load}\n', 'a decision_tree routing policy cannot be exported'],
    ['routing:\n  type: code\n  source: |\n    function route(req, state) { return state.instances[0].id; }\n', 'a code routing policy cannot be exported'],
    ['routing:\n  type: parameterized\n  template: power_of_d_choices\n', 'the power_of_d_choices routing template cannot be exported'],
    ['routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters: {utilization_threshold: 0.8}\n', 'utilization_threshold 0.8 filters instances by KV utilization'],
    ['routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters: {load_balance_weight: 1}\n', 'scorer "load-balance" (weight 1) has no llm-d counterpart'],
    ['routing:\n  type: parameterized\n  template: weighted_scorers\n  parameters: {precise_prefix_cache: 0, queue_depth: 0, kv_utilization: 0}\n', 'routing.parameters: every'],
    ['routing:\n  policy: weighted\nadmission:\n  type: parameterized\n  template: load_shedding_admission\n', 'the admission control point (type parameterized) cannot be exported'],
  ])('refuses %j', (text, want) => {
    expect(() => run(text)).toThrow(want);
  });

  it('an unknown --api-version is refused naming the flag', () => {
    expect(() => run('routing:\n  policy: weighted\n', { file: 'b.yaml', apiVersion: 'v9' })).toThrow('--api-version "v9" is not an EndpointPickerConfig version');
  });

  it('settings llm-d makes elsewhere are warnings, never dropped silently', () => {
    const r = run('routing:\n  policy: weighted\n  scorers: [{name: queue-depth, weight: 1}]\nautoscaler:\n  interval_us: 1000000\ninstance_lifecycle:\n  warm_start_initial_instances: true\n', { file: 'b.yaml', snapshotRefreshIntervalUs: 10_000, cacheSignalDelayUs: 0 });
    expect(r.warnings).toEqual([
      expect.stringMatching(/^b\.yaml:5:3: autoscaler is not exported/),
      expect.stringMatching(/^b\.yaml:7:3: instance_lifecycle is not exported/),
      expect.stringContaining('--refresh-metrics-interval flag (set it to 10ms to match)'),
      expect.stringContaining('--cache-signal-delay 0 µs is not in the EndpointPickerConfig'),
    ]);
  });

  it('every blis-ts scorer has an llm-d mapping or a stated reason for none', () => {
    expect(Object.keys(LLMD_SCORERS).sort()).toEqual([...SCORER_NAMES].sort());
  });

  it('integer weights in proportion', () => {
    expect(integerWeights([2, 1, 1])).toEqual({ ints: [2, 1, 1], exact: true });
    expect(integerWeights([0.7, 0.3])).toEqual({ ints: [7, 3], exact: true });
    expect(integerWeights([4, 6])).toEqual({ ints: [2, 3], exact: true });
    expect(integerWeights([1 / 3, 2 / 3]).exact).toBe(false);
    expect(integerWeights([1 / 3, 2 / 3]).ints).toEqual([333333, 666667]);
  });
});
