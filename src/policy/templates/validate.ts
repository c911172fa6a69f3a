/** Template name and parameter checks at the edge: unknown names, types, ranges, each at its line:col. */
import { PolicyConfigError, formatPolicyPath, type PolicyPath, type PolicyPosition } from '../errors.js';
import type { ControlPoint } from '../view.js';
import { TEMPLATES, findTemplate, templateDefaults, type ParamValue, type TemplateParameters } from './catalog.js';
import { showValue } from '../../domain/errors.js';

function closest(name: string, options: readonly string[]): string[] {
  const d = (a: string, b: string): number => {
    const m = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) (m[0] as number[])[j] = j;
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) {
        const row = m[i] as number[];
        const prev = m[i - 1] as number[];
        row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
    }
    return (m[a.length] as number[])[b.length] as number;
  };
  return options.map((o) => ({ o, k: d(name, o) })).filter((x) => x.k <= Math.max(3, Math.floor(name.length / 3))).sort((a, b) => a.k - b.k || (a.o < b.o ? -1 : 1)).slice(0, 3).map((x) => x.o);
}

/** Validates `raw` against the template and returns the full parameter map (defaults filled in). */
export function validateTemplate(
  point: ControlPoint,
  name: string,
  raw: Readonly<Record<string, unknown>>,
  base: PolicyPath,
  where: (path: PolicyPath) => { file: string; pos: PolicyPosition },
): TemplateParameters {
  const fail = (path: PolicyPath, code: 'POLICY_TEMPLATE', problem: string, fix: string): never => {
    throw new PolicyConfigError(code, where(path), formatPolicyPath(path), problem, fix);
  };
  const t = findTemplate(name);
  const mine = TEMPLATES.filter((x) => x.point === point).map((x) => x.name);
  if (t === undefined) {
    const near = closest(name, mine);
    fail([...base, 'template'], 'POLICY_TEMPLATE', `unknown ${point} template ${showValue(name)}`, `${near.length > 0 ? `did you mean ${near.join(' or ')}? ` : ''}${point} templates: ${mine.join(', ')} (blis policies describes them)`);
  }
  const spec = t as NonNullable<typeof t>;
  if (spec.point !== point) fail([...base, 'template'], 'POLICY_TEMPLATE', `template ${showValue(name)} is a ${spec.point} template, not a ${point} one`, `${point} templates: ${mine.join(', ')}`);
  const out: Record<string, ParamValue> = templateDefaults(spec);
  const names = spec.parameters.map((p) => p.name);
  for (const key of Object.keys(raw)) {
    const p = spec.parameters.find((x) => x.name === key);
    const path = [...base, 'parameters', key];
    if (p === undefined) {
      const near = closest(key, names);
      fail(path, 'POLICY_TEMPLATE', `unknown parameter ${showValue(key)} of template ${name}`, `${near.length > 0 ? `did you mean ${near.join(' or ')}? ` : ''}parameters: ${names.join(', ')}`);
    }
    const ps = p as NonNullable<typeof p>;
    const v = raw[key];
    const range = `[${ps.min ?? ''}, ${ps.max ?? ''}]`;
    if (ps.type === 'boolean') {
      if (typeof v !== 'boolean') fail(path, 'POLICY_TEMPLATE', `${key} must be true or false, got ${JSON.stringify(v)}`, `default: ${String(ps.default)}`);
    } else if (ps.type === 'enum') {
      if (typeof v !== 'string' || !(ps.values ?? []).includes(v)) fail(path, 'POLICY_TEMPLATE', `${key} must be one of ${(ps.values ?? []).join(', ')}, got ${JSON.stringify(v)}`, `default: ${String(ps.default)}`);
    } else {
      if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, 'POLICY_TEMPLATE', `${key} must be a number in ${range}, got ${JSON.stringify(v)}`, `default: ${String(ps.default)}`);
      const n = v as number;
      if (ps.type === 'integer' && !Number.isInteger(n)) fail(path, 'POLICY_TEMPLATE', `${key} must be an integer in ${range}, got ${n}`, `default: ${String(ps.default)}`);
      if ((ps.min !== undefined && n < ps.min) || (ps.max !== undefined && n > ps.max)) fail(path, 'POLICY_TEMPLATE', `${key} = ${n} is out of range ${range}`, `choose a value in ${range} (default ${String(ps.default)})`);
    }
    out[key] = v as ParamValue;
  }
  if (spec.name === 'weighted_affinity_routing' || spec.name === 'weighted_scorers') {
    const weights = spec.parameters.filter((p) => p.name.endsWith('_weight') || spec.name === 'weighted_scorers').map((p) => out[p.name] as number);
    if (!weights.some((w) => w > 0)) fail([...base, 'parameters'], 'POLICY_TEMPLATE', 'every scorer weight is 0', 'give at least one scorer a positive weight');
  }
  return out;
}
