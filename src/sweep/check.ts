/**
 * Every point of a sweep checked as a whole configuration before anything runs: the config schema of
 * `simulate()`, then what a run checks before it simulates (sim's checkSimulation: files, policies, workload
 * options). The files a point's options name are read once and travel in its config, so a worker on another
 * machine needs nothing but the job. A bad point is one error located at the value that made it bad.
 */
import { BlisError } from '../domain/errors.js';
import type { ParsedYaml } from '../format/yaml.js';
import type { SimEnv } from '../sim/env.js';
import { camel } from '../sim/options.js';
import { checkSimulation } from '../sim/run.js';
import { parseSimulationConfig } from '../sim/simulate.js';
import { sweepError, type YamlPath } from './locate.js';
import type { ExpandedPoint, ValueSource } from './points.js';
import type { ParamValue, SweepPoint } from './types.js';

export interface SweepFileEnv {
  /** The text of `path` as the sweep file names it (relative to the sweep file); throws a BlisError when unreadable. */
  readText(path: string, option: string): string;
}

function isCoded(e: unknown): e is Error & { code: string } {
  return e instanceof Error && typeof (e as { code?: unknown }).code === 'string';
}

/** The config key an error is about: its `field`, a `--flag` it names, or a varied key it mentions. */
function blamedKey(e: Error & { field?: unknown }, candidates: readonly string[]): string | null {
  if (typeof e.field === 'string' && e.field !== '') {
    const f = camel(e.field.replace(/^--/, '').split(/[.[]/)[0] as string);
    if (candidates.includes(f)) return f;
  }
  for (const m of e.message.matchAll(/--([a-z][a-z0-9-]*)/g)) {
    const k = camel(m[1] as string);
    if (candidates.includes(k)) return k;
  }
  for (const k of candidates) if (new RegExp(`\\b${k}\\b`).test(e.message)) return k;
  return null;
}

function sourcePath(s: ValueSource): YamlPath {
  if (s.from === 'seeds') return ['seeds', s.index];
  if (s.from === 'sample') return s.index >= 0 ? ['sample', 'ranges', s.key, s.index] : ['sample', 'ranges', s.key];
  return ['axes', s.key, s.index];
}

function describe(params: Readonly<Record<string, ParamValue>>): string {
  const parts = Object.entries(params).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`);
  return parts.length === 0 ? 'the base configuration' : parts.join(', ');
}

export async function checkPoints(
  parsed: ParsedYaml,
  base: Readonly<Record<string, unknown>>,
  expanded: readonly ExpandedPoint[],
  env: SweepFileEnv,
): Promise<{ points: SweepPoint[]; warnings: string[] }> {
  const texts = new Map<string, string>();
  const warnings = new Set<string>();
  const points: SweepPoint[] = [];
  for (let i = 0; i < expanded.length; i++) {
    const p = expanded[i] as ExpandedPoint;
    const config: Record<string, unknown> = { ...base, ...p.params };
    const files: Record<string, string> = {};
    const simEnv: SimEnv = {
      readText: (path, option) => {
        let t = texts.get(path);
        if (t === undefined) {
          try {
            t = env.readText(path, option);
          } catch (e) {
            // Name the option whose file it is, so the error points at that key.
            const flag = /^--([a-z][a-z0-9-]*)/.exec(option)?.[1];
            throw new BlisError(isCoded(e) ? e.code : 'io', (e as Error).message, { field: flag === undefined ? undefined : camel(flag), cause: e });
          }
          texts.set(path, t);
        }
        files[path] = t;
        return t;
      },
      warn: (m) => warnings.add(m),
    };
    try {
      const { mode, values } = parseSimulationConfig(config);
      await checkSimulation(mode, values, simEnv);
    } catch (e) {
      if (!isCoded(e)) throw e;
      const varied = p.sources.map((s) => s.key);
      const key = blamedKey(e, [...varied, ...Object.keys(base)]);
      const source = key === null ? undefined : p.sources.find((s) => s.key === key);
      const path: YamlPath = source !== undefined ? sourcePath(source) : key !== null ? ['base', key] : p.sources[0] !== undefined ? sourcePath(p.sources[0]) : ['base'];
      const reason = e.message.replace(/\s*\n\s*/g, ' ').replace(/✖\s*/g, '').trim();
      const err: BlisError = sweepError(
        parsed,
        path,
        `point ${i + 1} of ${expanded.length} (${describe(p.params)}) is not a valid configuration: ${reason}`,
        'fix the value or leave it out of the sweep; nothing was run',
        { cause: e },
      );
      throw err;
    }
    const sorted = Object.fromEntries(Object.keys(files).sort().map((k) => [k, files[k] as string]));
    points.push({ params: p.params, config: Object.keys(sorted).length > 0 ? { ...config, files: sorted } : config });
  }
  return { points, warnings: [...warnings] };
}
