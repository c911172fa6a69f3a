/**
 * Shared by the report tests: a 4-instance workload with two SLO classes, tight enough to preempt and to
 * miss TTFT targets (so every chart of the run report has data), and the CLI run in-process.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/main.js';

export const MODEL = 'meta-llama/llama-3.1-8b-instruct';

export const SLO_SPEC = `version: "2"
seed: 11
aggregate_rate: 90
num_requests: 400
goodput_slo_targets:
  critical: {ttft_ms: 60}
  batch: {e2e_ms: 5000}
clients:
  - id: chat
    slo_class: critical
    rate_fraction: 0.6
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 700, std_dev: 250, min: 50, max: 2000}}
    output_distribution: {type: exponential, params: {mean: 180}}
  - id: batch
    slo_class: batch
    rate_fraction: 0.4
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 1500}}
    output_distribution: {type: constant, params: {value: 300}}
`;

export function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'blis-report-'));
}

/** Writes the SLO workload spec in `dir` and returns the run arguments of the 4-instance traced run. */
export function sloRunArgs(dir: string): string[] {
  const spec = path.join(dir, 'slo.yaml');
  writeFileSync(spec, SLO_SPEC);
  return [
    'run', '--model', MODEL, '--num-instances', '4', '--workload-spec', spec, '--routing-policy', 'weighted',
    '--trace-level', 'decisions', '--counterfactual-k', '3', '--total-kv-blocks', '900', '--timeseries-interval-us', '100000',
  ];
}

export async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (err += `${t}\n`), info: () => undefined });
  return { code, out, err };
}
