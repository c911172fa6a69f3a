/**
 * The library API: `simulate(config)` runs exactly what `blis run` (or `blis replay`) runs, from a plain
 * config object validated by a schema generated from the same option table as the CLI's flags — so every
 * option has the same name (camelCase), default and checks, and the same config gives the same bytes. The
 * config's TypeScript type is derived from the same table (./library-types.ts).
 *
 * Options that name files to read (`workloadSpec`, `policyConfig`, `modelConfigFolder`, `hardwareConfig`,
 * `traceHeader`, `traceData`) are looked up in `files`, an in-memory map from that name to the file's text;
 * the library never touches the file system. Options that write files (`metricsPath`, `traceOutput`,
 * `resultsPath`) are rejected: `outputs` asks for those contents in the result instead.
 *
 * This is the library's edge: every error leaves as a BlisError whose message names config keys (the one
 * translation from the CLI's flag names is here), and the simulation runs in slices between which the event
 * loop gets its turn.
 */
import { z } from 'zod';
import { BlisError } from '../domain/errors.js';
import { ConfigError } from './config-error.js';
import type { EngineDriver } from './engine-setup.js';
import type { SimEnv } from './env.js';
import { EtaEstimator, simFraction } from './eta.js';
import type { SimulateOptions, SimulationConfig, SimulationProgress, SimulationReport, SimulationResult } from './library-types.js';
import { camel, FLAGS, FlagValues, type FlagSpec } from './options.js';
import { renderJson, renderReferenceText } from './report.js';
import { simulateReplay, simulateRun, type SimulationOutputs } from './run.js';
import type { ClusterSimulator } from '../cluster/cluster.js';
import { byteOrder, datasetFileName, type ServeGenChunkFiles } from '../workload/servegen/index.js';

export type * from './library-types.js';

const int64 = z.union([z.bigint(), z.number().int(), z.string().regex(/^[+-]?\d+$/, 'an integer')]);

function schemaFor(f: FlagSpec): z.ZodType {
  if (f.int64 === true) return int64;
  switch (f.kind) {
    case 'string': return f.choices !== undefined ? z.enum(f.choices as [string, ...string[]]) : z.string();
    case 'int': return z.number().int();
    case 'float': return z.number().finite();
    case 'bool': return z.boolean();
    case 'floats': return z.array(z.number().finite());
  }
}

const LIBRARY_FLAGS: readonly FlagSpec[] = FLAGS.filter((f: FlagSpec) => f.writesFile === undefined);

function optionShape(mode: 'run' | 'replay'): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const f of LIBRARY_FLAGS) if (f.scope === 'shared' || f.scope === mode) shape[camel(f.name)] = schemaFor(f).optional();
  return shape;
}

const common = {
  files: z.record(z.string(), z.string()).optional(),
  outputs: z.object({ metrics: z.boolean().optional(), trace: z.boolean().optional(), results: z.boolean().optional() }).strict().optional(),
};

/** The config schema: every CLI option of the mode as an optional camelCase key, plus `files` and `outputs`. Unknown keys are errors. */
export const simulationConfigSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('run'), ...optionShape('run'), ...common }).strict(),
  z.object({ mode: z.literal('replay'), ...optionShape('replay'), ...common }).strict(),
]);

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = row[j] as number;
      row[j] = next;
    }
  }
  return row[b.length] as number;
}

const CHUNK_TRACE = /^chunk-([^/]*)-trace\.csv$/;

function serveGenFromFiles(files: Readonly<Record<string, string>>, dir: string): ServeGenChunkFiles[] {
  const base = dir.endsWith('/') ? dir : `${dir}/`;
  return Object.keys(files)
    .filter((k) => k.startsWith(base) && CHUNK_TRACE.test(k.slice(base.length)))
    .map((k) => k.slice(base.length))
    .sort(byteOrder)
    .map((name) => {
      const id = CHUNK_TRACE.exec(name)![1]!;
      return { id, trace: files[`${base}${name}`]!, dataset: files[`${base}${datasetFileName(id)}`] ?? null };
    });
}

function suggestKey(key: string, mode: 'run' | 'replay'): string {
  let best = '';
  let bestD = Infinity;
  for (const f of LIBRARY_FLAGS) {
    if (f.scope !== 'shared' && f.scope !== mode) continue;
    const d = editDistance(key.toLowerCase(), camel(f.name).toLowerCase());
    if (d < bestD) [best, bestD] = [camel(f.name), d];
  }
  return bestD <= Math.max(2, Math.floor(key.length / 4)) ? `; did you mean "${best}"?` : '';
}

function keyPath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
}

function valueAt(config: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = config;
  for (const p of path) v = typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  return v;
}

/** `unknown routing policy "fancy"; valid: round-robin, …` for a value outside an option's choices. */
function choiceMessage(config: unknown, path: readonly PropertyKey[], values: readonly unknown[]): string {
  const key = String(path[path.length - 1] ?? '');
  const flag = FLAGS.find((f: FlagSpec) => camel(f.name) === key);
  const what = flag !== undefined ? flag.name.replace(/-/g, ' ') : 'value';
  const got = valueAt(config, path);
  return `unknown ${what} ${JSON.stringify(typeof got === 'string' ? got : String(got))}; valid: ${values.map(String).join(', ')}`;
}

/** One line per problem, each naming its key (the schema's own wording for the rest). */
function schemaError(error: z.ZodError, mode: 'run' | 'replay', config: unknown): ConfigError {
  const parts: string[] = [];
  let field: string | undefined;
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const at = keyPath([...issue.path, k]);
        field ??= at;
        parts.push(`${at}: unknown key${issue.path.length === 0 ? suggestKey(k, mode) : ''}`);
      }
      continue;
    }
    const at = keyPath(issue.path);
    field ??= at;
    const message = issue.code === 'invalid_value' && issue.path.length > 0 && issue.values.every((v) => typeof v === 'string')
      ? choiceMessage(config, issue.path, issue.values)
      : issue.message;
    parts.push(`${at === '' ? 'config' : at}: ${message}`);
  }
  return new ConfigError('bad-config', `invalid simulation config: ${parts.join('; ')}`, { field });
}

const WRITES_FILE: ReadonlyMap<string, string> = new Map(FLAGS.filter((f: FlagSpec) => f.writesFile !== undefined).map((f: FlagSpec) => [camel(f.name), f.writesFile as string]));

/** Deepest nesting read from a config object (the schema's deepest field is a few levels down). */
const MAX_CONFIG_DEPTH = 32;

/**
 * A plain-data copy of a caller's config, read once: a getter or a Proxy trap that throws, a cycle or a
 * structure nested absurdly deep is the caller's config error (naming the key), not an internal one.
 */
function plainConfig(input: unknown): unknown {
  const onPath = new Set<object>();
  const copy = (v: unknown, path: string, depth: number): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const where = path === '' ? 'the config' : path;
    if (depth > MAX_CONFIG_DEPTH) throw new ConfigError('bad-config', `invalid simulation config: ${where} nests deeper than ${MAX_CONFIG_DEPTH} levels; pass plain option values`, { field: path });
    if (onPath.has(v)) throw new ConfigError('bad-config', `invalid simulation config: ${where} contains itself (a cycle); pass plain option values`, { field: path });
    let key = '';
    try {
      const isArray = Array.isArray(v);
      const proto = Object.getPrototypeOf(v) as unknown;
      if (!isArray && proto !== Object.prototype && proto !== null) return v;
      onPath.add(v);
      const out: Record<string, unknown> | unknown[] = isArray ? [] : {};
      for (key of Object.keys(v)) {
        // An own "__proto__" (JSON.parse makes one) would set the copy's prototype instead of a key, and the
        // schema would never see it: refused as the unknown key it is.
        if (key === '__proto__' && !isArray) throw new ConfigError('bad-config', `invalid simulation config: ${path === '' ? '' : `${path}.`}__proto__: unknown key; remove it`, { field: path === '' ? key : `${path}.${key}` });
        const item = copy((v as Record<string, unknown>)[key], path === '' ? key : isArray ? `${path}[${key}]` : `${path}.${key}`, depth + 1);
        (out as Record<string, unknown>)[key] = item;
      }
      onPath.delete(v);
      return out;
    } catch (e) {
      if (e instanceof ConfigError) throw e;
      const at = key === '' ? where : path === '' ? key : `${path}.${key}`;
      const msg = e instanceof Error ? e.message : String(e);
      throw new ConfigError('bad-config', `invalid simulation config: reading ${at} threw (${msg.split('\n')[0]?.slice(0, 200) ?? ''}); pass plain data (no getters or proxies that throw)`, { field: at });
    }
  };
  return copy(input, '', 0);
}

/** Validates `config` (throws a ConfigError naming the offending keys) and returns the option values. */
export function parseSimulationConfig(input: unknown): { mode: 'run' | 'replay'; values: FlagValues; files: Readonly<Record<string, string>> } {
  const config = plainConfig(input);
  if (typeof config === 'object' && config !== null) {
    for (const [key, output] of WRITES_FILE) {
      if (Object.hasOwn(config, key)) {
        const filesKey = output === 'trace' ? 'traceYaml and result.files.traceCsv' : output;
        throw new ConfigError('bad-config', `${key}: the library writes no files; pass outputs: { ${output}: true } and read result.files.${filesKey}`, { field: key });
      }
    }
  }
  const mode = typeof config === 'object' && config !== null && (config as { mode?: unknown }).mode === 'replay' ? 'replay' : 'run';
  const parsed = simulationConfigSchema.safeParse(config);
  if (!parsed.success) throw schemaError(parsed.error, mode, config);
  const data = parsed.data as Record<string, unknown> & { mode: 'run' | 'replay'; files?: Record<string, string>; outputs?: { metrics?: boolean; trace?: boolean; results?: boolean } };
  const raw: Record<string, unknown> = {};
  const explicit = new Set<string>();
  for (const f of FLAGS as readonly FlagSpec[]) {
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
  // The requested contents are rendered as if their file options named a file (nothing is written).
  const o = data.outputs ?? {};
  if (o.metrics === true) raw['metricsPath'] = '<result.files.metrics>';
  if (o.trace === true) raw['traceOutput'] = '<result.files.trace>';
  if (o.results === true && data.mode === 'replay') raw['resultsPath'] = '<result.files.results>';
  return { mode: data.mode, values: new FlagValues(raw, explicit), files: data.files ?? {} };
}

/** CLI flag name (and deprecated alias) -> config key. */
const KEY_OF_FLAG: ReadonlyMap<string, string> = new Map(
  (FLAGS as readonly FlagSpec[]).flatMap((f) => [[f.name, camel(f.name)] as const, ...(f.aliases ?? []).map((a) => [a, camel(f.name)] as const)]),
);

/** `--num-requests` -> `numRequests` in a message written for the CLI. */
function toConfigKeys(text: string): string {
  return text.replace(/--([a-z][a-z0-9-]*)/g, (m, name: string) => KEY_OF_FLAG.get(name) ?? m);
}

/**
 * The one translation of errors at the library edge: a BlisError keeps its class, code and position, with
 * flag names replaced by config keys; anything else (a bug) becomes a BlisError `internal` around it.
 */
export function libraryError(e: unknown): BlisError {
  if (e instanceof BlisError) {
    const field = e.field === undefined ? undefined : toConfigKeys(e.field.startsWith('--') ? e.field : KEY_OF_FLAG.has(e.field) ? `--${e.field}` : e.field);
    // Rewritten in place so that subclasses and their extra fields (controlPoint, reason, ...) survive.
    Object.defineProperty(e, 'message', { value: toConfigKeys(e.message), configurable: true, writable: true });
    Object.defineProperty(e, 'field', { value: field, configurable: true, writable: false });
    return e;
  }
  const message = e instanceof Error ? e.message : String(e);
  return new BlisError('internal', `internal error (a bug in blis-ts, please report it): ${message.split('\n')[0] ?? ''}`, { cause: e });
}

/** Read through a call: TypeScript would otherwise keep `aborted` narrowed to false across awaits. */
function isAborted(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal?.aborted === true;
}

function aborted(signal: AbortSignal): BlisError {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? `: ${reason.message}` : typeof reason === 'string' ? `: ${reason}` : '';
  return new BlisError('aborted', `simulation aborted${why}`, { cause: reason });
}

function progressOf(cs: ClusterSimulator, total: number | null, eta: EtaEstimator, nowMs: number): SimulationProgress {
  let done = cs.rejectedRequests;
  for (const inst of cs.instances) {
    const m = inst.metrics;
    done += m.completedRequests + m.droppedUnservable + m.timedOutRequests;
  }
  const p = { requestsArrived: cs.arrivals.length, requestsDone: done, requestsTotal: total };
  const fraction = simFraction(p);
  return { simulatedTimeUs: cs.clock, ...p, etaSeconds: fraction === null ? null : eta.sample(nowMs, fraction) };
}

/**
 * Runs the cluster in chunks of events, yielding to the event loop whenever a slice of `sliceMs` wall time has
 * passed. Chunks adapt to about a millisecond each, so a slice overshoots its budget by little. A streamed
 * workload calls the driver once per chunk of arrivals: the slice carries over between calls, so the work done
 * between them (generating the next arrivals) counts too. The wall clock is read here, at the library edge, and
 * only decides when to yield: the events and their order are exactly those of a run in one go.
 */
function slicedDriver(opts: SimulateOptions, now: () => number): EngineDriver {
  const sliceMs = sliceOf(opts);
  let chunk = 256;
  let sliceStart = now();
  const eta = new EtaEstimator();
  return async (cs, until = Infinity, total = null, guard = null) => {
    // One slice between yields is one synchronous stretch, under `guard` (the fast engine's wall-clock backstop).
    const slice = (): { more: boolean; yieldNow: boolean } => {
      for (;;) {
        const t0 = now();
        const more = cs.advanceTo(until, chunk);
        const t1 = now();
        if (t1 - t0 < 0.5 && chunk < 1 << 22) chunk *= 2;
        else if (t1 - t0 > 2 && chunk > 16) chunk >>= 1;
        if (t1 - sliceStart >= sliceMs) return { more, yieldNow: true };
        if (!more || cs.nextEventTime() > until) return { more, yieldNow: false };
      }
    };
    for (;;) {
      const { more, yieldNow } = guard === null ? slice() : guard.run(slice, cs);
      if (!yieldNow) break;
      if (opts.onProgress) opts.onProgress(progressOf(cs, total, eta, now()));
      await yieldToEventLoop();
      if (isAborted(opts.signal)) throw aborted(opts.signal);
      sliceStart = now();
      if (!more || cs.nextEventTime() > until) break;
    }
    if (until === Infinity && opts.onProgress) opts.onProgress(progressOf(cs, total, eta, now()));
  };
}

function sliceOf(opts: SimulateOptions): number {
  return Math.min(Math.max(opts.sliceMs ?? 10, 1), 50);
}

function yieldToEventLoop(): Promise<void> {
  // setImmediate runs after the poll phase: due timers and I/O callbacks get their turn first.
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Runs one simulation. Resolves with the same outputs the CLI prints (and, when `config.outputs` asks, writes);
 * rejects with a BlisError (code `aborted` when `options.signal` aborts) whose message names config keys.
 */
export async function simulate(config: SimulationConfig, options: SimulateOptions = {}): Promise<SimulationResult> {
  // The library's one wall-clock read: it paces the yields to the event loop, never the simulation.
  // eslint-disable-next-line no-restricted-globals
  const now = options.now ?? (() => performance.now());
  const signal = options.signal;
  try {
    if (isAborted(signal)) throw aborted(signal);
    const { mode, values, files } = parseSimulationConfig(config);
    const quiet = values.str('log') === 'error';
    const warnings: string[] = [];
    const env: SimEnv = {
      readText: (path, option) => {
        const text = files[path];
        if (text === undefined) throw new ConfigError('missing-file', `${option}: "${path}" is not in config.files; pass its contents as files["${path}"]`, { field: option });
        return text;
      },
      // A ServeGen directory is given as files["<dir>/chunk-<id>-trace.csv"] and files["<dir>/chunk-<id>-dataset.json"].
      readServeGen: (dir) => serveGenFromFiles(files, dir),
      warn: (m) => {
        if (!quiet) warnings.push(m);
      },
      drive: slicedDriver(options, now),
      pause: async () => {
        await yieldToEventLoop();
        if (isAborted(signal)) throw aborted(signal);
      },
    };
    // Workload generation and option resolution run before the first slice: give the loop a turn first.
    await yieldToEventLoop();
    const runOpts = options.wallClockMs === undefined ? {} : { wallClockMs: options.wallClockMs };
    const out: SimulationOutputs = mode === 'run' ? await simulateRun(values, env, undefined, runOpts) : await simulateReplay(values, env, undefined, runOpts);
    if (isAborted(signal)) throw aborted(signal);
    await yieldToEventLoop();
    const report = JSON.parse(renderJson(out.report)) as SimulationReport;
    return {
      metrics: report.simulation_metrics,
      report,
      referenceText: renderReferenceText(out.report),
      files: {
        ...(out.metricsFile !== null ? { metrics: out.metricsFile } : {}),
        ...(out.trace ? { traceYaml: out.trace.yaml, traceCsv: out.trace.csv } : {}),
        ...(out.results !== null ? { results: out.results } : {}),
        ...(out.timeseriesFile !== null ? { timeseries: out.timeseriesFile } : {}),
      },
      timeseries: out.timeseries,
      warnings,
    };
  } catch (e) {
    throw libraryError(e);
  }
}
