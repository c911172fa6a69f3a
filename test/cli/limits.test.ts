/**
 * Work bounded by what was asked: values that cannot be simulated on one machine are refused at once with one
 * error line naming the limit (docs/usage.md, Limits), before any work; values that used to make blis-ts build
 * far more than the run needs now cost what the run needs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { HashIndex } from '../../src/engine/hash-index.js';
import { GenerationBudget } from '../../src/workload/spec/budget.js';
import { generateSpecDrafts } from '../../src/workload/spec/generate.js';
import { parseWorkloadSpec } from '../../src/workload/spec/parse.js';
import type { WorkloadSpec } from '../../src/workload/spec/types.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const dir = mkdtempSync(path.join(tmpdir(), 'blis-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

async function refused(argv: string[]): Promise<string> {
  let out = '';
  const errs: string[] = [];
  const t0 = performance.now();
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => void errs.push(t) });
  expect(code).toBe(2);
  expect(out).toBe('');
  expect(errs).toHaveLength(1);
  // Refused before any work: well under a second even on a busy machine (it used to spin forever or for minutes).
  expect(performance.now() - t0).toBeLessThan(5_000);
  return errs[0] as string;
}

describe('values past a documented limit are refused before any work', () => {
  it('--total-kv-blocks 536870913 (a 32-bit shift loop used to spin forever)', async () => {
    expect(await refused(['run', ...M, '--total-kv-blocks', '536870913'])).toMatch(/--total-kv-blocks is 536,870,913, above the limit of 67,108,864 \(docs\/usage\.md, Limits\)/);
  });

  it('a hardware entry with a huge MemoryGiB (auto-sized to billions of blocks)', async () => {
    const hw = file('hw.json', JSON.stringify({ H100: { TFlopsPeak: 989.5, BwPeakTBs: 3.35, MemoryGiB: 1e12 } }));
    expect(await refused(['run', ...M, '--hardware', 'H100', '--hardware-config', hw])).toMatch(/GPU KV cache of one instance .* above the limit .*sized from the memory of H100 \(MemoryGiB 1000000000000\)/);
  });

  it('100,000 instances (more than 15 GB for 100 requests)', async () => {
    expect(await refused(['run', ...M, '--num-instances', '100000', '--num-requests', '100'])).toMatch(/--num-instances is 100,000, above the limit of 10,000/);
  });

  it('instances x KV blocks past the cluster budget', async () => {
    expect(await refused(['run', ...M, '--num-instances', '9000', '--total-kv-blocks', '60000'])).toMatch(/cluster's KV blocks \(9000 instances x 60000 blocks\)/);
  });

  it('more requests than one run can hold', async () => {
    expect(await refused(['run', ...M, '--num-requests', '50000000'])).toMatch(/--num-requests is 50,000,000, above the limit of 20,000,000/);
    expect(await refused(['run', ...M, '--num-requests', '0', '--horizon', '900000000000', '--rate', '100'])).toMatch(/requests arriving before --horizon/);
  });

  it('a billion closed-loop users without a cap (each one a request and a session)', async () => {
    expect(await refused(['run', ...M, '--concurrency', '1000000000', '--horizon', '1000000'])).toMatch(/number of closed-loop users \(concurrency\) is 1,000,000,000, above the limit of 20,000,000/);
  });

  it('a prompt longer than a request can hold', async () => {
    expect(await refused(['run', ...M, '--prompt-tokens', '20000000', '--prompt-tokens-max', '30000000'])).toMatch(/^--prompt-tokens: 20000000 exceeds the largest value blis-ts accepts \(10,000,000\)/);
  });

  it('--workload-spec /dev/zero (an input read until memory ran out)', async () => {
    expect(await refused(['run', ...M, '--workload-spec', '/dev/zero'])).toMatch(/^--workload-spec: \/dev\/zero: the input is larger than 64 MiB/);
  });

  it('a hash table sized past 2^30 slots throws at once instead of looping', () => {
    expect(() => new HashIndex(536_870_913)).toThrow(/exceed the largest table/);
  });
});

/**
 * A spec of `n` clients. Parsed once with one client and then given `n` copies: parsing a 2 MB YAML file takes
 * seconds in the YAML library, and generation is what is measured here.
 */
function clients(n: number, cap: number): WorkloadSpec {
  const spec = parseWorkloadSpec(`version: "2"
seed: 5
aggregate_rate: 100
num_requests: ${cap}
clients:
  - {id: c0, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: exponential, params: {mean: 500}}, output_distribution: {type: exponential, params: {mean: 200}}}
`, 'many.yaml');
  const one = spec.clients[0]!;
  return { ...spec, clients: Array.from({ length: n }, (_, i) => ({ ...one, id: `c${i}` })) };
}

function session(maxRounds: number, singleSession: boolean, cap: number): string {
  return `version: "2"
seed: 5
aggregate_rate: 1
num_requests: ${cap}
clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 50}}
    reasoning:
      multi_turn:
        max_rounds: ${maxRounds}
        think_time_us: 1000
        context_growth: accumulate
        single_session: ${singleSession}
`;
}

describe('generation costs what the request cap asks for', () => {
  it('10,000 spec clients with num_requests 200: 200 requests generated, in under 2 s (73 s and 4.9 GB before)', () => {
    const spec = clients(10_000, 200);
    const budget = new GenerationBudget();
    // CPU time of this test process (vitest runs each file in its own process): unlike wall time on a shared
    // machine, it measures the work done, not the other processes' load.
    const t0 = process.cpuUsage();
    const drafts = generateSpecDrafts(spec, { numRequests: 200, horizon: MAX_INT64, budget }).drafts;
    const used = process.cpuUsage(t0);
    const seconds = (used.user + used.system) / 1e6;
    expect(drafts).toHaveLength(200);
    expect(budget.materialized).toBe(200);
    expect(seconds).toBeLessThan(2);
  }, 60_000);

  it('a cohort of 100,000 members with a small cap generates only the capped requests', () => {
    const spec = parseWorkloadSpec(`version: "2"
seed: 5
aggregate_rate: 100
num_requests: 300
cohorts:
  - id: crowd
    population: 100000
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: exponential, params: {mean: 500}}
    output_distribution: {type: exponential, params: {mean: 200}}
    diurnal: {peak_hour: 0, peak_to_trough_ratio: 3}
`, 'cohort.yaml');
    const budget = new GenerationBudget();
    const before = process.memoryUsage().heapUsed;
    const drafts = generateSpecDrafts(spec, { numRequests: 300, horizon: MAX_INT64, budget }).drafts;
    expect(drafts).toHaveLength(300);
    expect(budget.materialized).toBe(300);
    // One generator per member would be 500 MB; the waiting members hold a number each.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(300 * 1024 * 1024);
  }, 120_000);

  it.each([
    [1e6, false], [1e6, true], [1e9, false], [1e9, true],
  ])('a multi-turn client with max_rounds %d (single session %s) builds only the rounds that can survive the cap', (rounds, single) => {
    const spec = parseWorkloadSpec(session(rounds, single, 50), 'sessions.yaml');
    const budget = new GenerationBudget();
    const drafts = generateSpecDrafts(spec, { numRequests: 50, horizon: MAX_INT64, budget }).drafts;
    expect(drafts).toHaveLength(50);
    expect(budget.materialized).toBeLessThanOrEqual(50);
  }, 60_000);

  it('without a cap, a session of a billion rounds that would all have to be drawn is refused before drawing', async () => {
    const spec = file('unbounded-rounds.yaml', session(1e9, false, 0));
    expect(await refused(['run', ...M, '--workload-spec', spec, '--horizon', '100000000'])).toMatch(/max_rounds is 1,000,000,000, above the limit of 10,000,000/);
  });
});

describe('replay rows with nothing to simulate', () => {
  const HEADER = 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason';
  const row = (id: number, input: number, output: number, group = '', prefix = 0): string =>
    `${id},c,,,,0,${group},${prefix},false,${input},${output},0,0,0,0,0,,0,0,${(id + 1) * 1000},${(id + 1) * 1000},0,0,0,ok,,`;
  const header = (): string => file('z.yaml', 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n');

  it('0 input and 0 output tokens (an internal error, exit 70): file:line and the fix, exit 2, in both session modes', async () => {
    const data = file('z.csv', `${HEADER}\n${row(0, 10, 5)}\n${row(1, 0, 0)}\n`);
    for (const mode of ['fixed', 'closed-loop']) {
      expect(await refused(['replay', ...M, '--trace-header', header(), '--trace-data', data, '--session-mode', mode])).toMatch(
        /^.*z\.csv:3: request_id 1 has 0 input tokens and 0 output tokens \(and no shared prefix\), so there is nothing to simulate; give it input_tokens >= 1 or output_tokens >= 1, or delete the row$/,
      );
    }
  });

  it('0 input tokens with output, 0 output tokens with input, or a shared prefix alone still replay', async () => {
    const data = file('z-ok.csv', `${HEADER}\n${row(0, 10, 5, 'g', 8)}\n${row(1, 0, 5)}\n${row(2, 7, 0)}\n${row(3, 0, 0, 'g', 8)}\n`);
    let out = '';
    const code = await main(['replay', ...M, '--trace-header', header(), '--trace-data', data, '--horizon', '100000000', '--log', 'error'], { stdout: (t) => (out += t), warn: () => undefined, error: () => undefined });
    expect(code).toBe(0);
    expect(out).toMatch(/"completed_requests": 4/);
  });
});
