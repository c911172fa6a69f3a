/**
 * The sweep file (YAML or JSON; docs/sweep.md), read through the bounded loader and validated once, before
 * anything runs: the shape (errors at `file:line:col`), every key against the options of `simulate()`, and
 * then every point as a whole configuration — the same checks a run makes before it simulates, files
 * included. A bad file is one error; a good one is a {@link SweepPlan} whose points carry their files.
 */
import { z } from 'zod';
import { BlisError } from '../domain/errors.js';
import { parseYaml, type ParsedYaml } from '../format/yaml.js';
import { closestNames } from '../policy/tree/parse.js';
import { camel, FLAGS, type FlagSpec } from '../sim/options.js';
import { SWEEP_FILE_ERROR, sweepError, type YamlPath } from './locate.js';
import { isKnownMetric, KNOWN_METRICS } from './metrics.js';
import { gridPoints, samplePoints, withSeeds, type ExpandedPoint, type SampleRange } from './points.js';
import { checkPoints, type SweepFileEnv } from './check.js';
import type { ParamValue, SweepObjective, SweepPlan } from './types.js';

export type { SweepFileEnv } from './check.js';

/** Most points one sweep may expand to (points × seeds): a bigger sweep is split into several files. */
export const MAX_POINTS = 100_000;

/** Options that name output files: a sweep's output is its rows. */
const OUTPUT_KEYS = ['metricsPath', 'traceOutput', 'resultsPath', 'timeseriesPath'];

export const DEFAULT_OBJECTIVES: readonly SweepObjective[] = [
  { metric: 'ttft_p99_ms', direction: 'minimize' },
  { metric: 'e2e_p99_ms', direction: 'minimize' },
  { metric: 'responses_per_sec', direction: 'maximize' },
];

const FIX = 'see docs/sweep.md for the sweep file format';

const value = z.union([z.string(), z.number().finite(), z.boolean(), z.array(z.number().finite())], { error: 'expected a string, a number, true/false or a list of numbers' });
const direction = z.enum(['minimize', 'maximize'], { error: 'expected minimize or maximize' });
const seedValue = z.union([z.number().int(), z.string().regex(/^[+-]?\d+$/)], { error: 'expected an integer seed' });

const schema = z.object({
  description: z.string().optional(),
  base: z.record(z.string(), z.unknown()).default({}),
  axes: z.record(z.string(), z.array(value).min(1, { error: 'an empty list: an axis needs at least one value' })).optional(),
  sample: z.object({
    n: z.number().int().min(1).max(MAX_POINTS),
    seed: z.number().int().min(0).default(1),
    ranges: z.record(z.string(), z.union([
      z.object({ min: z.number().finite(), max: z.number().finite(), log: z.boolean().default(false) }).strict(),
      z.array(value).min(1, { error: 'an empty list of choices' }),
    ], { error: 'expected {min, max[, log]} or a list of values to choose from' })),
  }).strict().optional(),
  seeds: z.array(seedValue).min(1, { error: 'an empty list of seeds' }).optional(),
  objectives: z.union([
    z.record(z.string(), direction),
    z.array(z.object({ metric: z.string().min(1), direction }).strict()).min(1),
  ], { error: 'expected a map {metric: minimize|maximize} or a list of {metric, direction}' }).optional(),
}).strict();

type SweepFile = z.infer<typeof schema>;

function shapeError(parsed: ParsedYaml, error: z.ZodError): BlisError {
  const issue = error.issues[0] as z.core.$ZodIssue;
  const path = issue.path.map((x) => (typeof x === 'symbol' ? String(x) : x));
  if (issue.code === 'unrecognized_keys') {
    const k = issue.keys[0] as string;
    const top = path.length === 0;
    const near = closestNames(k, top ? ['description', 'base', 'axes', 'sample', 'seeds', 'objectives'] : ['n', 'seed', 'ranges', 'min', 'max', 'log', 'metric', 'direction']);
    return sweepError(parsed, [...path, k], 'unknown key', `${near.length > 0 ? `did you mean ${near.join(' or ')}? ` : ''}${FIX}`, { key: true });
  }
  return sweepError(parsed, path, issue.message, FIX);
}

/** The options of `simulate()` in `mode`, by config key. */
function optionsFor(mode: 'run' | 'replay'): Map<string, FlagSpec> {
  return new Map(FLAGS.filter((f) => f.scope === 'shared' || f.scope === mode).map((f) => [camel(f.name), f]));
}

function checkKey(parsed: ParsedYaml, path: YamlPath, key: string, options: Map<string, FlagSpec>, mode: string): void {
  if (key === 'files') throw sweepError(parsed, path, 'files are not given inline', 'name each file by its option (e.g. workloadSpec: spec.yaml, relative to the sweep file); blis reads it and sends its text with the job', { key: true });
  if (OUTPUT_KEYS.includes(key)) throw sweepError(parsed, path, `${key} names an output file`, 'remove it: a sweep writes one row per point (--output)', { key: true });
  if (!options.has(key)) {
    const near = closestNames(key, [...options.keys()]);
    throw sweepError(parsed, path, `unknown configuration key for mode ${mode}`, `${near.length > 0 ? `did you mean ${near.join(' or ')}? ` : ''}use the keys simulate() takes (the CLI's options in camelCase, e.g. numInstances, routingPolicy)`, { key: true });
  }
}

function objectivesOf(parsed: ParsedYaml, f: SweepFile): SweepObjective[] | null {
  if (f.objectives === undefined) return null;
  const list: SweepObjective[] = Array.isArray(f.objectives) ? f.objectives : Object.entries(f.objectives).map(([metric, d]) => ({ metric, direction: d }));
  list.forEach((o, i) => {
    if (!isKnownMetric(o.metric)) {
      const path: YamlPath = Array.isArray(f.objectives) ? ['objectives', i, 'metric'] : ['objectives', o.metric];
      const near = closestNames(o.metric, KNOWN_METRICS);
      throw sweepError(parsed, path, `unknown metric "${o.metric}"`, `${near.length > 0 ? `did you mean ${near.join(' or ')}? ` : ''}metrics: ${KNOWN_METRICS.join(', ')}`, { key: !Array.isArray(f.objectives) });
    }
  });
  return list;
}

function rangesOf(parsed: ParsedYaml, f: NonNullable<SweepFile['sample']>, options: Map<string, FlagSpec>): [string, SampleRange][] {
  return Object.entries(f.ranges).map(([key, r]) => {
    const path: YamlPath = ['sample', 'ranges', key];
    if (Array.isArray(r)) return [key, { choices: r }];
    const kind = options.get(key)?.kind;
    if (kind !== 'int' && kind !== 'float') throw sweepError(parsed, path, `a {min, max} range needs a numeric option, and ${key} is not one`, 'list the values to choose from instead, e.g. [a, b]');
    if (r.min > r.max) throw sweepError(parsed, path, `min ${r.min} is above max ${r.max}`, 'swap them');
    if (kind === 'int' && Math.ceil(r.min) > Math.floor(r.max)) throw sweepError(parsed, path, `no integer lies in [${r.min}, ${r.max}]`, `${key} takes integers; widen the range`);
    if (r.log && r.min <= 0) throw sweepError(parsed, path, 'a log range needs min > 0', 'raise min or drop log');
    return [key, r];
  });
}

/**
 * Parses and validates a sweep file and every point of it. `env` reads the files the options name (relative
 * to the sweep file); each point's config carries their texts. Throws one BlisError at `file:line:col`.
 */
export async function loadSweep(text: string, file: string, env: SweepFileEnv): Promise<SweepPlan & { readonly warnings: readonly string[] }> {
  const parsed = parseYaml(text, file, { yaml: { uniqueKeys: true }, code: SWEEP_FILE_ERROR });
  const js: unknown = parsed.toJs() ?? {};
  if (js === null || typeof js !== 'object' || Array.isArray(js)) throw sweepError(parsed, [], 'a sweep file is a map (base:, axes: or sample:, seeds:, objectives:)', FIX);
  const shape = schema.safeParse(js);
  if (!shape.success) throw shapeError(parsed, shape.error);
  const f = shape.data;
  const modeValue = f.base['mode'] ?? 'run';
  if (modeValue !== 'run' && modeValue !== 'replay') throw sweepError(parsed, ['base', 'mode'], `mode must be run or replay, got ${JSON.stringify(modeValue)}`, 'run simulates a generated workload, replay a TraceV2 trace');
  const mode = modeValue;
  const options = optionsFor(mode);
  for (const k of Object.keys(f.base)) if (k !== 'mode') checkKey(parsed, ['base', k], k, options, mode);
  if (f.axes !== undefined && f.sample !== undefined) throw sweepError(parsed, ['sample'], 'both axes: and sample: are given', 'give axes: for a grid or sample: for random points, not both', { key: true });
  const varied = [...Object.keys(f.axes ?? {}).map((k) => ['axes', k] as const), ...Object.keys(f.sample?.ranges ?? {}).map((k) => ['sample', 'ranges', k] as const)];
  for (const path of varied) {
    const k = path[path.length - 1] as string;
    if (k === 'mode') throw sweepError(parsed, path, 'mode cannot vary within a sweep', 'set base.mode, or write one sweep file per mode', { key: true });
    checkKey(parsed, path, k, options, mode);
    if (k === 'seed' && f.seeds !== undefined) throw sweepError(parsed, path, 'seed is varied twice (here and by seeds:)', 'keep one of them', { key: true });
  }
  const objectives = objectivesOf(parsed, f);
  const axes = Object.entries(f.axes ?? {});
  const count = (f.sample?.n ?? axes.reduce((n, [, v]) => n * v.length, 1)) * (f.seeds?.length ?? 1);
  if (count > MAX_POINTS) throw sweepError(parsed, f.sample !== undefined ? ['sample', 'n'] : ['axes'], `the sweep expands to ${count.toLocaleString('en-US')} points, more than ${MAX_POINTS.toLocaleString('en-US')}`, 'split it into several sweep files');
  const expanded: ExpandedPoint[] = withSeeds(
    f.sample !== undefined
      ? samplePoints(f.sample.n, f.sample.seed, rangesOf(parsed, f.sample, options), (k) => options.get(k)?.kind === 'int')
      : gridPoints(axes),
    f.seeds ?? null,
  );
  const params = [...varied.map((p) => p[p.length - 1] as string), ...(f.seeds !== undefined ? ['seed'] : [])];
  const base: Record<string, unknown> = { mode, ...f.base };
  const checked = await checkPoints(parsed, base, expanded, env);
  return {
    points: checked.points,
    params,
    objectives: objectives ?? DEFAULT_OBJECTIVES,
    defaultObjectives: objectives === null,
    warnings: checked.warnings,
  };
}

export type { ParamValue };
