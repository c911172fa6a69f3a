import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { ConfigError } from './config-error.js';
import { simulate } from './simulate.js';

async function cli(argv: string[]): Promise<string> {
  let out = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (out += `ERR ${t}`) });
  expect(code).toBe(0);
  return out;
}

describe('simulate (library API)', () => {
  it('gives the same bytes as the CLI for the same options', async () => {
    const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '60', '--rate', '8', '--num-instances', '2',
      '--routing-policy', 'weighted', '--routing-scorers', 'prefix-affinity:3,queue-depth:2', '--prefix-tokens', '64', '--seed', '9'];
    const viaCli = await cli([...argv, '--output-format', 'reference']);
    const r = await simulate({
      mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', numRequests: 60, rate: 8, numInstances: 2,
      routingPolicy: 'weighted', routingScorers: 'prefix-affinity:3,queue-depth:2', prefixTokens: 64, seed: 9,
    });
    expect(r.referenceText).toBe(viaCli);
    expect(r.metrics['completed_requests']).toBe(60);
    expect(JSON.stringify(r.report)).toBe(JSON.stringify(JSON.parse(await cli(argv))));
  });

  it('reads option-named files from config.files, never the disk', async () => {
    const spec = [
      'version: "2"', 'seed: 5', 'aggregate_rate: 4', 'num_requests: 20', 'clients:', '  - id: a', '    rate_fraction: 1',
      '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 100}}',
      '    output_distribution: {type: constant, params: {value: 20}}',
    ].join('\n');
    const r = await simulate({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', workloadSpec: 'w.yaml', files: { 'w.yaml': spec } });
    expect(r.metrics['completed_requests']).toBe(20);
    await expect(simulate({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', workloadSpec: 'missing.yaml' })).rejects.toThrow(/config.files/);
  });

  it('rejects unknown keys and wrong types, naming the key', async () => {
    await expect(simulate({ mode: 'run', model: 'x', numRequest: 5 })).rejects.toThrow(/numRequest/);
    await expect(simulate({ mode: 'run', model: 'x', rate: 'fast' })).rejects.toThrow(ConfigError);
    await expect(simulate({ mode: 'run', model: 'x', rate: 'fast' })).rejects.toThrow(/rate/);
  });
});
