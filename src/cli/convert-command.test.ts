/**
 * `blis convert`: YAML on stdout, and one `error:` line with exit 2 for bad input.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertPreset } from '../workload/profiles/convert.js';
import { parseWorkloadSpec } from '../workload/spec/parse.js';
import { main } from './main.js';
import { HAS_PARITY, PARITY_DIR, PARITY_SKIP_NOTE } from '../../test/parity/workload-fixtures.js';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string[] }> {
  let out = '';
  const err: string[] = [];
  const code = await main(argv, { stdout: (t) => void (out += t), warn: (t) => void err.push(`warning: ${t}`), error: (t) => void err.push(t) });
  return { code, out, err };
}

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'blis-convert-'));
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('blis convert preset', () => {
  it('prints the converted spec', async () => {
    const r = await cli('convert', 'preset', '--name', 'summarization', '--rate', '2.5', '--num-requests', '40', '--seed', '9');
    expect(r).toEqual({ code: 0, out: convertPreset({ name: 'summarization', rate: 2.5, numRequests: 40, seed: 9n }), err: [] });
    expect(parseWorkloadSpec(r.out, 'out.yaml').numRequests).toBe(40);
  });

  it.skipIf(!HAS_PARITY)(`blis run on the converted spec prints and traces exactly what blis run --workload prints${PARITY_SKIP_NOTE}`, async () => {
    const engine = [
      'run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1',
      '--model-config-folder', path.join(PARITY_DIR, 'model_configs/llama-3.1-8b-instruct'),
      '--hardware-config', path.join(PARITY_DIR, 'hardware_config.json'),
    ];
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-convert-run-'));
    const flags = ['--rate', '10', '--num-requests', '300', '--seed', '123'];
    const converted = await cli('convert', 'preset', '--name', 'chatbot', ...flags);
    writeFileSync(path.join(dir, 'chatbot.yaml'), converted.out);
    const direct = await cli(...engine, '--workload', 'chatbot', ...flags, '--trace-output', path.join(dir, 'direct'));
    const viaSpec = await cli(...engine, '--workload-spec', path.join(dir, 'chatbot.yaml'), '--trace-output', path.join(dir, 'spec'));
    expect([direct.code, viaSpec.code]).toEqual([0, 0]);
    expect(viaSpec.out).toBe(direct.out);
    expect(readFileSync(path.join(dir, 'spec.csv'), 'utf8')).toBe(readFileSync(path.join(dir, 'direct.csv'), 'utf8'));
  });

  it('defaults: rate 1, 100 requests, seed 42, 300 s timeout', async () => {
    const r = await cli('convert', 'preset', '--name', 'chatbot');
    expect(r.out).toBe(convertPreset({ name: 'chatbot', rate: 1, numRequests: 100 }));
  });

  it('bad input: one error line, exit 2', async () => {
    for (const [argv, msg] of [
      [['--name', 'nope'], /^--name: unknown preset "nope"/],
      [['--name', 'chatbot', '--rate', '0'], /^--rate must be a finite value > 0, got 0$/],
      [['--name', 'chatbot', '--rate', 'fast'], /^--rate: "fast" is not a finite decimal number/],
      [['--name', 'chatbot', '--rate', '0x10'], /^--rate: "0x10" is not a finite decimal number \(write it in decimal/],
      [['--name', 'chatbot', '--num-requests', '2.5'], /^--num-requests: "2.5" is not an integer/],
      [['--name', 'chatbot', '--num-requests', '010'], /^--num-requests: "010" has a leading zero, which the reference reads as octal/],
      [['--name', 'chatbot', '--seed', 'x'], /^--seed: "x" is not an integer/],
      [['--rate', '1'], /required option '--name <value>' not specified/],
    ] as const) {
      const r = await cli('convert', 'preset', ...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toHaveLength(1);
      expect(r.err[0]).toMatch(msg);
    }
  });
});

describe('blis convert inference-perf', () => {
  const spec = `version: "2"
seed: 3
inference_perf:
  stages: [{rate: 6, duration: 20}]
  shared_prefix: {num_unique_system_prompts: 1, num_users_per_system_prompt: 2, system_prompt_len: 8, question_len: 4, output_len: 4}
`;

  it('prints the expanded spec', async () => {
    const r = await cli('convert', 'inference-perf', '--spec', tempFile('ip.yaml', spec));
    expect(r.code).toBe(0);
    const out = parseWorkloadSpec(r.out, 'out.yaml');
    expect(out.clients.map((c) => c.id)).toEqual(['prompt-0-user-0', 'prompt-0-user-1']);
    expect(out.numRequests).toBe(120);
  });

  it('a missing file, a bad spec, no inference_perf section: exit 2 with the cause', async () => {
    const missing = await cli('convert', 'inference-perf', '--spec', '/nonexistent/ip.yaml');
    expect([missing.code, missing.err.length]).toEqual([2, 1]);
    expect(missing.err[0]).toMatch(/^--spec: cannot read \/nonexistent\/ip\.yaml/);
    const badFile = tempFile('bad.yaml', spec.replace('rate: 6', 'rate: -6'));
    const bad = await cli('convert', 'inference-perf', '--spec', badFile);
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toMatch(new RegExp(`^${badFile.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4:\\d+: inference_perf\\.stages\\[0\\]\\.rate: `));
    const plain = await cli('convert', 'inference-perf', '--spec', tempFile('plain.yaml', 'aggregate_rate: 1\nclients: [{id: a, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 1}}, output_distribution: {type: constant, params: {value: 1}}}]\n'));
    expect(plain.code).toBe(2);
    expect(plain.err[0]).toMatch(/does not contain an inference_perf section$/);
  });
});

describe('blis convert without a known subcommand', () => {
  it('is a usage error', async () => {
    for (const argv of [[], ['presets']]) {
      const r = await cli('convert', ...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toHaveLength(1);
    }
    expect((await cli('convert')).err[0]).toMatch(/^blis convert needs a subcommand: preset, inference-perf or servegen/);
  });
});

describe('blis convert servegen', () => {
  it('is refused as not supported yet', async () => {
    const r = await cli('convert', 'servegen', '--path', 'data');
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/^blis convert servegen is not supported yet/);
  });
});
