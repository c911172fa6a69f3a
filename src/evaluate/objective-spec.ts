/**
 * Objectives and constraints written on the command line (`blis evaluate --objective`, `--constraint`;
 * docs/evaluate.md):
 *
 *   --objective METRIC[:key=value,...]   keys: weight, target (ratio), best and worst (linear), direction, min_completed, name
 *   --constraint METRIC>=VALUE | METRIC<=VALUE   VALUE ending in x: times the baseline's value (e.g. goodput_rps>=0.95x)
 *
 * A metric's direction defaults to its better side (latencies, drop and rejection rates, GPU-hours: minimize). A rate
 * or share in [0, 1] defaults to the linear normalisation over [0, 1]; any other metric needs target= or best=/worst=.
 */
import { ConfigError } from '../sim/config-error.js';
import { metricInfo } from './fitness.js';
import type { Constraint, Direction, Normalization, Objective, Suite } from './types.js';

/** Metrics whose values lie in [0, 1]: their default normalisation is linear over that range. */
const UNIT_METRIC = /^(slo_attainment|completed_share|drop_rate|rejection_rate|admission_rate|cache_hit_rate|jain_fairness)/;

const num = (flag: string, spec: string, key: string, v: string): number => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: ${key}=${JSON.stringify(v)} is not a number`);
  return n;
};

/** Parses one `--objective` value. */
export function parseObjectiveSpec(spec: string): Objective {
  const flag = '--objective';
  const colon = spec.indexOf(':');
  const metric = (colon < 0 ? spec : spec.slice(0, colon)).trim();
  const info = metricInfo(metric);
  if (typeof info === 'string') throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: ${info}`);
  const kv = new Map<string, string>();
  if (colon >= 0) {
    for (const part of spec.slice(colon + 1).split(',')) {
      const eq = part.indexOf('=');
      const k = eq < 0 ? '' : part.slice(0, eq).trim();
      if (!['weight', 'target', 'best', 'worst', 'direction', 'min_completed', 'name'].includes(k)) {
        throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: write METRIC:key=value,... with keys weight, target, best, worst, direction, min_completed, name (got ${JSON.stringify(part)})`);
      }
      kv.set(k, part.slice(eq + 1).trim());
    }
  }
  const d = kv.get('direction');
  if (d !== undefined && d !== 'maximize' && d !== 'minimize') throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: direction must be maximize or minimize`);
  const direction: Direction = (d) ?? info.direction;
  const weight = kv.has('weight') ? num(flag, spec, 'weight', kv.get('weight') as string) : 1;
  if (!(weight > 0)) throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: weight must be > 0`);
  let normalization: Normalization;
  if (kv.has('target')) {
    const target = num(flag, spec, 'target', kv.get('target') as string);
    if (!(target > 0)) throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: target must be > 0`);
    normalization = { kind: 'ratio', target };
  } else if (kv.has('best') || kv.has('worst')) {
    if (!kv.has('best') || !kv.has('worst')) throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: give both best= and worst=`);
    normalization = { kind: 'linear', best: num(flag, spec, 'best', kv.get('best') as string), worst: num(flag, spec, 'worst', kv.get('worst') as string) };
  } else if (UNIT_METRIC.test(info.base)) {
    normalization = direction === 'maximize' ? { kind: 'linear', best: 1, worst: 0 } : { kind: 'linear', best: 0, worst: 1 };
  } else {
    throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: say how to score ${metric}: add :target=T (ratio to a target) or :best=B,worst=W (linear), e.g. ${metric}:target=300`);
  }
  let minCompleted: number | undefined;
  if (kv.has('min_completed')) {
    minCompleted = num(flag, spec, 'min_completed', kv.get('min_completed') as string);
    if (!Number.isInteger(minCompleted) || minCompleted < 0) throw new ConfigError('bad-flag', `${flag} ${JSON.stringify(spec)}: min_completed must be an integer >= 0`);
  }
  return { name: kv.get('name') ?? metric, metric, direction, weight, normalization, ...(minCompleted === undefined ? {} : { minCompleted }) };
}

/** Parses one `--constraint` value. */
export function parseConstraintSpec(spec: string): Constraint {
  const m = /^\s*([^<>=\s]+)\s*(>=|<=)\s*([^\s]+?)(x?)\s*$/.exec(spec);
  if (m === null) throw new ConfigError('bad-flag', `--constraint ${JSON.stringify(spec)}: write METRIC>=VALUE or METRIC<=VALUE (VALUE ending in x: times the baseline's value), e.g. goodput_rps>=0.95x or drop_rate@critical<=0.01`);
  const [, metric, op, v, rel] = m as unknown as [string, string, string, string, string];
  const info = metricInfo(metric);
  if (typeof info === 'string') throw new ConfigError('bad-flag', `--constraint ${JSON.stringify(spec)}: ${info}`);
  const value = num('--constraint', spec, 'the bound', v);
  return { name: spec.replace(/\s+/g, ''), metric, kind: op === '>=' ? 'min' : 'max', value, relativeToBaseline: rel === 'x' };
}

/**
 * `suite` with the command line's objectives (replacing the suite's, when any are given) and constraints (added to
 * the suite's). A constraint relative to the baseline needs a suite with one.
 */
export function withObjectives(suite: Suite, objectives: readonly Objective[], constraints: readonly Constraint[]): Suite {
  if (objectives.length === 0 && constraints.length === 0) return suite;
  const names = new Set<string>();
  for (const o of objectives) {
    if (names.has(o.name)) throw new ConfigError('bad-flag', `--objective: two objectives are named ${JSON.stringify(o.name)}; give one a name= of its own`);
    names.add(o.name);
  }
  for (const c of constraints) {
    if (c.relativeToBaseline && suite.baseline === null) throw new ConfigError('bad-flag', `--constraint ${c.name}: suite ${suite.name} has no baseline to be relative to; give an absolute bound`);
    if (suite.constraints.some((x) => x.name === c.name)) throw new ConfigError('bad-flag', `--constraint ${c.name}: the suite already has this constraint`);
  }
  return { ...suite, objectives: objectives.length === 0 ? suite.objectives : objectives, constraints: [...suite.constraints, ...constraints] };
}
