/**
 * Regression tests for the bad inputs a hardening review found (YAML expansion, nonsense values accepted
 * silently, misleading messages). Each runs the CLI in-process: the expected outcome is one `error:` line that
 * names the file position or flag and the fix, exit 2, empty stdout — or, for inputs that are legitimately
 * small or merely unusual, a normal run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './main.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
/**
 * Not a speed target (those live in bench/): a bound far above the milliseconds these take, far below the minutes
 * the unbounded versions ran, so a regression shows as a failure rather than a hung suite.
 */
const HANG_MS = 10_000;
const dir = mkdtempSync(path.join(tmpdir(), 'blis-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, body: string | Uint8Array): string {
  const p = path.join(dir, name);
  writeFileSync(p, body);
  return p;
}

interface Run {
  code: number;
  out: string;
  errors: string[];
  warnings: string[];
  info: string[];
  debug: string[];
  ms: number;
}

async function cli(argv: string[]): Promise<Run> {
  const r: Run = { code: -1, out: '', errors: [], warnings: [], info: [], debug: [], ms: 0 };
  const t0 = performance.now();
  r.code = await main(argv, {
    stdout: (t) => void (r.out += t),
    warn: (t) => void r.warnings.push(t),
    error: (t) => void r.errors.push(t),
    logInfo: (t) => void r.info.push(t),
    logDebug: (t) => void r.debug.push(t),
  });
  r.ms = performance.now() - t0;
  return r;
}

async function fails(argv: string[], pattern: RegExp): Promise<Run> {
  const r = await cli(argv);
  expect(r.errors, JSON.stringify(r.errors)).toHaveLength(1);
  expect(r.errors[0]).toMatch(pattern);
  // eslint-disable-next-line no-control-regex
  expect(r.errors[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\ufeff\ufffd]/);
  expect(r.code).toBe(2);
  expect(r.out).toBe('');
  return r;
}

const CLIENT = (id: string, extra = ''): string =>
  `  - id: ${id}\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 20}}\n    output_distribution: {type: constant, params: {value: 10}}\n${extra}`;
const SPEC_HEAD = 'version: "2"\naggregate_rate: 5\nnum_requests: 10\n';
let fileCount = 0;
const unique = (): string => (fileCount++).toString(36).padStart(4, '0');
const spec = (body: string): string => file(`spec-${unique()}.yaml`, body);
const runSpec = (body: string): Promise<Run> => cli(['run', ...M, '--workload-spec', spec(body)]);
const failsSpec = (body: string, pattern: RegExp): Promise<Run> => fails(['run', ...M, '--workload-spec', spec(body)], pattern);

/** `a0: &a0 [...]` and eight levels of ten aliases each: about 600 bytes that expand to 10^9 values. */
function nestedAnchors(levels = 8, prefix = ''): string {
  let s = `${prefix}a0: &a0 [1,2,3,4,5,6,7,8,9,10]\n`;
  for (let i = 1; i <= levels; i++) s += `${prefix}a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(',')}]\n`;
  return s;
}

describe('YAML expansion is bounded before anything is built', () => {
  it('refuses the 600-byte nested-anchor spec at once, at the anchor', async () => {
    const text = `${SPEC_HEAD}${nestedAnchors()}clients:\n${CLIENT('a')}`;
    expect(nestedAnchors().length).toBeLessThan(600);
    const r = await failsSpec(text, /spec-\w+\.yaml:\d+:\d+: the document expands to more than 2,000,000 values/);
    expect(r.ms).toBeLessThan(HANG_MS);
  });

  it('refuses anchors under a key that is rejected anyway, without expanding them', async () => {
    const bomb = `${SPEC_HEAD}bogus:\n${nestedAnchors(8, '  ')}clients:\n${CLIENT('a')}`;
    const r = await failsSpec(bomb, /spec-\w+\.yaml:\d+:\d+: the document expands to more than/);
    expect(r.ms).toBeLessThan(HANG_MS);
    // Small enough to be legal YAML: the unknown key is reported at its line, before its value is converted.
    const small = `${SPEC_HEAD}bogus:\n${nestedAnchors(3, '  ')}clients:\n${CLIENT('a')}`;
    await failsSpec(small, /spec-\w+\.yaml:4:1: bogus: unknown key "bogus"; remove it or fix its spelling/);
  });

  it('refuses merge keys nested inside an allowed key of a spec', async () => {
    let m = '  m0: &m0 {x: 1}\n';
    for (let i = 1; i <= 40; i++) m += `  m${i}: &m${i}\n    <<: [*m${i - 1}, *m${i - 1}]\n    k${i}: 1\n`;
    const text = `${SPEC_HEAD}goodput_slo_targets:\n${m}clients:\n${CLIENT('a')}`;
    const r = await failsSpec(text, /spec-\w+\.yaml:\d+:\d+: the document expands to more than/);
    expect(r.ms).toBeLessThan(HANG_MS);
  });

  it('refuses merge keys nested inside an allowed key of a policy bundle', async () => {
    let m = '    m0: &m0 {x: 1}\n';
    for (let i = 1; i <= 40; i++) m += `    m${i}: &m${i}\n      <<: [*m${i - 1}, *m${i - 1}]\n      k${i}: 1\n`;
    const bundle = file('bomb-bundle.yaml', `admission:\n  policy: always-admit\n  slo_priorities:\n${m}`);
    const r = await fails(['run', ...M, '--policy-config', bundle], /bomb-bundle\.yaml:\d+:\d+: the document expands to more than/);
    expect(r.ms).toBeLessThan(HANG_MS);
  });

  it('still runs specs and bundles that use a few aliases and merge keys', async () => {
    const text = `${SPEC_HEAD}clients:\n  - &base\n    id: a\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: &len {type: constant, params: {value: 20}}\n    output_distribution: *len\n  - <<: *base\n    id: b\n`;
    const r = await runSpec(text);
    expect(r.errors).toEqual([]);
    expect(r.code).toBe(0);
    const bundle = file('merge-bundle.yaml', 'admission:\n  <<: {policy: always-admit}\n  slo_priorities: &p {critical: 3}\n');
    const b = await cli(['run', ...M, '--num-requests', '5', '--policy-config', bundle]);
    expect(b.errors).toEqual([]);
    expect(b.code).toBe(0);
  });
});

describe('nonsense spec values are refused at file:line with the field', () => {
  it.each([
    ['a negative constant length', CLIENT('a').replace('value: 20', 'value: -5'), /:8:\d+: clients\[0\]\.input_distribution\.params\.value: a constant length must be at least 1, got -5/],
    ['a zero constant length', CLIENT('a').replace('value: 10', 'value: 0'), /:9:\d+: clients\[0\]\.output_distribution\.params\.value: a constant length must be at least 1/],
    ['gaussian min > max', CLIENT('a').replace('{type: constant, params: {value: 20}}', '{type: gaussian, params: {mean: 50, std_dev: 5, min: 100, max: 10}}'), /clients\[0\]\.input_distribution\.params\.min: gaussian: min \(100\.000000\) must be <= max \(10\.000000\)/],
    ['a negative std_dev', CLIENT('a').replace('{type: constant, params: {value: 20}}', '{type: gaussian, params: {mean: 50, std_dev: -5, min: 1, max: 100}}'), /params\.std_dev: must be non-negative, got -5/],
  ])('%s', async (_what, client, pattern) => {
    await failsSpec(`${SPEC_HEAD}clients:\n${client}`, pattern);
  });

  it('refuses a negative horizon, an unknown version, and missing or repeated client ids', async () => {
    await failsSpec(`${SPEC_HEAD}horizon: -5\nclients:\n${CLIENT('a')}`, /:4:\d+: horizon: must be non-negative, got -5/);
    await failsSpec(`version: "7"\naggregate_rate: 5\nnum_requests: 10\nclients:\n${CLIENT('a')}`, /:1:10: version: unknown spec version "7"; write version: "2"/);
    await failsSpec(`${SPEC_HEAD}clients:\n${CLIENT('a')}${CLIENT('a')}`, /:10:\d+: clients\[1\]\.id: id "a" is already used by clients\[0\]/);
    await failsSpec(`${SPEC_HEAD}clients:\n${CLIENT('a').replace('  - id: a\n    rate_fraction', '  - rate_fraction')}`, /:5:5: clients\[0\]: id is missing/);
  });

  it('refuses a load profile whose multipliers are all zero', async () => {
    const lp = '    load_profile:\n      default_multiplier: 0\n      segments:\n        - {start_s: 0, end_s: 10, kind: constant, multiplier: 0}\n';
    await failsSpec(`${SPEC_HEAD}clients:\n${CLIENT('a', lp)}`, /:11:\d+: clients\[0\]\.load_profile: every multiplier of this load profile is 0/);
  });

  it('locates a problem the generator used to find without a position (reason-ratio distribution)', async () => {
    const reasoning = '    reasoning:\n      reason_ratio_distribution: {type: zipf, params: {s: 1}}\n      multi_turn: {max_rounds: 2}\n';
    await failsSpec(`${SPEC_HEAD}clients:\n${CLIENT('a', reasoning)}`, /spec-\w+\.yaml:11:\d+: clients\[0\]\.reasoning\.reason_ratio_distribution\.type: unknown distribution type "zipf"/);
  });
});

const HEADER = 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n';
const COLUMNS = 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason';
const row = (id: number, at: number, status = 'ok'): string => `${id},c,,,,0,,0,false,50,20,0,0,0,0,0,,0,0,${at},${at},0,0,0,${status},,`;
const replay = (header: string, csv: string | Uint8Array): Promise<Run> =>
  cli(['replay', ...M, '--trace-header', file(`h-${unique()}.yaml`, header), '--trace-data', file(`d-${unique()}.csv`, csv)]);

describe('traces: nonsense refused at file:line, a BOM accepted, binary never echoed', () => {
  const good = `${COLUMNS}\n${row(0, 100)}\n${row(1, 5000)}\n`;

  it('refuses an unknown time_unit or trace_version in the header', async () => {
    let r = await replay(HEADER.replace('microseconds', 'milliseconds'), good);
    expect(r.errors[0]).toMatch(/h-\w+\.yaml:2: time_unit: unknown time unit "milliseconds"/);
    r = await replay(HEADER.replace('trace_version: 3', 'trace_version: 9'), good);
    expect(r.errors[0]).toMatch(/h-\w+\.yaml:1: trace_version: 9 is not a version this reader knows/);
    expect(r.code).toBe(2);
  });

  it.each([
    ['a duplicate request_id', `${COLUMNS}\n${row(0, 100)}\n${row(0, 200)}\n`, /d-\w+\.csv:3: column "request_id": request_id 0 appears again \(first on line 2\)/],
    ['a negative time', `${COLUMNS}\n${row(0, -100)}\n`, /d-\w+\.csv:2: column "arrival_time_us": negative value -100 not allowed/],
    ['an unknown status', `${COLUMNS}\n${row(0, 100, 'done')}\n`, /d-\w+\.csv:2: column "status": unknown status "done"/],
    ['an extra column', `${COLUMNS}\n${row(0, 100)},surprise\n`, /d-\w+\.csv:2: row has 28 columns, expected 27 as in the header \(the first extra value is "surprise"\)/],
  ])('refuses %s', async (_what, csv, pattern) => {
    const r = await replay(HEADER, csv);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(pattern);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
  });

  it('refuses a header-only trace and an impossible token count as input errors, not internal ones', async () => {
    let r = await replay(HEADER, `${COLUMNS}\n`);
    expect(r.errors[0]).toMatch(/^--trace-data: .*d-\w+\.csv has a header row but no records/);
    expect(r.code).toBe(2);
    r = await replay(HEADER, `${COLUMNS}\n${row(0, 100).replace(',50,20,', ',99999999999,20,')}\n`);
    expect(r.errors[0]).toMatch(/d-\w+\.csv:2: column "input_tokens": 99999999999 tokens exceed the largest request blis-ts simulates/);
    expect(r.code).toBe(2);
  });

  it('accepts a byte-order mark before the header row: same output as without', async () => {
    const plain = await replay(HEADER, good);
    const bom = await replay(HEADER, `\ufeff${good}`);
    expect(plain.code).toBe(0);
    expect(bom.errors).toEqual([]);
    expect(bom.out).toBe(plain.out);
  });

  it('never echoes a binary CSV: the message gives the position only', async () => {
    const bytes = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0xff, 0xfe]);
    const r = await replay(HEADER, bytes);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/--trace-data: .*d-\w+\.csv: (holds binary data|is not UTF-8 text) .*line \d+, byte \d+/);
    expect(r.errors[0]).not.toContain('PNG');
    // A column name with an invisible character is shown escaped.
    const zw = await replay(HEADER, `${COLUMNS.replace('client_id', 'client\u200b_id')}\n${row(0, 100)}\n`);
    expect(zw.errors[0]).toMatch(/header column 2 is "client\\u200b_id"/);
  });
});

describe('flags: decimal numbers, fractions in range, real log levels, clear names', () => {
  it('refuses a hexadecimal rate instead of reading 16', async () => {
    await fails(['run', ...M, '--rate', '0x10'], /^--rate: "0x10" is not a finite decimal number \(write it in decimal/);
    await fails(['run', ...M, '--num-requests', '0x10'], /^--num-requests: "0x10" is not an integer \(write it in decimal/);
    await fails(['run', ...M, '--num-requests', '010'], /^--num-requests: "010" has a leading zero, which the reference reads as octal/);
  });

  it('refuses request lengths no machine could hold, before generating anything', async () => {
    const r = await fails(['run', ...M, '--prefix-tokens', '2147483648'], /^--prefix-tokens: 2147483648 exceeds the largest value blis-ts accepts \(10,000,000\)/);
    expect(r.ms).toBeLessThan(HANG_MS);
    await failsSpec(`${SPEC_HEAD}clients:\n${CLIENT('a').replace('value: 20', 'value: 1000000000')}`, /:8:\d+: clients\[0\]\.input_distribution\.params\.value: 1000000000\.000000 tokens exceed the largest request blis-ts simulates/);
  });

  it('refuses a KV utilisation threshold above 1', async () => {
    await fails(['run', ...M, '--flow-control', '--saturation-detector', 'utilization', '--kv-cache-util-threshold', '5'], /^--kv-cache-util-threshold must be in \(0, 1\]/);
  });

  it('--log debug and info add their lines; the default shows neither', async () => {
    const argv = ['run', ...M, '--num-requests', '5'];
    const debug = await cli([...argv, '--log', 'debug']);
    expect(debug.code).toBe(0);
    expect(debug.debug.some((l) => /finished in \d+ ms/.test(l))).toBe(true);
    expect(debug.info.some((l) => /^engine: model meta-llama\/llama-3\.1-8b-instruct, latency model trained-physics, GPU H100, TP 1/.test(l))).toBe(true);
    const info = await cli([...argv, '--log', 'info']);
    expect(info.info.some((l) => /^workload: 5 requests/.test(l))).toBe(true);
    expect(info.debug).toEqual([]);
    const warn = await cli(argv);
    expect([warn.info, warn.debug]).toEqual([[], []]);
    expect(warn.warnings.length).toBeGreaterThan(0);
    const error = await cli([...argv, '--log', 'error']);
    expect([error.info, error.debug, error.warnings]).toEqual([[], [], []]);
    expect(error.out).toBe(warn.out);
  });

  it('--total-kv-blocks -1 names --total-kv-blocks', async () => {
    await fails(['run', ...M, '--total-kv-blocks', '-1'], /^--total-kv-blocks must be > 0, got -1/);
  });

  it('a mistyped model name says "unknown model", with the closest catalog names', async () => {
    await fails(['run', '--model', 'meta-llama/llama-3.1-8b-instrct'], /^--model: unknown model "meta-llama\/llama-3\.1-8b-instrct"; did you mean "meta-llama\/llama-3\.1-8b-instruct"\?/);
  });
});

describe('model and hardware files: nonsense refused at file:line:col', () => {
  it('refuses a config.json with more KV heads than heads', async () => {
    const folder = path.join(dir, 'weird-model');
    rmSync(folder, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'config.json'), '{\n  "num_hidden_layers": 4,\n  "hidden_size": 512,\n  "num_attention_heads": 8,\n  "num_key_value_heads": 16,\n  "vocab_size": 1000\n}\n');
    await fails(['run', '--model', 'weird-model', '--model-config-folder', folder, '--hardware', 'H100', '--tp', '1'], /weird-model\/config\.json:5:26: "num_key_value_heads" \(16\) exceeds num_attention_heads \(8\)/);
  });

  it('points a capacity problem of a config.json at its key', async () => {
    const folder = path.join(dir, 'zero-ffn');
    rmSync(folder, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'config.json'), '{\n  "num_hidden_layers": 4,\n  "hidden_size": 512,\n  "num_attention_heads": 8,\n  "intermediate_size": 0,\n  "vocab_size": 1000,\n  "torch_dtype": "bfloat16"\n}\n');
    await fails(['run', '--model', 'zero-ffn', '--model-config-folder', folder, '--hardware', 'H100', '--tp', '1'], /zero-ffn\/config\.json:5:24: KV capacity: intermediate_size must be > 0, got 0/);
  });

  it('refuses a hardware entry with MFU 5', async () => {
    const hw = file('hw.json', '{\n  "H100": {\n    "TFlopsPeak": 989.5,\n    "BwPeakTBs": 3.35,\n    "mfuPrefill": 5,\n    "mfuDecode": 0.3,\n    "MemoryGiB": 80\n  }\n}\n');
    await fails(['run', ...M, '--hardware-config', hw], /hw\.json:5:19: H100\.mfuPrefill: must be a fraction in \[0, 1\]/);
  });
});
