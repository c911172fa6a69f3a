/**
 * Bad input to `blis run` / `blis replay`: one `error:` line on stderr that names the flag, field or row and
 * the fix, nothing on stdout, and exit code 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './main.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const dir = mkdtempSync(path.join(tmpdir(), 'blis-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

async function fails(argv: string[]): Promise<string> {
  let out = '';
  const errs: string[] = [];
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => void errs.push(t) });
  expect(code).toBe(2);
  expect(out).toBe('');
  expect(errs).toHaveLength(1);
  expect(errs[0]).not.toContain('\n    at ');
  return errs[0] as string;
}

describe('bad input is one clear error line and exit code 2', () => {
  it.each([
    [['run', ...M, '--rate', 'abc'], /--rate.*"abc"/],
    [['run', ...M, '--rate', '0'], /--rate must be/],
    [['run', ...M, '--num-requests', '1.5'], /--num-requests.*integer/],
    [['run', ...M, '--timeout', '0'], /--timeout/],
    [['run', ...M, '--prompt-tokens-min', '10', '--prompt-tokens-max', '5'], /--prompt-tokens/],
    [['run', ...M, '--scheduler', 'lifo'], /--scheduler.*lifo.*valid/],
    [['run', ...M, '--latency-model', 'magic'], /--latency-model.*magic/],
    [['run', ...M, '--routing-policy', 'weighted', '--routing-scorers', 'queue-depth:x'], /routing-scorers/],
    [['run', ...M, '--fitness-weights', 'bogus:1'], /bogus/],
    [['run', ...M, '--gpu-memory-utilization', '1.5'], /--gpu-memory-utilization/],
    [['run', ...M, '--alpha-coeffs', '1,2,3'], /--alpha-coeffs requires --beta-coeffs/],
    [['run', '--model', 'no-such-model'], /no-such-model/],
    [['run', ...M, '--hardware', 'TPU9'], /--hardware "TPU9".*--hardware-config/],
    [['run', ...M, '--bogus-flag', '1'], /unknown option '--bogus-flag'/],
    // Commander's suggestion joins the line with a space, not an escaped newline.
    [['run', ...M, '--num-requsts', '5'], /^unknown option .--num-requsts. \(Did you mean --num-requests\?\) \(see blis --help\)$/],
    [['replay', ...M], /--trace-header is required/],
  ])('%j', async (argv, pattern) => {
    expect(await fails(argv)).toMatch(pattern);
  });

  it('names the file, line and column of a malformed workload spec', async () => {
    const spec = file('bad.yaml', 'version: "2"\naggregate_rate: 5\nnum_requests: 10\nclients:\n  - id: a\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 10}}\n    output_distribution: {type: constant, params: {value: 10}}\n    bogus_key: 1\n');
    expect(await fails(['run', ...M, '--workload-spec', spec])).toMatch(/bad\.yaml:10:\d+.*bogus_key/);
  });

  it('names the file and row of a malformed trace', async () => {
    const header = file('t.yaml', 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n');
    const data = file('t.csv', 'request_id,client_id\n0,a,extra\n');
    expect(await fails(['replay', ...M, '--trace-header', header, '--trace-data', data])).toMatch(/t\.csv/);
  });

  it('names the policy bundle file, line and field', async () => {
    const bundle = file('policy.yaml', 'admission:\n  policy: tier-shed\n  bogus: 3\n');
    expect(await fails(['run', ...M, '--policy-config', bundle])).toMatch(/policy\.yaml:3:\d+.*bogus/);
  });
});
