/**
 * Command lines: every command (run, replay, calibrate, convert, evaluate, search, policies, suites) with flags
 * drawn from its own flag table, values valid and hostile, file paths valid, missing, directories or devices.
 * The outcome contract holds for each; a few cases also run as real child processes (stdin closed, heap-limited,
 * killed at the time bound), where the exit code and the stderr lines are the process's own.
 */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { commandFlags, type CliFlag } from '../../src/cli/flags-io.js';
import { numberText, smallCount, sometimes, weirdText } from './gen.js';
import { CliWorker, caseDir, checkOutcome, cleanupSandbox, fuzzParams, fuzzTimeout, runChild, writeFiles } from './harness.js';

const worker = new CliWorker();
afterAll(async () => {
  await worker.close('command lines');
  cleanupSandbox();
});

const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
const MODEL = 'meta-llama/llama-3.1-8b-instruct';

/** Valid input files every case gets in its directory (flags point at them, or at something worse). */
const FIXTURES: Readonly<Record<string, string>> = {
  'spec.yaml': 'version: "2"\naggregate_rate: 20\nnum_requests: 8\nclients:\n  - id: a\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 40}}\n    output_distribution: {type: constant, params: {value: 8}}\n',
  'trace.yaml': 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n',
  'trace.csv': 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason\n0,a,,,,0,,0,false,40,8,0,0,0,0,0,,0,0,100,100,900,2000,8,ok,,\n1,a,,,,0,,0,false,60,8,0,0,0,0,0,,0,0,5000,5000,6000,9000,8,ok,,\n',
  'bundle.yaml': 'admission:\n  policy: always-admit\nrouting:\n  policy: least-loaded\n',
  'sim.json': '[{"request_id": 0, "ttft_us": 800, "e2e_us": 1900}, {"request_id": 1, "ttft_us": 1000, "e2e_us": 4000}]',
  'code.js': 'function route(request, state) { return { target: state.instances[0].id }; }\n',
  'components.json': '{"routing": "function route(r, s) { return { target: s.instances[0].id }; }"}',
};

/** What an input-file flag may point at: the right fixture, another file, nothing, a directory or a device. */
const inputPath = (dir: string, right: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(`${dir}/${right}`) },
    { weight: 1, arbitrary: pick(`${dir}/missing.yaml`, dir, '/dev/null', '/dev/zero', `${dir}/spec.yaml`, `${dir}/trace.csv`, `${dir}/code.js`, '') },
  );

/** Output files go into the case directory (a failing case must leave it empty). */
const outputPath = (dir: string): fc.Arbitrary<string> => pick(`${dir}/out.json`, `${dir}/out2.json`, `${dir}/trace-out`);

/** Flags whose legitimate values can ask for a lot of work: kept small when valid. */
const WORK: Readonly<Record<string, fc.Arbitrary<string>>> = {
  'num-requests': smallCount,
  'num-instances': fc.oneof(fc.integer({ min: -1, max: 6 }).map(String), pick('x', '1.5')),
  concurrency: fc.oneof(fc.integer({ min: -1, max: 4 }).map(String), pick('x')),
  'max-num-seqs': fc.oneof(fc.integer({ min: -1, max: 512 }).map(String), pick('x')),
  'total-kv-blocks': fc.oneof(fc.integer({ min: -2, max: 100_000 }).map(String), pick('x', '1.5', '0x100')),
  'kv-cpu-blocks': fc.oneof(fc.integer({ min: -2, max: 10_000 }).map(String), pick('x')),
  'counterfactual-k': fc.oneof(fc.integer({ min: -1, max: 4 }).map(String), pick('x')),
  'block-size-in-tokens': fc.oneof(fc.integer({ min: -1, max: 64 }).map(String), pick('x')),
  rate: fc.oneof(pick('1', '20', '0.5', '0', '-1', '0x10', '1e3', 'fast', '')),
  'think-time-ms': fc.oneof(fc.integer({ min: -5, max: 100 }).map(String), pick('x')),
  budget: fc.integer({ min: -1, max: 2 }).map(String),
  workers: fc.integer({ min: -1, max: 2 }).map(String),
};

const ENUMS: Readonly<Record<string, readonly string[]>> = {
  'latency-model': ['trained-physics', 'roofline', 'blackbox'],
  scheduler: ['fcfs', 'priority-fcfs', 'sjf', 'reverse-priority'],
  'preemption-policy': ['fcfs', 'priority'],
  'admission-policy': ['always-admit', 'token-bucket', 'reject-all', 'tier-shed'],
  'routing-policy': ['round-robin', 'least-loaded', 'weighted', 'always-busiest'],
  'routing-scorers': ['queue-depth:1', 'prefix-affinity:2,load-balance:1', 'queue-depth:x'],
  'trace-level': ['none', 'minimal', 'decisions', 'full'],
  'saturation-detector': ['never', 'utilization', 'concurrency'],
  'dispatch-order': ['fifo', 'priority', 'slo-deadline'],
  'fairness-policy': ['global-strict', 'round-robin'],
  workload: ['distribution', 'chatbot', 'summarization'],
  'output-format': ['json', 'reference'],
  log: ['debug', 'info', 'warn', 'error'],
  hardware: ['H100', 'A100-80', 'L4'],
  model: [MODEL, 'qwen/qwen3-14b', 'meta-llama/llama-3.1-8b-instrct'],
  'slo-ttft': ['critical=100ms', 'batch=1s', 'x'],
  'fitness-weights': ['throughput:1,p99_ttft:2', 'bogus:1'],
  'alpha-coeffs': ['1,2,3', '1,x'],
  'beta-coeffs': ['1,2,3', '5000,10,1'],
  'policy-engine': ['fast', 'strict'],
};

const INPUT_FILES: Readonly<Record<string, string>> = {
  'workload-spec': 'spec.yaml',
  'trace-header': 'trace.yaml',
  'trace-data': 'trace.csv',
  'policy-config': 'bundle.yaml',
  'sim-results': 'sim.json',
  'hardware-config': 'missing.json',
  'model-config-folder': 'nowhere',
  'itl-data': 'trace.csv',
  'sim-metrics': 'sim.json',
};
const OUTPUT_FILES = new Set(['metrics-path', 'results-path', 'trace-output', 'report']);
/** Flags left out: they open sockets, wait for wall time, or write where the case cannot check. */
const SKIPPED = new Set(['server-url', 'kv-metrics-url', 'defaults-filepath']);

function flagValue(f: CliFlag, dir: string): fc.Arbitrary<string> {
  if (OUTPUT_FILES.has(f.name)) return outputPath(dir);
  const file = INPUT_FILES[f.name];
  if (file !== undefined) return inputPath(dir, file);
  const work = WORK[f.name];
  if (work !== undefined) return work;
  const names = ENUMS[f.name];
  if (names !== undefined) return fc.oneof({ weight: 4, arbitrary: pick(...names) }, { weight: 1, arbitrary: weirdText });
  if (f.kind === 'int' || f.kind === 'float') return fc.oneof({ weight: 2, arbitrary: fc.constant(String(f.def)) }, { weight: 3, arbitrary: numberText });
  if (f.kind === 'floats') return pick('1,2,3', '0', 'x,1', '');
  return fc.oneof(fc.constant(String(f.def)), weirdText);
}

/** `--flag value` pairs (or a bare boolean flag) drawn from `flags`. */
function flagTokens(flags: readonly CliFlag[], dir: string, max: number): fc.Arbitrary<string[]> {
  const usable = flags.filter((f) => !SKIPPED.has(f.name) && f.hidden !== true);
  return fc
    .array(fc.constantFrom(...usable).chain((f): fc.Arbitrary<string[]> => (f.kind === 'bool' ? fc.constant([`--${f.name}`]) : flagValue(f, dir).map((v) => [`--${f.name}`, v]))), { maxLength: max })
    .map((pairs) => pairs.flat());
}

/** Junk a user might add: an unknown flag, a stray positional, a flag without its value. */
const junk: fc.Arbitrary<string[]> = pick(['--bogus', '1'], ['extra'], ['--num-requests'], ['-x'], ['--'], ['--help'], ['--model=' + MODEL], ['--rate', '--seed']);

function argvFor(dir: string): fc.Arbitrary<string[]> {
  const withModel = (base: string[]): string[] => [...base, '--model', MODEL];
  const run = fc.tuple(flagTokens(commandFlags('run'), dir, 6), fc.boolean()).map(([t, m]) => [...(m ? withModel(['run']) : ['run']), '--num-requests', '12', ...t]);
  const replay = flagTokens(commandFlags('replay'), dir, 5).map((t) => [...withModel(['replay']), '--trace-header', `${dir}/trace.yaml`, '--trace-data', `${dir}/trace.csv`, ...t]);
  const calibrate = flagTokens(commandFlags('calibrate'), dir, 5).map((t) => ['calibrate', '--trace-header', `${dir}/trace.yaml`, '--trace-data', `${dir}/trace.csv`, '--sim-results', `${dir}/sim.json`, '--report', `${dir}/report.json`, ...t]);
  const convert = fc.oneof(
    fc.tuple(pick('chatbot', 'distribution', 'nope', ''), WORK['rate']!, smallCount, numberText).map(([n, r, k, s]) => ['convert', 'preset', '--name', n, '--rate', r, '--num-requests', k, '--seed', s]),
    inputPath(dir, 'spec.yaml').map((p) => ['convert', 'inference-perf', '--spec', p]),
    pick(['convert'], ['convert', 'nope'], ['convert', 'servegen']),
  );
  const evaluate = fc
    .tuple(
      fc.oneof(inputPath(dir, 'bundle.yaml').map((p) => ['--candidate', p]), inputPath(dir, 'code.js').map((p) => ['--candidate', p]), inputPath(dir, 'components.json').map((p) => ['--components', p])),
      pick('routing-prefix-heavy', 'no-such-suite', `${dir}/spec.yaml`),
      sometimes(pick(['--control-point', 'admission'], ['--engine', 'strict'], ['--engine', 'slow'], ['--stage', '3'], ['--workers', 'x'], ['--only', 'nope']), 3),
    )
    .map(([cand, suite, extra]) => ['evaluate', ...cand, '--suite', suite, '--stage', '1', ...(extra ?? [])]);
  const other = pick(['policies'], ['suites'], ['policies', 'extra'], ['search', '--template', 'nope', '--suite', 'routing-prefix-heavy'], ['help'], ['nope'], []);
  return fc
    .tuple(fc.oneof({ weight: 6, arbitrary: run }, { weight: 3, arbitrary: replay }, { weight: 2, arbitrary: calibrate }, { weight: 2, arbitrary: convert }, { weight: 1, arbitrary: evaluate }, { weight: 1, arbitrary: other }), sometimes(junk, 8))
    .map(([argv, j]) => (j === undefined ? argv : [...argv, ...j]));
}

/** A case: its directory (fixtures written) and its command line. */
const cases: fc.Arbitrary<{ dir: string; argv: string[] }> = fc.constant(null).chain(() => {
  const dir = caseDir();
  writeFiles(dir, FIXTURES);
  return argvFor(dir).map((argv) => ({ dir, argv }));
});

describe('fuzz: command lines', () => {
  it('every command line ends in exit 0, or exit 2 with one error line, empty stdout and no new files', async () => {
    await fc.assert(
      fc.asyncProperty(cases, async ({ dir, argv }) => {
        checkOutcome(await worker.run(argv, dir));
      }),
      fuzzParams('command lines', 200),
    );
  }, fuzzTimeout(180_000));

  it('as real child processes, the same contract holds', async () => {
    await fc.assert(
      fc.asyncProperty(cases, async ({ dir, argv }) => {
        checkOutcome(await runChild(argv, dir));
      }),
      fuzzParams('command lines as child processes', 8),
    );
  }, fuzzTimeout(180_000));
});
