/**
 * The evaluation-suite file format (YAML or JSON; docs/evaluate.md), validated once at the edge: unknown keys
 * and wrong types are one error naming `file:line:col`, the field and the fix.
 */
import { stringify } from 'yaml';
import { parseYaml } from '../format/yaml.js';
import { z } from 'zod';
import { ConfigError } from '../sim/config-error.js';
import type { Scenario, Suite } from './types.js';

const targets = z.object({ ttft_ms: z.number().nonnegative().default(0), itl_ms: z.number().nonnegative().default(0), e2e_ms: z.number().nonnegative().default(0) }).strict();

const scenarioSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(''),
  config: z.record(z.string(), z.unknown()).default({}),
  workload: z.record(z.string(), z.unknown()).optional(),
  files: z.record(z.string(), z.string()).default({}),
  seeds: z.array(z.number().int().nonnegative()).min(1),
  weight: z.number().positive().default(1),
  slo: z.record(z.string(), targets).default({}),
}).strict();

const normalization = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('ratio'), target: z.number().positive() }).strict(),
  z.object({ kind: z.literal('linear'), best: z.number(), worst: z.number() }).strict(),
  z.object({ kind: z.literal('reference_inverse') }).strict(),
]);

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
  }).strict()).min(1),
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
  const result = suiteSchema.safeParse(parsed.toJs());
  if (!result.success) {
    const issue = result.error.issues[0] as z.core.$ZodIssue;
    const path = issue.path.map((x) => (typeof x === 'symbol' ? String(x) : x));
    let at = { line: 1, col: 1 };
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range !== undefined) {
        at = parsed.pos(node.range[0]);
        break;
      }
    }
    const field = path.map((x) => (typeof x === 'number' ? `[${x}]` : `.${x}`)).join('').replace(/^\./, '');
    throw new ConfigError('bad-suite', `${file}:${at.line}:${at.col}: ${field || 'suite'}: ${issue.message}; see docs/evaluate.md for the suite format`);
  }
  const s = result.data;
  const scenario = (x: z.infer<typeof scenarioSchema>, where: string): Scenario => {
    for (const k of RESERVED) if (k in x.config) throw new ConfigError('bad-suite', `${file}: ${where}.config.${k}: set by the evaluator; remove it`);
    const files = { ...x.files };
    const config: Record<string, unknown> = { ...x.config };
    if (x.workload !== undefined) {
      files['workload.yaml'] = stringify(x.workload);
      config['workloadSpec'] = 'workload.yaml';
    }
    const slo = Object.fromEntries(Object.entries(x.slo).map(([k, v]) => [k, { ttftMs: v.ttft_ms, itlMs: v.itl_ms, e2eMs: v.e2e_ms }]));
    return { name: x.name, description: x.description, config, files, seeds: x.seeds, weight: x.weight, slo };
  };
  return {
    name: s.name,
    description: s.description,
    stage1Threshold: s.stage1_threshold,
    objectives: s.objectives,
    stage1: s.stage1.map((x, i) => scenario(x, `stage1[${i}]`)),
    stage2: s.stage2.map((x, i) => scenario(x, `stage2[${i}]`)),
  };
}
