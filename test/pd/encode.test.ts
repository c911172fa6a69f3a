/**
 * The E/P/D encode pool through the CLI: the shared round-robin counter the encode call advances, the multimodal
 * decider's choice, requests lost at encode routing when no encode pod is placed (INV-1's term and the Anomaly
 * Counters line), and bad flag combinations (one `error:` line, exit 2, empty stdout).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-epd-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

const M = ['--model', 'qwen/qwen2.5-7b-instruct', '--hardware', 'H100', '--tp', '1'];
const EPD = ['--num-instances', '5', '--prefill-instances', '1', '--decode-instances', '2', '--encode-instances', '2', '--pd-decider', 'always'];
// Half the requests carry an image, half are text only.
const SPEC = `version: "2"
seed: 3
category: multimodal
aggregate_rate: 10
num_requests: 40
clients:
  - id: vision
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 20}}
    multimodal:
      text_distribution: {type: constant, params: {value: 50}}
      image_distribution: {type: constant, params: {value: 300}}
      image_count_distribution: {type: constant, params: {value: 1}}
  - id: text
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 120}}
    output_distribution: {type: constant, params: {value: 20}}
`;

async function epdRun(extra: readonly string[]): ReturnType<typeof runCli> {
  const r = await runCli(['run', ...M, '--workload-spec', file('mm.yaml', SPEC), '--seed', '9', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
  return r;
}

const byArrival = <T extends { req: { arrivalTime: number; id: string } }>(xs: readonly T[]): T[] =>
  [...xs].sort((a, b) => a.req.arrivalTime - b.req.arrivalTime || (a.req.id < b.req.id ? -1 : 1));

describe('the encode pool', () => {
  it('advances the round-robin counter it shares with the decode and prefill pools (three calls per request)', async () => {
    const r = await epdRun([...EPD, '--encode-decider', 'always']);
    const cs = r.sims[0]?.cs;
    const parents = byArrival(cs?.pd?.parents ?? []);
    expect(parents.length).toBe(40);
    // Calls k*3, k*3+1, k*3+2 go to decode, encode, prefill: decode pods alternate, encode pods alternate
    // starting with the second one, and the single prefill pod takes every prefill.
    parents.forEach((p, k) => {
      expect(cs?.instances[p.decodeIndex]?.id).toBe(k % 2 === 0 ? 'instance_1' : 'instance_2');
      expect(cs?.instances[p.encodeIndex]?.id).toBe(k % 2 === 0 ? 'instance_4' : 'instance_3');
      expect(p.prefillIndex).toBe(0);
    });
    // No encode work runs: the encode pods serve nothing.
    expect(cs?.instances[3]?.metrics.requests.length).toBe(0);
    expect(cs?.instances[4]?.metrics.requests.length).toBe(0);
    // Without the encode stage the counter advances by two per request: every decode choice is instance_1.
    const plain = await epdRun(['--num-instances', '5', '--prefill-instances', '1', '--decode-instances', '2', '--pd-decider', 'always']);
    expect(new Set(plain.sims[0]?.cs.pd?.parents.map((p) => p.decodeIndex))).toEqual(new Set([1]));
  });

  it('the multimodal decider sends exactly the requests with image tokens through the encode pool', async () => {
    const r = await epdRun([...EPD, '--encode-decider', 'multimodal']);
    const sim = r.sims[0];
    const parents = sim?.cs.pd?.parents ?? [];
    const withImage = parents.filter((p) => p.req.imageTokens > 0);
    expect(withImage.length).toBeGreaterThan(5);
    expect(withImage.length).toBeLessThan(35);
    for (const p of parents) expect(p.encodeIndex >= 0).toBe(p.req.imageTokens > 0);
    expect(sim?.cs.pd?.encode?.routed).toBe(withImage.length);
  });

  it('with no encode pod placed, every multimodal request is lost at encode routing and counted there', async () => {
    // Three GPUs place the prefill and decode pods only; the encode pods wait for GPUs that never come.
    const bundle = file('np.yaml', 'node_pools:\n  - {name: p, gpu_type: H100, gpus_per_node: 3, gpu_memory_gib: 80, initial_nodes: 1, min_nodes: 0, max_nodes: 1, provisioning_delay: {mean: 0, stddev: 0}, cost_per_hour: 1}\n');
    const r = await epdRun([...EPD, '--encode-decider', 'multimodal', '--policy-config', bundle, '--output-format', 'reference']);
    const sim = r.sims[0];
    const images = sim?.requests.filter((q) => q.imageTokens > 0).length ?? 0;
    expect(images).toBeGreaterThan(5);
    expect(sim?.cs.encodeRoutingRejections).toBe(images);
    expect(r.stdout).toContain(`Encode Routing Rejections: ${images}\n`);
    // The text-only requests are split and served as usual (a split request ends through its decode half).
    const text = sim?.requests.filter((q) => q.imageTokens === 0) ?? [];
    for (const q of text) expect(sim?.cs.pd?.parentOf(q)?.decode?.outcome).toBe('completed');
    for (const q of sim?.requests.filter((x) => x.imageTokens > 0) ?? []) expect(q.outcome).toBe('encode_rejected');
    const json = await epdRun([...EPD, '--encode-decider', 'multimodal', '--policy-config', bundle]);
    expect((JSON.parse(json.stdout) as { anomaly_counters: Record<string, number> }).anomaly_counters['encode_routing_rejections']).toBe(images);
  });
});

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

describe('bad encode-pool inputs: one clear error, exit 2 (the reference refuses the same ones)', () => {
  const R = ['run', ...M, '--num-requests', '5'];
  it('an encode pool without prefill/decode pools', async () => {
    await expectRefused([...R, '--num-instances', '4', '--encode-instances', '2', '--encode-decider', 'multimodal'], /^Invalid PD pool topology: encode-instances \(2\) requires a decode-capable pool: set --prefill-instances, --decode-instances, or --prefill-decode-instances > 0$/);
  });
  it('an unknown encode decider, in run and in replay', async () => {
    const flags = ['--num-instances', '4', '--prefill-instances', '1', '--decode-instances', '1', '--encode-instances', '1', '--encode-decider', 'sometimes'];
    await expectRefused([...R, ...flags], /^Unknown encode decider "sometimes"\. Valid: always, multimodal, never; set --encode-decider$/);
    const header = file('t.yaml', 'trace_version: 2\ntime_unit: us\nmode: generated\nwarm_up_requests: 0\n');
    const data = file('t.csv', 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason\n0,c,,,,0,,0,false,10,5,10,0,0,0,0,,0,0,0,0,0,0,0,ok,,\n');
    await expectRefused(['replay', ...M, '--trace-header', header, '--trace-data', data, ...flags], /^Unknown encode decider "sometimes"/);
  });
  it('an encode decider without an encode pool', async () => {
    await expectRefused([...R, '--num-instances', '4', '--prefill-instances', '1', '--decode-instances', '1', '--encode-decider', 'always'], /^--encode-decider="always" requires --encode-instances > 0 \(the encode pool is disabled\)$/);
  });
  it('a negative encode pool, and pools larger than the cluster', async () => {
    await expectRefused([...R, '--num-instances', '4', '--prefill-instances', '1', '--decode-instances', '1', '--encode-instances', '-1'], /encode-instances must be >= 0, got -1/);
    await expectRefused([...R, '--num-instances', '3', '--prefill-instances', '1', '--decode-instances', '1', '--encode-instances', '2', '--encode-decider', 'always'], /\+ encode-instances \(2\) = 4 exceeds num-instances \(3\)/);
  });
  it('the encode flags with a deployment file (which has no encode pool)', async () => {
    const dep = file('dep.yaml', 'models:\n  - name: qwen/qwen2.5-7b-instruct\n    configurations:\n      - name: pd\n        hardware: H100\n        prefill: {replicas: 1}\n        decode: {replicas: 1}\n');
    await expectRefused(['run', '--num-requests', '5', '--deployment', dep, '--encode-instances', '1'], /--encode-instances cannot be combined with --deployment .*dep\.yaml: a deployment file has no encode pool/);
  });
});
