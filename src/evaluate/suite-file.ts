/**
 * The evaluation-suite file format (YAML or JSON; docs/evaluate.md), validated once at the edge: unknown keys
 * and wrong types are one error naming `file:line:col`, the field and the fix.
 */
import { stringify } from 'yaml';
import { parseYaml } from '../format/yaml.js';
import { z } from 'zod';
import { ConfigError } from '../sim/config-error.js';
import { parsePolicyBundle } from '../policy/bundle.js';
import { bundleControlPoints, optionControlPoint, POLICY_OPTIONS } from '../policy/control-points.js';
import { fixedPointConflict } from './evaluate.js';
import { metricInfo } from './fitness.js';
import { MAX_SEEDS } from './suites.js';
import type { Constraint, KnownPolicy, Scenario, Suite } from './types.js';

const targets = z.object({ ttft_ms: z.number().nonnegative().default(0), itl_ms: z.number().nonnegative().default(0), e2e_ms: z.number().nonnegative().default(0) }).strict();

const scenarioSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(''),
  config: z.record(z.string(), z.unknown()).default({}),
  workload: z.record(z.string(), z.unknown()).optional(),
  files: z.record(z.string(), z.string()).default({}),
  seeds: z.array(z.number().int().nonnegative()).min(1).max(MAX_SEEDS),
  holdout_seeds: z.array(z.number().int().nonnegative()).max(MAX_SEEDS).default([]),
  weight: z.number().positive().default(1),
  slo: z.record(z.string(), targets).default({}),
}).strict();

const normalization = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('ratio'), target: z.number().positive() }).strict(),
  z.object({ kind: z.literal('linear'), best: z.number(), worst: z.number() }).strict(),
  z.object({ kind: z.literal('reference_inverse') }).strict(),
]);

const knownPolicy = z.object({
  id: z.string().min(1),
  description: z.string().default(''),
  kind: z.enum(['bad', 'cheating']).optional(),
  bundle: z.union([z.string(), z.record(z.string(), z.unknown())]),
}).strict();

const suiteSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(''),
  stage1_threshold: z.number().min(0).max(1).default(0),
  objectives: z.array(z.object({
    name: z.string().min(1),
    metric: z.string().min(1),
    direction: z.enum(['maximize', 'minimize']),
    weight: z.number().positive().default(1),
    normalization,
    min_completed: z.number().int().nonnegative().optional(),
  }).strict()).min(1),
  constraints: z.array(z.object({
    name: z.string().min(1).optional(),
    metric: z.string().min(1),
    min: z.number().optional(),
    max: z.number().optional(),
    relative_to_baseline: z.boolean().default(false),
  }).strict()).default([]),
  defaults: z.record(z.string(), z.unknown()).default({}),
  load: z.object({ level: z.number().positive(), note: z.string().default('') }).strict().optional(),
  baseline: knownPolicy.omit({ kind: true }).optional(),
  known_good: z.array(knownPolicy.omit({ kind: true })).default([]),
  known_bad: z.array(knownPolicy).default([]),
  stage1: z.array(scenarioSchema).default([]),
  stage2: z.array(scenarioSchema).min(1),
}).strict();

const RESERVED = ['mode', 'seed', 'policyConfig', 'traceLevel', 'files'];

/** Parses and validates a suite file. Throws ConfigError (`bad-suite`) naming file:line:col and the field. */
export function parseSuite(text: string, file: string): Suite {
  const parsed = parseYaml(text, file, {
    yaml: { uniqueKeys: true },
    fail: (p, problem, fix) => {
      throw new ConfigError('bad-suite', `${file}:${p.line}:${p.col}: ${problem}; ${fix}`);
    },
  });
  const doc = parsed.doc;
  /** One error at the position of `path` in the file (the nearest node that has one). */
  const fail = (path: readonly (string | number)[], message: string): never => {
    let at = { line: 1, col: 1 };
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range !== undefined) {
        at = parsed.pos(node.range[0]);
        break;
      }
    }
    const field = path.map((x) => (typeof x === 'number' ? `[${x}]` : `.${x}`)).join('').replace(/^\./, '');
    throw new ConfigError('bad-suite', `${file}:${at.line}:${at.col}: ${field || 'suite'}: ${message}`);
  };
  const js = parsed.toJs();
  if (js === null || js === undefined) fail([], 'the suite file is empty; write a suite (name, objectives, stage2) as docs/evaluate.md shows');
  const result = suiteSchema.safeParse(js);
  if (!result.success) {
    const issue = result.error.issues[0] as z.core.$ZodIssue;
    fail(issue.path.map((x) => (typeof x === 'symbol' ? String(x) : x)), `${issue.message}; see docs/evaluate.md for the suite format`);
  }
  const s = (result as { data: z.infer<typeof suiteSchema> }).data;
  const names = new Set<string>();
  s.objectives.forEach((o, i) => {
    const info = metricInfo(o.metric);
    if (typeof info === 'string') fail(['objectives', i, 'metric'], info);
    if (names.has(o.name)) fail(['objectives', i, 'name'], `objective ${JSON.stringify(o.name)} is defined twice; give each objective its own name`);
    names.add(o.name);
  });
  const constraints: Constraint[] = s.constraints.map((c, i) => {
    const info = metricInfo(c.metric);
    if (typeof info === 'string') fail(['constraints', i, 'metric'], info);
    if ((c.min === undefined) === (c.max === undefined)) fail(['constraints', i], 'give exactly one of min: or max:');
    if (c.relative_to_baseline && s.baseline === undefined) fail(['constraints', i, 'relative_to_baseline'], 'a constraint relative to the baseline needs the suite\'s baseline: (add one, or give an absolute bound)');
    const kind = c.min !== undefined ? 'min' as const : 'max' as const;
    const value = (c.min ?? c.max) as number;
    const name = c.name ?? `${c.metric} ${kind === 'min' ? '>=' : '<='} ${value}${c.relative_to_baseline ? 'x baseline' : ''}`;
    if (names.has(name)) fail(['constraints', i], `the name ${JSON.stringify(name)} is taken; give the constraint its own name:`);
    names.add(name);
    return { name, metric: c.metric, kind, value, relativeToBaseline: c.relative_to_baseline };
  });
  for (const k of Object.keys(s.defaults)) {
    if (optionControlPoint(k) === null) fail(['defaults', k], `${JSON.stringify(k)} is not a policy option; defaults: takes ${POLICY_OPTIONS.join(', ')} (other options go in a scenario's config)`);
  }
  const known = (p: { id: string; description: string; kind?: 'bad' | 'cheating' | undefined; bundle: string | Record<string, unknown> }, kind: KnownPolicy['kind'], path: (string | number)[]): KnownPolicy => {
    const bundle = typeof p.bundle === 'string' ? p.bundle : JSON.stringify(p.bundle, null, 2);
    if (bundleControlPoints(bundle, `${p.id}.yaml`) === null) {
      try {
        parsePolicyBundle(bundle, `${p.id}.yaml`);
      } catch (e) {
        fail([...path, 'bundle'], `the policy bundle does not parse: ${(e as Error).message}`);
      }
    }
    return { id: p.id, description: p.description, kind, bundle };
  };
  const scenario = (x: z.infer<typeof scenarioSchema>, where: string): Scenario => {
    for (const k of RESERVED) if (k in x.config) throw new ConfigError('bad-suite', `${file}: ${where}.config.${k}: set by the evaluator; remove it`);
    const files = { ...x.files };
    const config: Record<string, unknown> = { ...x.config };
    if (x.workload !== undefined) {
      files['workload.yaml'] = stringify(x.workload);
      config['workloadSpec'] = 'workload.yaml';
    }
    const slo = Object.fromEntries(Object.entries(x.slo).map(([k, v]) => [k, { ttftMs: v.ttft_ms, itlMs: v.itl_ms, e2eMs: v.e2e_ms }]));
    const overlap = x.holdout_seeds.find((k) => x.seeds.includes(k));
    if (overlap !== undefined) throw new ConfigError('bad-suite', `${file}: ${where}.holdout_seeds: seed ${overlap} is also a search seed; held-out seeds must be disjoint from seeds`);
    return { name: x.name, description: x.description, config, files, seeds: x.seeds, holdoutSeeds: x.holdout_seeds, weight: x.weight, slo };
  };
  const suite: Suite = {
    name: s.name,
    description: s.description,
    stage1Threshold: s.stage1_threshold,
    objectives: s.objectives.map(({ min_completed, ...o }) => (min_completed === undefined ? o : { ...o, minCompleted: min_completed })),
    constraints,
    defaults: s.defaults,
    baseline: s.baseline === undefined ? null : known(s.baseline, 'baseline', ['baseline']),
    knownGood: s.known_good.map((p, i) => known(p, 'good', ['known_good', i])),
    knownBad: s.known_bad.map((p, i) => known(p, p.kind ?? 'bad', ['known_bad', i])),
    load: s.load === undefined ? null : { level: s.load.level, note: s.load.note },
    stage1: s.stage1.map((x, i) => scenario(x, `stage1[${i}]`)),
    stage2: s.stage2.map((x, i) => scenario(x, `stage2[${i}]`)),
  };
  for (const p of [suite.baseline, ...suite.knownGood, ...suite.knownBad]) {
    if (p === null) continue;
    const conflict = fixedPointConflict(suite, bundleControlPoints(p.bundle, `${p.id}.yaml`) ?? []);
    if (conflict !== null) throw new ConfigError('bad-suite', `${file}: policy ${p.id}: ${conflict}`);
  }
  return suite;
}
