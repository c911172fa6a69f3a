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

describe('blis compose', () => {
  const spec = (category: string, id: string): string => `version: "2"\nseed: 1\n${category === '' ? '' : `category: ${category}\n`}aggregate_rate: 4\nclients:\n  - {id: ${id}, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 5}}, output_distribution: {type: constant, params: {value: 5}}}\n`;
  it('merges specs of one category (an unset category is compatible with any)', async () => {
    const r = await cli('compose', '--from', tempFile('a.yaml', spec('reasoning', 'a')), '--from', tempFile('b.yaml', spec('', 'b')));
    expect(r.code, r.err.join()).toBe(0);
    expect(parseWorkloadSpec(r.out, 'out.yaml').category).toBe('reasoning');
  });
  it('under --semantics corrected, refuses specs with conflicting categories: one error line naming both files, exit 2, empty stdout', async () => {
    const a = tempFile('a.yaml', spec('language', 'a'));
    const b = tempFile('b.yaml', spec('multimodal', 'b'));
    const r = await cli('compose', '--semantics', 'corrected', '--from', a, '--from', tempFile('c.yaml', spec('', 'c')), '--from', b);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toBe(`compose: ${a} has category "language" but ${b} has "multimodal"; compose specs of one category (or set the same category: in each), or compose with --semantics reference, which keeps the first spec's category`);
  });
  it('by default (the reference\'s way), composes specs with conflicting categories under the first one, with a warning', async () => {
    const a = tempFile('a.yaml', spec('language', 'a'));
    const b = tempFile('b.yaml', spec('multimodal', 'b'));
    const r = await cli('compose', '--from', a, '--from', b);
    expect(r.code, r.err.join()).toBe(0);
    expect(parseWorkloadSpec(r.out, 'out.yaml').category).toBe('language');
  });
});

describe('blis convert without a known subcommand', () => {
  it('is a usage error', async () => {
    for (const argv of [[], ['presets']]) {
      const r = await cli('convert', ...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toHaveLength(1);
    }
    expect((await cli('convert')).err[0]).toMatch(/^blis convert needs a subcommand: preset, inference-perf, servegen, otel or weka/);
  });
});

describe('blis convert servegen and servegen_data', () => {
  const PDF = '{"input_tokens": "{100: 0.5, 400: 0.5}", "output_tokens": "{50: 1.0}"}';
  const starts = [0, 600, 1200, 28800, 29400, 30000, 50400, 51000, 51600];
  function serveGenDir(rowOf: (t: number) => string): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-servegen-'));
    for (const id of ['0', '3']) {
      writeFileSync(path.join(dir, `chunk-${id}-trace.csv`), `${starts.map(rowOf).join('\n')}\n`);
      writeFileSync(path.join(dir, `chunk-${id}-dataset.json`), `{"0": ${PDF}}`);
    }
    return dir;
  }

  it('prints the cohorts of a directory; blis run reads the same directory as servegen_data', async () => {
    const dir = serveGenDir((t) => `${t},0.8,1.5,Weibull,0.7,2`);
    const r = await cli('convert', 'servegen', '--path', dir, '--window-duration-seconds', '30', '--drain-timeout-seconds', '10');
    expect(r.code, r.err.join()).toBe(0);
    const spec = parseWorkloadSpec(r.out, 'out.yaml');
    expect(spec.cohorts.map((c) => c.id)).toEqual(['midnight-critical', 'midnight-standard', 'morning-critical', 'morning-standard', 'afternoon-critical', 'afternoon-standard']);
    expect(spec.cohorts.map((c) => c.spike?.startTimeUs)).toEqual([0, 0, 40e6, 40e6, 80e6, 80e6]);
    const wl = tempFile('sg.yaml', `version: "2"\nseed: 42\nnum_requests: 60\nservegen_data:\n  path: ${dir}\n  window_duration_secs: 30\n  drain_timeout_secs: 10\n`);
    const viaData = await cli('run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--workload-spec', wl, '--output-format', 'reference');
    const converted = tempFile('conv.yaml', r.out.replace('seed: 42', 'seed: 42\nnum_requests: 60'));
    const viaSpec = await cli('run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--workload-spec', converted, '--output-format', 'reference');
    expect(viaData.code, viaData.err.join()).toBe(0);
    expect(viaData.out).toBe(viaSpec.out);
    expect(viaData.out).toContain('"completed_requests": 60');
  });

  it.each([
    [['--path', '/nonexistent/blis-servegen'], /--path: cannot read the ServeGen directory \/nonexistent\/blis-servegen/],
    [['--path', 'MISSING_COLUMNS'], /have no positive shape and scale \(columns 5 and 6\)/],
    [['--path', 'MIXED_COLUMNS'], /chunk-0-trace\.csv:2: this row has 4 columns but the first row has 6/],
    [['--path', 'MISSING_COLUMNS', '--time', 'evening'], /--time must be one of: midnight, morning, afternoon/],
    [[], /required option '--path <value>' not specified/],
  ])('bad input is one error line, exit 2 (%#)', async (args, msg) => {
    const fixed = args.map((a) => (a === 'MISSING_COLUMNS' ? serveGenDir((t) => `${t},0.8,1.5,Gamma`) : a === 'MIXED_COLUMNS' ? serveGenDir((t) => (t === 600 ? `${t},1,1,Gamma` : `${t},1,1,Gamma,1,1`)) : a));
    const r = await cli('convert', 'servegen', ...fixed);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(msg);
  });
});
