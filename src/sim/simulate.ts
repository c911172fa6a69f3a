/**
 * The library API: `simulate(config)` runs exactly what `blis run` (or `blis replay`) runs, from a plain
 * config object validated by a schema generated from the same option table as the CLI's flags — so every
 * option has the same name (camelCase), default and checks, and the same config gives the same bytes.
 *
 * Options that name files (`workloadSpec`, `policyConfig`, `modelConfigFolder`, `hardwareConfig`,
 * `traceHeader`, `traceData`) are looked up in `files`, an in-memory map from that name to the file's text;
 * the library never touches the file system.
 */
import { z } from 'zod';
import { ConfigError } from './config-error.js';
import type { SimEnv } from './env.js';
import { camel, FLAGS, FlagValues, type FlagSpec } from './options.js';
import { renderJson, renderReferenceText } from './report.js';
import { simulateReplay, simulateRun, type SimulationOutputs } from './run.js';
import type { TimeSeriesData } from '../cluster/timeseries.js';

const int64 = z.union([z.bigint(), z.number().int(), z.string().regex(/^[+-]?\d+$/, 'an integer')]);

function schemaFor(f: FlagSpec): z.ZodType {
  if (f.name === 'seed' || f.name === 'horizon') return int64;
  switch (f.kind) {
    case 'string': return z.string();
    case 'int': return z.number().int();
    case 'float': return z.number().finite();
    case 'bool': return z.boolean();
    case 'floats': return z.array(z.number().finite());
  }
}

function optionShape(mode: 'run' | 'replay'): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const f of FLAGS) if (f.scope === 'shared' || f.scope === mode) shape[camel(f.name)] = schemaFor(f).optional();
  return shape;
}

const common = { files: z.record(z.string(), z.string()).optional() };

/** The config schema: every CLI option of the mode as an optional camelCase key, plus `files`. Unknown keys are errors. */
export const simulationConfigSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('run'), ...optionShape('run'), ...common }).strict(),
  z.object({ mode: z.literal('replay'), ...optionShape('replay'), ...common }).strict(),
]);

export type SimulationConfig = { readonly mode: 'run' | 'replay'; readonly files?: Readonly<Record<string, string>> } & Readonly<Record<string, unknown>>;

export interface SimulationResult {
  /** The cluster metrics (the reference's MetricsOutput fields). */
  readonly metrics: Record<string, unknown>;
  /** The whole JSON report (what `blis run` prints by default). */
  readonly report: Record<string, unknown>;
  /** What the reference CLI prints, byte for byte. */
  readonly referenceText: string;
  /** File outputs: the metrics file, the trace export (run) and the per-request results (replay). */
  readonly files: { readonly metrics: string; readonly traceYaml?: string; readonly traceCsv?: string; readonly results?: string; readonly timeseries?: string };
  /**
   * The sampled time series (per instance and cluster-wide; counters as per-row deltas) when
   * `timeseriesIntervalUs` > 0 or `timeseriesPath` is set; null otherwise.
   */
  readonly timeseries: TimeSeriesData | null;
  readonly warnings: readonly string[];
}

/** Validates `config` (throws a ConfigError naming the offending keys) and returns the option values. */
export function parseSimulationConfig(config: unknown): { mode: 'run' | 'replay'; values: FlagValues; files: Readonly<Record<string, string>> } {
  const parsed = simulationConfigSchema.safeParse(config);
  if (!parsed.success) throw new ConfigError('bad-config', `invalid simulation config:\n${z.prettifyError(parsed.error)}`);
  const data = parsed.data as Record<string, unknown> & { mode: 'run' | 'replay'; files?: Record<string, string> };
  const raw: Record<string, unknown> = {};
  const explicit = new Set<string>();
  for (const f of FLAGS) {
    if (f.scope !== 'shared' && f.scope !== data.mode) continue;
    const key = camel(f.name);
    const v = data[key];
    if (v === undefined) {
      if (f.kind !== 'bool') raw[key] = Array.isArray(f.def) ? f.def.join(',') : String(f.def);
      continue;
    }
    explicit.add(f.name);
    raw[key] = f.kind === 'bool' ? v : Array.isArray(v) ? v.join(',') : typeof v === 'bigint' || typeof v === 'number' ? v.toString() : v;
  }
  return { mode: data.mode, values: new FlagValues(raw, explicit), files: data.files ?? {} };
}

/**
 * Runs one simulation. Resolves with the same outputs the CLI writes; rejects with a ConfigError (or another
 * error carrying a stable `code`) for bad input.
 */
export async function simulate(config: SimulationConfig): Promise<SimulationResult> {
  const { mode, values, files } = parseSimulationConfig(config);
  const warnings: string[] = [];
  const env: SimEnv = {
    readText: (path, option) => {
      const text = files[path];
      if (text === undefined) throw new ConfigError('missing-file', `${option}: "${path}" is not in config.files; pass its contents as files["${path}"]`);
      return text;
    },
    warn: (m) => warnings.push(m),
  };
  const out: SimulationOutputs = mode === 'run' ? await simulateRun(values, env) : await simulateReplay(values, env);
  return {
    metrics: out.report.clusterOutput,
    report: JSON.parse(renderJson(out.report)) as Record<string, unknown>,
    referenceText: renderReferenceText(out.report),
    files: {
      metrics: out.metricsFile,
      ...(out.trace ? { traceYaml: out.trace.yaml, traceCsv: out.trace.csv } : {}),
      ...(out.results !== null ? { results: out.results } : {}),
      ...(out.timeseriesFile !== null ? { timeseries: out.timeseriesFile } : {}),
    },
    timeseries: out.timeseries,
    warnings,
  };
}
