/**
 * Bad deployment files and flag combinations of P/D, the autoscaler and the deployment model: each gives one
 * `error:` line naming the flag or file position and the fix, exit code 2, and nothing on stdout.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-requests', '5'];
const dep = (body: string): string => `models:\n  - name: meta-llama/llama-3.1-8b-instruct\n    configurations:\n${body}`;
const mono = '      - name: a\n        hardware: H100\n        replicas: 1\n';
const pdCfg = (decodeKv: number): string => `      - name: pd\n        hardware: H100\n        prefill: {replicas: 1}\n        decode: {replicas: 1, total_kv_blocks: ${decodeKv}}\n`;

async function expectRefused(argv: readonly string[], message: RegExp): Promise<void> {
  let stdout = '';
  const errors: string[] = [];
  const code = await main(argv, { stdout: (t) => (stdout += t), warn: () => undefined, error: (t) => errors.push(t) });
  expect(code, errors.join('\n')).toBe(2);
  expect(stdout).toBe('');
  expect(errors.length, errors.join('\n')).toBe(1);
  expect(errors[0]?.split('\n').length).toBe(1);
  expect(errors[0]).toMatch(message);
}

describe('bad P/D, autoscaler and deployment inputs: one clear error, exit 2', () => {
  it('a pool with no instances', async () => {
    await expectRefused(['run', '--deployment', file('empty.yaml', dep('      - name: a\n        hardware: H100\n        replicas: 0\n'))], /empty\.yaml:6:19: .*replicas: the pool has no instances; give it at least one replica/);
  });
  it('a decode pool with less KV than a request needs', async () => {
    await expectRefused(['run', '--deployment', file('small.yaml', dep(pdCfg(20))), '--num-requests', '5', '--pd-decider', 'always'], /small\.yaml: decode pool pd\/decode holds 20 KV blocks, but request request_\d+ needs \d+ .*give the decode pool more KV/);
  });
  it('min_replicas greater than max_replicas', async () => {
    await expectRefused(['run', '--deployment', file('minmax.yaml', dep('      - name: a\n        hardware: H100\n        replicas: 1\n        min_replicas: 3\n        max_replicas: 2\n'))], /minmax\.yaml:7:23: .*min_replicas \(3\) is greater than max_replicas \(2\); lower min_replicas or raise max_replicas/);
  });
  it('a request naming a model the deployment does not serve', async () => {
    const wl = file('wl.yaml', 'version: "2"\nseed: 1\naggregate_rate: 5\nnum_requests: 5\nclients:\n  - id: c\n    model: nobody/unknown\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 100}}\n    output_distribution: {type: constant, params: {value: 10}}\n');
    await expectRefused(['run', '--deployment', file('one.yaml', dep(mono)), '--workload-spec', wl], /request request_0 names model "nobody\/unknown", which .*one\.yaml does not deploy/);
  });
  it('negative delays', async () => {
    await expectRefused(['run', '--deployment', file('neg.yaml', `${dep(mono)}autoscaler:\n  model_load_time: {distribution: constant, value: -5}\n`)], /neg\.yaml:8:52: autoscaler\.model_load_time\.value: must be >= 0, got -5/);
  });
  it('mixing monolithic and P/D configurations of one model', async () => {
    await expectRefused(['run', '--deployment', file('mixed.yaml', dep(mono + pdCfg(5000)))], /model meta-llama\/llama-3\.1-8b-instruct mixes monolithic and disaggregated configurations/);
  });
  it('a deployment file together with --num-instances or the P/D pool flags', async () => {
    await expectRefused(['run', '--deployment', file('d.yaml', dep(mono)), '--num-instances', '3'], /--num-instances cannot be combined with --deployment .*remove the flag/);
    await expectRefused(['run', '--deployment', file('d2.yaml', dep(mono)), '--prefill-instances', '1'], /--prefill-instances cannot be combined with --deployment/);
  });
  it('P/D flag combinations', async () => {
    await expectRefused(['run', ...M, '--num-instances', '2', '--prefill-instances', '2', '--decode-instances', '1'], /Invalid PD pool topology: .*exceeds num-instances \(2\)/);
    await expectRefused(['run', ...M, '--num-instances', '2', '--prefill-instances', '1'], /both --prefill-instances and --decode-instances must be set/);
    await expectRefused(['run', ...M, '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--pd-decider', 'sometimes'], /Unknown PD decider "sometimes"/);
    await expectRefused(['run', ...M, '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--pd-transfer-bandwidth', '0'], /--pd-transfer-bandwidth must be a finite positive number/);
    await expectRefused(['run', ...M, '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--decode-tp', '0'], /--decode-tp must be > 0/);
    await expectRefused(['run', ...M, '--pd-transfer-contention'], /--pd-transfer-contention requires PD disaggregation/);
    await expectRefused(['run', ...M, '--pd-kv-ownership', 'single'], /--pd-kv-ownership needs P\/D pools/);
    await expectRefused(['run', ...M, '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--pd-transfer-mode', 'streamed'], /--pd-transfer-mode must be one of whole, pipelined/);
    await expectRefused(['run', ...M, '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--prefill-latency-model', 'magic'], /--prefill-latency-model "magic" is not a recognized backend/);
  });
  it('autoscaler flag combinations and replay refusals', async () => {
    await expectRefused(['run', ...M, '--autoscale-policy', 'threshold'], /--autoscale-policy needs the autoscaler: set --model-autoscaler-interval-us/);
    await expectRefused(['run', ...M, '--autoscale-policy', 'psychic', '--model-autoscaler-interval-us', '1000'], /unknown --autoscale-policy "psychic"/);
    await expectRefused(['run', ...M, '--model-autoscaler-interval-us', '-5'], /--model-autoscaler-interval-us must be a finite number >= 0/);
    await expectRefused(['run', ...M, '--model-autoscaler-interval-us', '1000', '--autoscale-policy', 'threshold', '--autoscale-min-replicas', '4', '--autoscale-max-replicas', '2'], /--autoscale-min-replicas \(4\) is greater than --autoscale-max-replicas \(2\)/);
    const header = file('t.yaml', 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n');
    const data = file('t.csv', 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason\n0,c,,,,0,,0,false,100,10,0,0,0,0,0,,0,0,0,0,0,0,0,ok,,\n');
    const R = ['replay', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--trace-header', header, '--trace-data', data];
    await expectRefused([...R, '--model-autoscaler-interval-us', '1000'], /--model-autoscaler-interval-us is not supported in blis replay/);
    const bundle = file('b.yaml', 'autoscaler:\n  interval_us: 1000\n');
    await expectRefused([...R, '--policy-config', bundle], /blis replay does not support autoscaler config/);
    const pools = file('np.yaml', 'node_pools:\n  - {name: p, gpu_type: H100, gpus_per_node: 1, gpu_memory_gib: 80, initial_nodes: 1, min_nodes: 0, max_nodes: 1, provisioning_delay: {mean: 0, stddev: 0}, cost_per_hour: 1}\n');
    await expectRefused([...R, '--policy-config', pools], /blis replay does not support node_pools config/);
  });
});
