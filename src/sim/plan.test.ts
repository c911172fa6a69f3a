import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildCluster } from './engine-setup.js';
import { parseSimulationConfig } from './simulate.js';
import { deepFreeze, resolvePlan, type RunPlan } from './plan.js';
import { simulateRun } from './run.js';
import type { FlagValues } from './options.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const env = { readText: (p: string): string => { throw new Error(`no file ${p}`); }, warn: () => undefined };
const base = (): FlagValues => parseSimulationConfig({ mode: 'run', model: MODEL, numRequests: 20, rate: 5 }).values;

/** Each row: flags given on top of a valid run, and the error resolution must throw (not the build, not the run). */
const BAD: readonly [string, Record<string, string>, RegExp][] = [
  ['output format', { 'output-format': 'xml' }, /--output-format must be json or reference/],
  ['token-bucket capacity', { 'admission-policy': 'token-bucket', 'token-bucket-capacity': '0' }, /token-bucket capacity must be a finite value > 0/],
  ['routing policy', { 'routing-policy': 'nope' }, /unknown routing policy "nope"/],
  ['P/D decider', { 'prefill-instances': '1', 'decode-instances': '1', 'num-instances': '2', 'pd-decider': 'nope' }, /Unknown PD decider "nope"/],
  ['scheduler', { scheduler: 'nope' }, /unknown --scheduler "nope"/],
  ['concurrent sessions', { 'concurrent-sessions': '-1' }, /--concurrent-sessions must be >= 0/],
  ['fitness weights', { 'fitness-weights': 'bogus' }, /--fitness-weights: invalid fitness weight "bogus"/],
  ['time-series format', { 'timeseries-format': 'xml' }, /--timeseries-format must be auto, csv or jsonl/],
  ['time-series interval', { 'timeseries-interval-us': '-1' }, /--timeseries-interval-us must be >= 0/],
  ['counterfactual k', { 'counterfactual-k': '-1' }, /--counterfactual-k must be >= 0/],
  ['concurrency with rate', { concurrency: '2', rate: '3' }, /--concurrency and --rate are mutually exclusive/],
  ['unknown workload', { workload: 'nope' }, /unknown --workload "nope"/],
  ['KV blocks', { 'total-kv-blocks': '-5' }, /total-kv-blocks/],
  ['snapshot refresh', { 'snapshot-refresh-interval': '-1' }, /--snapshot-refresh-interval must be >= 0/],
];

describe('resolvePlan: every check of a configuration is made while the plan is resolved', () => {
  it.each(BAD)('refuses a bad %s in resolution', async (_name, flags, message) => {
    let f = base();
    for (const [k, v] of Object.entries(flags)) f = f.with(k, v);
    await expect(resolvePlan('run', f, env)).rejects.toThrow(message);
  });

  it('refuses a replay without its trace, and a replay flag the workload cannot honour, in resolution', async () => {
    const replay = (): FlagValues => parseSimulationConfig({ mode: 'replay', model: MODEL, traceHeader: 't.yaml', traceData: 't.csv' }).values;
    await expect(resolvePlan('replay', replay().with('trace-header', ''), env)).rejects.toThrow(/--trace-header is required/);
    const files: Record<string, string> = {
      't.yaml': 'trace_version: 2\ntime_unit: microseconds\nmode: generated\n',
      't.csv': 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason\n',
    };
    const withFiles = { ...env, readText: (p: string): string => files[p] ?? env.readText(p) };
    await expect(resolvePlan('replay', replay(), withFiles)).rejects.toThrow(/has a header row but no records/);
  });

  it('resolves a good configuration into one deeply frozen plan that builds, and runs deterministically from it', async () => {
    const plan = (await resolvePlan('run', base(), env)) as RunPlan;
    for (const part of [plan, plan.setup, plan.setup.kv, plan.policies, plan.policies.policy, plan.workload]) expect(Object.isFrozen(part)).toBe(true);
    // The hand calculation of the run's plan: 20 requests at 5/s over one instance, KV from the model's defaults.
    expect(plan.workload.total).toBe(20);
    expect(plan.setup.numInstances).toBe(1);
    expect(plan.setup.kv.totalBlocks).toBeGreaterThan(0);
    // A frozen setup builds (the builder copies what it mutates); a run from a frozen plan is deterministic.
    expect(buildCluster(plan.setup).instances.length).toBe(1);
    const a = await simulateRun(base(), env);
    const b = await simulateRun(base(), env);
    expect(a.stdout).toBe(b.stdout);
  });
});

describe('deepFreeze', () => {
  it('freezes plain objects and arrays, never class instances, maps or the objects it is told to skip', () => {
    class Model { calls = 0; }
    const requests = [{ id: 1 }];
    const v = deepFreeze({ a: { b: [1, { c: 2 }] }, model: new Model(), map: new Map([[1, 2]]), requests, typed: new Float64Array(2) }, [requests]);
    expect(Object.isFrozen(v.a.b[1])).toBe(true);
    expect(Object.isFrozen(v.model)).toBe(false);
    v.model.calls++;
    v.map.set(3, 4);
    requests.push({ id: 2 });
    v.typed[0] = 1;
    expect(() => { (v.a as { b: unknown }).b = 0; }).toThrow(TypeError);
  });
});

/** The modules of the builder: they consume a plan and may throw only internal errors (assertions). */
const BUILDER = ['engine-setup.ts', 'engine-infra.ts'];
const VALIDATION = /from '\.\/(config-error|options|resolve-[a-z-]+|plan|deployment-checks)\.js'|from '\.\.\/domain\/errors\.js'|ConfigError/;

describe('the builder checks no configuration', () => {
  it.each(BUILDER)('%s imports no error type or validator of the sim layer', (file) => {
    const text = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    expect(text).not.toMatch(VALIDATION);
  });

  it('run.ts and run-outputs.ts execute a plan without reading an option: they import no option table', () => {
    for (const file of ['run.ts', 'run-outputs.ts']) {
      const text = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
      expect(text).not.toMatch(/import \{[^}]*\} from '\.\/options\.js'/);
      expect(text).not.toMatch(/\bf\.(str|int|float|bool|bigint|changed|has)\(/);
    }
  });

  it('the rule catches a builder that throws a configuration error (known bad)', () => {
    expect("import { ConfigError } from './config-error.js';").toMatch(VALIDATION);
    expect("import { checkDeploymentRequests } from './deployment-checks.js';").toMatch(VALIDATION);
  });
});
