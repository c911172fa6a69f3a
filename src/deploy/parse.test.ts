import { describe, expect, it } from 'vitest';
import { isBlisError } from '../domain/errors.js';
import { parseDeployment } from './parse.js';

const GOOD = `models:
  - name: Meta-Llama/Llama-3.1-8B-Instruct
    configurations:
      - name: mono
        hardware: H100
        replicas: 2
        min_replicas: 1
        max_replicas: 4
  - name: qwen/qwen3-14b
    configurations:
      - name: pd
        hardware: H100
        tp: 1
        prefill: {replicas: 1, tp: 2}
        decode: {replicas: 2, max_replicas: 3, total_kv_blocks: 5000}
autoscaler:
  policy: threshold
  interval_us: 1000000
  model_load_time: {distribution: normal, mean: 30, stddev: 5}
  warmup: {curve: step, duration_us: 60000000, initial_penalty: 1.3}
  drain: {mode: wait, timeout_us: 5000000}
`;

function errorOf(text: string): string {
  try {
    parseDeployment(text, 'dep.yaml');
  } catch (e) {
    if (!isBlisError(e)) throw e;
    return e.message;
  }
  throw new Error('expected an error');
}

describe('deployment files', () => {
  it('reads models x configurations x pools with their bounds and overrides', () => {
    const d = parseDeployment(GOOD, 'dep.yaml');
    expect(d.defaultModel).toBe('meta-llama/llama-3.1-8b-instruct');
    expect(d.models.map((m) => m.name)).toEqual(['meta-llama/llama-3.1-8b-instruct', 'qwen/qwen3-14b']);
    expect(d.models[0]?.configs[0]?.pools).toEqual([{ kind: 'monolithic', replicas: 2, minReplicas: 1, maxReplicas: 4 }]);
    expect(d.models[1]?.configs[0]?.pools).toEqual([
      { kind: 'prefill', replicas: 1, minReplicas: 1, maxReplicas: 1, tp: 2 },
      { kind: 'decode', replicas: 2, minReplicas: 2, maxReplicas: 3, totalKvBlocks: 5000 },
    ]);
    expect(d.autoscaler?.policy).toBe('threshold');
    expect(d.autoscaler?.modelLoadTime).toEqual({ kind: 'normal', meanS: 30, stddevS: 5 });
    expect(d.autoscaler?.drain).toEqual({ mode: 'wait', timeoutUs: 5000000 });
    expect(d.autoscaler?.policyParams).toEqual({});
  });
  it('policy parameters by the policy\'s own names', () => {
    const d = parseDeployment(GOOD.replace('policy: threshold', 'policy: threshold\n  policy_params: {step: 2, scale_up_queue_depth: 4, cooldown_us: 0}'), 'dep.yaml');
    expect(d.autoscaler?.policyParams).toEqual({ step: 2, scaleUpQueueDepth: 4, cooldownUs: 0 });
    const t = parseDeployment(GOOD.replace('policy: threshold', 'policy: target-utilization\n  policy_params: {target: 0.3, max_scale_down_fraction: 1}'), 'dep.yaml');
    expect(t.autoscaler?.policyParams).toEqual({ target: 0.3, maxScaleDownFraction: 1 });
  });
  it('per-configuration inter-node fabric: gpus_per_node, inter_node_bandwidth, inter_node_latency', () => {
    const d = parseDeployment(GOOD.replace('hardware: H100\n        replicas: 2', 'hardware: H100\n        gpus_per_node: 8\n        inter_node_bandwidth: 25\n        inter_node_latency: 0.01\n        replicas: 2'), 'dep.yaml');
    expect(d.models[0]?.configs[0]).toMatchObject({ gpusPerNode: 8, interNodeBandwidth: 25, interNodeLatency: 0.01 });
    expect(d.models[1]?.configs[0]?.gpusPerNode).toBeUndefined();
    expect(errorOf(GOOD.replace('hardware: H100\n        replicas: 2', 'hardware: H100\n        gpus_per_node: 0\n        replicas: 2'))).toMatch(/models\[0\]\.configurations\[0\]\.gpus_per_node: must be >= 1, got 0/);
  });
  it('JSON works too', () => {
    const d = parseDeployment('{"models": [{"name": "qwen/qwen3-14b", "configurations": [{"name": "a", "hardware": "H100", "replicas": 1}]}]}', 'dep.json');
    expect(d.models[0]?.configs[0]?.name).toBe('a');
  });
  it('one located error per mistake, naming the key and the fix', () => {
    const cases: [string, RegExp][] = [
      [GOOD.replace('replicas: 2\n        min_replicas: 1', 'replicas: 0\n        min_replicas: 0'), /dep\.yaml:6:19: models\[0\]\.configurations\[0\]\.replicas: the pool has no instances; give it at least one replica/],
      [GOOD.replace('min_replicas: 1\n        max_replicas: 4', 'min_replicas: 5\n        max_replicas: 4'), /dep\.yaml:7:23: .*min_replicas \(5\) is greater than max_replicas \(4\)/],
      [GOOD.replace('replicas: 2\n', 'replicas: 9\n'), /replicas: 9 is outside \[min_replicas, max_replicas\] = \[1, 4\]/],
      [GOOD.replace('mean: 30, stddev: 5', 'mean: -30, stddev: 5'), /dep\.yaml:19:49: autoscaler\.model_load_time\.mean: must be >= 0, got -30/],
      [GOOD.replace('hardware: H100\n        replicas: 2', 'hardwar: H100\n        replicas: 2'), /dep\.yaml:5:9: models\[0\]\.configurations\[0\]\.hardwar: unknown key "hardwar"/],
      [GOOD.replace('decode: {replicas: 2, max_replicas: 3, total_kv_blocks: 5000}', ''), /needs both prefill and decode pools/],
      [GOOD.replace('name: pd', 'name: mono'), /configuration "mono" is defined twice/],
      [GOOD.replace('mode: wait, timeout_us', 'mode: immediate, timeout_us'), /a timeout only applies to mode wait/],
      [GOOD.replace('curve: step', 'curve: cubic'), /warmup\.curve: unknown value "cubic"; use one of: linear, exponential, step/],
      [GOOD.replace('policy: threshold', 'policy: magic'), /autoscaler\.policy: unknown value "magic"/],
      [GOOD.replace('policy: threshold', 'policy: threshold\n  policy_params: {target: 0.3}'), /dep\.yaml:18:19: autoscaler\.policy_params\.target: unknown key "target"; use one of: scale_up_queue_depth/],
      [GOOD.replace('policy: threshold', 'policy: target-utilization\n  policy_params: {target: 0}'), /autoscaler\.policy_params\.target: must be > 0, got 0/],
      [GOOD.replace('policy: threshold', 'policy: threshold\n  policy_params: {scale_up_utilization: 0.2, scale_down_utilization: 0.5}'), /scale_down_utilization \(0\.5\) is above scale_up_utilization \(0\.2\)/],
      [GOOD.replace('policy: threshold', 'policy: saturation\n  policy_params: {target: 0.3}'), /policy saturation takes no parameters here; tune the saturation analyzer/],
      ['models: []\n', /models: is empty/],
      ['foo: 1\n', /dep\.yaml:1:1: foo: unknown key "foo"/],
      ['models: [\n', /dep\.yaml:\d+:\d+: invalid YAML/],
    ];
    for (const [text, want] of cases) expect(errorOf(text)).toMatch(want);
  });
});
