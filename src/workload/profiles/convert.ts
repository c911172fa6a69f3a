/**
 * `blis convert`: other workload descriptions → spec v2 YAML text. Pure functions (text and values in, text
 * out); the CLI (src/cli/convert-command.ts) only reads files and prints.
 *
 * - preset: the `--workload <preset>` / distribution workload of `blis run` as a one-client spec. The output is
 *   exactly equivalent: run with `--workload-spec`, it generates the very requests `blis run --workload <name>
 *   --rate R --num-requests N --seed S` generates (same ids, arrivals, tokens, prefix, deadlines, client id).
 *   Two deliberate differences from the reference's converter make that hold: the client is called
 *   "distribution" (the id the run command gives it; the reference writes "preset-<name>"), and the spec carries
 *   the seed and the run command's default 300 s timeout (the reference writes neither, so its output runs with
 *   seed 0 and no deadlines).
 * - inference-perf: the `inference_perf:` block expanded into explicit clients, so they can be edited (a
 *   misbehavior on one user, a different class...). Client ids, tenants, prefix groups, lengths and sessions
 *   are the expansion's own. Arrival instants are equivalent in distribution, not draw for draw: the source
 *   pre-draws each client's exact request count (one stage) or draws Poisson gaps at each stage's exact rate
 *   (several stages) through samplers that have no YAML form. The output reproduces the rates with lifecycle
 *   windows and, for several stages, a step `load_profile`; it caps the total at the source's request count.
 */
import { DEFAULT_DISTRIBUTION, PRESET_NAMES, isPresetName, resolvePreset } from '../presets.js';
import type { DistributionShape } from '../presets.js';
import { DISTRIBUTION_CLIENT_ID, SHARED_PREFIX_GROUP } from '../distribution.js';
import { expandInferencePerf } from '../spec/inference-perf.js';
import { parseWorkloadSpec } from '../spec/parse.js';
import type { ClientSpec, CohortSpec, DistSpec, StageSpec, WorkloadSpec } from '../spec/types.js';
import type { SloDimTargets } from '../tracev2-types.js';
import { specToYaml } from './emit.js';
import type { LoadSegment } from './types.js';
import { BlisError } from '../../domain/errors.js';
import { convertServeGenChunks, type ServeGenChunkFiles } from '../servegen/index.js';

/** A bad conversion input; the message names the flag or file and the fix. */
export class ConvertError extends BlisError {
  constructor(message: string) {
    super('CONVERT_INPUT', message);
    this.name = 'ConvertError';
  }
}

/** `blis run`'s defaults for the flags a preset conversion takes. */
export const RUN_DEFAULT_SEED = 42n;
export const RUN_DEFAULT_TIMEOUT_S = 300;

export interface PresetConvertOptions {
  /** A preset name, or "distribution" for the default distribution workload. */
  readonly name: string;
  /** Requests per second (> 0). */
  readonly rate: number;
  /** Request count (> 0). */
  readonly numRequests: number;
  readonly seed?: bigint;
  /** Per-request timeout in seconds; <= 0 = none. Default 300 (as `blis run`). */
  readonly timeoutSecs?: number;
  /** Shared prefix tokens (group "shared"); default: the preset's own (0 for every shipped preset). */
  readonly prefixTokens?: number;
}

const PRESET_CHOICES = ['distribution', ...PRESET_NAMES];

function gaussian(p: DistributionShape['prompt']): DistSpec {
  return {
    type: 'gaussian',
    params: new Map([['mean', p.mean], ['std_dev', p.stdev], ['min', p.min], ['max', p.max]]),
    file: '',
  };
}

/** The one-client spec equivalent to the preset (or distribution) workload. */
export function presetSpec(o: PresetConvertOptions): WorkloadSpec {
  if (!Number.isFinite(o.rate) || o.rate <= 0) throw new ConvertError(`--rate must be a finite value > 0, got ${o.rate}`);
  if (!Number.isSafeInteger(o.numRequests) || o.numRequests <= 0) throw new ConvertError(`--num-requests must be > 0, got ${o.numRequests}`);
  let shape: DistributionShape;
  if (o.name === 'distribution') shape = DEFAULT_DISTRIBUTION;
  else if (isPresetName(o.name)) shape = resolvePreset(o.name);
  else throw new ConvertError(`--name: unknown preset "${o.name}"; use one of ${PRESET_CHOICES.join(', ')}`);
  const prefix = o.prefixTokens ?? shape.prefixTokens;
  if (!Number.isSafeInteger(prefix) || prefix < 0) throw new ConvertError(`--prefix-tokens must be >= 0, got ${prefix}`);
  const timeout = o.timeoutSecs ?? RUN_DEFAULT_TIMEOUT_S;
  const client: ClientSpec = {
    id: DISTRIBUTION_CLIENT_ID,
    tenantId: '',
    sloClass: '',
    model: '',
    adapter: '',
    rateFraction: 1,
    arrival: { process: 'constant', cv: null, shape: null, scale: null },
    inputDist: gaussian(shape.prompt),
    outputDist: gaussian(shape.output),
    prefixGroup: prefix > 0 ? SHARED_PREFIX_GROUP : '',
    prefixLength: prefix,
    streaming: false,
    network: null,
    multimodal: null,
    reasoning: null,
    // A timeout of 0 means "none" in a spec, as `--timeout` <= 0 does for `blis run`.
    timeout: timeout > 0 ? Math.round(timeout * 1e6) : 0,
    sloTargetUs: null,
    closedLoop: null,
    concurrency: 0,
    thinkTimeUs: 0,
    lifecycle: null,
  };
  return {
    version: '2',
    seed: o.seed ?? RUN_DEFAULT_SEED,
    category: 'language',
    clients: [client],
    cohorts: [],
    aggregateRate: o.rate,
    horizon: 0,
    numRequests: o.numRequests,
    servegenData: null,
    inferencePerf: null,
    goodputSloTargets: new Map(),
  };
}

export function convertPreset(o: PresetConvertOptions): string {
  return specToYaml(presetSpec(o));
}

function requestCount(s: StageSpec): number {
  return Math.trunc(s.rate * s.duration);
}

/** One constant segment per stage, scaling the summed aggregate rate down to the stage's own. */
function stageProfile(stages: readonly StageSpec[], aggregate: number): LoadSegment[] {
  let start = 0;
  return stages.map((s) => {
    const seg: LoadSegment = {
      startS: start,
      endS: start + s.duration,
      kind: 'constant',
      multiplier: s.rate / aggregate,
      levels: null,
      from: null,
      to: null,
      periodS: null,
      peakAtS: null,
      peak: null,
      trough: null,
      atS: null,
      durationS: null,
      base: null,
      decayS: null,
    };
    start += s.duration;
    return seg;
  });
}

/** The clients of an inference_perf spec, written out (see the module comment for what is equivalent). */
export function inferencePerfSpec(yamlText: string, fileLabel: string): WorkloadSpec {
  const source = parseWorkloadSpec(yamlText, fileLabel);
  const ip = source.inferencePerf;
  if (ip === null) throw new ConvertError(`${fileLabel} does not contain an inference_perf section`);
  const expanded = expandInferencePerf(ip);
  const single = ip.stages.length === 1;
  const firstStage = ip.stages[0]!;
  const clients = expanded.clients.map((c): ClientSpec => {
    const { customSamplerFactory: _sampler, ...plain } = c;
    // One stage without multi-turn: the source spreads each client's fixed count over the stage; a window
    // [0, duration) ends the converted clients' Poisson arrivals at the same instant.
    if (single && c.reasoning === null) {
      return { ...plain, lifecycle: { windows: [{ startUs: 0, endUs: firstStage.duration * 1_000_000, traceRate: null, arrival: null, inputDist: null, outputDist: null }] } };
    }
    return plain;
  });
  // One stage sends exactly int(rate × duration) requests: cap the converted Poisson arrivals there. Several
  // stages are Poisson in the source too, so a cap would only cut the last stage short; the bound stays the
  // source's (like the source, the converted spec then needs --num-requests or --horizon to run).
  const cap = source.numRequests > 0 || !single ? source.numRequests : requestCount(firstStage);
  const spec: WorkloadSpec = {
    version: '2',
    seed: source.seed,
    category: expanded.category,
    clients,
    cohorts: [],
    aggregateRate: expanded.aggregateRate,
    horizon: source.horizon,
    numRequests: cap,
    servegenData: null,
    inferencePerf: null,
    goodputSloTargets: source.goodputSloTargets,
  };
  // Several stages without sessions: every stage's clients would otherwise run at (sum of rates)/clients.
  if (!single && !ip.sharedPrefix!.enableMultiTurnChat) {
    spec.loadProfile = { defaultMultiplier: 0, segments: stageProfile(ip.stages, expanded.aggregateRate) };
  }
  return spec;
}

export function convertInferencePerf(yamlText: string, fileLabel: string): string {
  const spec = inferencePerfSpec(yamlText, fileLabel);
  const text = specToYaml(spec);
  // The output must itself be a valid spec; a failure here is a bug in the conversion, not in the input.
  parseWorkloadSpec(text, `${fileLabel} (converted)`);
  return text;
}

/** One input of `blis compose`: a spec's text and the name errors give it. */
export interface ComposeSource {
  readonly text: string;
  readonly file: string;
}

/**
 * `blis compose`: several specs' client lists in one spec, as the reference merges them. The aggregate rates
 * add up and each client's `rate_fraction` is scaled by its spec's share of the total (not renormalised
 * within its spec), so every client keeps its absolute rate. Like the reference, the result keeps only
 * `clients` and the first spec's `category`: seed (printed as 0), num_requests, horizon, goodput targets,
 * cohorts and load profiles are dropped (docs/reference-differences.md, W6; `opts.corrected` keeps them), and
 * the merged spec must itself be valid (specs with and without `slo_class` cannot be mixed). Specs of different
 * categories merge as in the reference (the first spec's category is kept); `opts.warn` is told everything
 * dropped. Corrected semantics refuse specs of different categories instead.
 */
export function composeSpecs(sources: readonly ComposeSource[], opts: ComposeOptions = {}): WorkloadSpec {
  if (sources.length === 0) throw new ConvertError('blis compose needs at least one --from FILE');
  const specs = sources.map((s) => parseWorkloadSpec(s.text, s.file));
  if (opts.corrected === true) {
    // The reference keeps the first spec's category and drops the others; corrected semantics refuse a merge of
    // two categories (an empty category is compatible with any).
    const first = specs.findIndex((s) => s.category !== '');
    const other = first < 0 ? -1 : specs.findIndex((s) => s.category !== '' && s.category !== specs[first]!.category);
    if (other >= 0) {
      throw new ConvertError(`compose: ${sources[first]!.file} has category "${specs[first]!.category}" but ${sources[other]!.file} has "${specs[other]!.category}"; compose specs of one category (or set the same category: in each), or compose with --semantics reference, which keeps the first spec's category`);
    }
  } else {
    const dropped = droppedByCompose(sources, specs);
    if (dropped.length > 0) {
      opts.warn?.(`compose: as in the reference, the composed spec keeps only the clients and the first spec's category (${specs[0]!.category === '' ? 'none' : `"${specs[0]!.category}"`}); dropped: ${dropped.join('; ')} (--semantics corrected keeps the cohorts, goodput targets, load profiles, seed, horizon and num_requests, and refuses different categories)`);
    }
  }
  const total = specs.reduce((sum, s) => sum + s.aggregateRate, 0);
  if (!Number.isFinite(total)) throw new ConvertError(`compose: the total aggregate rate is not finite (${total}); check aggregate_rate in each --from spec`);
  const clients: ClientSpec[] = [];
  for (const s of specs) {
    // All specs concurrency-only (total 0): the clients are concatenated unchanged.
    const weight = total === 0 ? 1 : s.aggregateRate / total;
    for (const c of s.clients) clients.push(total === 0 ? c : { ...c, rateFraction: c.rateFraction * weight });
  }
  if (opts.corrected === true) return composeKeepingAll(sources, specs, clients, total, opts.warn ?? (() => undefined));
  return {
    version: '2',
    seed: 0n,
    category: specs[0]!.category,
    clients,
    cohorts: [],
    aggregateRate: total,
    horizon: 0,
    numRequests: 0,
    servegenData: null,
    inferencePerf: null,
    goodputSloTargets: new Map(),
  };
}

/** What a reference compose drops, per spec: other categories, cohorts and the spec-level settings. */
function droppedByCompose(sources: readonly ComposeSource[], specs: readonly WorkloadSpec[]): string[] {
  const out: string[] = [];
  const kept = specs[0]!.category;
  specs.forEach((s, k) => {
    const what: string[] = [];
    if (k > 0 && s.category !== '' && s.category !== kept) what.push(`category "${s.category}"`);
    if (s.cohorts.length > 0) what.push(`${s.cohorts.length} cohort${s.cohorts.length === 1 ? '' : 's'}`);
    if (s.seed !== 0n) what.push(`seed ${s.seed}`);
    if (s.numRequests > 0) what.push(`num_requests ${s.numRequests}`);
    if (s.horizon > 0) what.push(`horizon ${s.horizon}`);
    if (s.goodputSloTargets.size > 0) what.push('goodput_slo_targets');
    if (s.loadProfile !== undefined) what.push('load_profile');
    if (what.length > 0) out.push(`${what.join(', ')} of ${sources[k]!.file}`);
  });
  return out;
}

export interface ComposeOptions {
  /** --semantics corrected: keep what can be merged (see {@link composeKeepingAll}). */
  readonly corrected?: boolean;
  /** Where compose says what it dropped (reference) or which bounds it did not take (corrected). */
  readonly warn?: (message: string) => void;
}

/**
 * Corrected compose: the merged clients plus everything else that can be merged — the cohorts (rates scaled
 * like the clients'), the goodput targets (a class with two different targets is refused), a spec-level load
 * profile moved onto that spec's own clients (it would otherwise shape every spec's clients; refused when the
 * spec has cohorts, which cannot carry one), and the seed, `horizon` and `num_requests` of the first spec that
 * sets each (a later different value is warned about).
 */
function composeKeepingAll(sources: readonly ComposeSource[], specs: readonly WorkloadSpec[], merged: ClientSpec[], total: number, warn: (m: string) => void): WorkloadSpec {
  const clients: ClientSpec[] = [];
  const cohorts: CohortSpec[] = [];
  let i = 0;
  specs.forEach((s, k) => {
    const top = s.loadProfile;
    if (top !== undefined && s.cohorts.length > 0) {
      throw new ConvertError(`compose: ${sources[k]!.file} has a load_profile that also shapes its cohorts, which cannot carry their own; give its clients their own load_profile and remove the spec-level one, or compose without it`);
    }
    for (let n = 0; n < s.clients.length; n++) {
      const c = merged[i++]!;
      clients.push(top !== undefined && c.loadProfile === undefined ? { ...c, loadProfile: top } : c);
    }
    const weight = total === 0 ? 1 : s.aggregateRate / total;
    for (const c of s.cohorts) cohorts.push(total === 0 ? c : { ...c, rateFraction: c.rateFraction * weight });
  });
  const targets = new Map<string, SloDimTargets>();
  specs.forEach((s, k) => {
    for (const [cls, t] of s.goodputSloTargets) {
      const had = targets.get(cls);
      if (had !== undefined && (had.ttftMs !== t.ttftMs || had.itlMs !== t.itlMs || had.e2eMs !== t.e2eMs)) {
        throw new ConvertError(`compose: ${sources[k]!.file} sets goodput_slo_targets.${cls} differently from an earlier --from spec; give the class the same targets in each spec (or remove one)`);
      }
      targets.set(cls, t);
    }
  });
  const firstSet = <T>(name: string, get: (s: WorkloadSpec) => T, unset: T, show: (v: T) => string): T => {
    const k = specs.findIndex((s) => get(s) !== unset);
    if (k < 0) return unset;
    const v = get(specs[k]!);
    const j = specs.findIndex((s, n) => n > k && get(s) !== unset && get(s) !== v);
    if (j >= 0) warn(`compose: ${name} ${show(v)} taken from ${sources[k]!.file}; ${sources[j]!.file} has ${show(get(specs[j]!))}`);
    return v;
  };
  return {
    version: '2',
    seed: firstSet('seed', (s) => s.seed, 0n, String),
    category: specs.find((s) => s.category !== '')?.category ?? '',
    clients,
    cohorts,
    aggregateRate: total,
    horizon: firstSet('horizon', (s) => s.horizon, 0, String),
    numRequests: firstSet('num_requests', (s) => s.numRequests, 0, String),
    servegenData: null,
    inferencePerf: null,
    goodputSloTargets: targets,
  };
}

/** The composed spec as YAML; an invalid merge (e.g. mixed `slo_class` use) is one located error. */
export function composeSpecsYaml(sources: readonly ComposeSource[], opts: ComposeOptions = {}): string {
  const text = specToYaml(composeSpecs(sources, opts));
  parseWorkloadSpec(text, `the composed spec (${sources.map((s) => s.file).join(' + ')})`);
  return text;
}

export interface ServeGenConvertOptions {
  /** The directory as named on the command line (messages only). */
  readonly dir: string;
  readonly windowDurationSecs: number;
  readonly drainTimeoutSecs: number;
  /** Keep one period only: midnight, morning or afternoon ('' = all). */
  readonly time: string;
  readonly warn?: (message: string) => void;
  /** --semantics corrected: Poisson windows converted as Poisson (see ServeGenOptions.corrected). */
  readonly corrected?: boolean;
}

/** The seed `blis convert servegen` draws its window picks and shuffles from (and writes into the spec). */
export const SERVEGEN_CONVERT_SEED = 42n;

/**
 * `blis convert servegen`: the directory's cohorts (see src/workload/servegen) as a spec with seed 42 and no
 * clients, in absolute-rate mode. The spec is validated before it is printed, as the reference does.
 */
export function convertServeGen(chunks: readonly ServeGenChunkFiles[], o: ServeGenConvertOptions): string {
  if (!(o.windowDurationSecs > 0)) throw new ConvertError(`--window-duration-seconds must be > 0, got ${o.windowDurationSecs}`);
  if (o.drainTimeoutSecs < 0) throw new ConvertError(`--drain-timeout-seconds must be >= 0, got ${o.drainTimeoutSecs}`);
  const periods = ['midnight', 'morning', 'afternoon'];
  if (o.time !== '' && !periods.includes(o.time)) throw new ConvertError(`--time must be one of: ${periods.join(', ')} (got "${o.time}")`);
  const sg = convertServeGenChunks(chunks, { dir: o.dir, seed: SERVEGEN_CONVERT_SEED, windowDurationSecs: o.windowDurationSecs, drainTimeoutSecs: o.drainTimeoutSecs, ...(o.warn ? { warn: o.warn } : {}), ...(o.corrected === true ? { corrected: true } : {}) });
  if (sg.category === 'reasoning' && o.time !== '') throw new ConvertError('--time is not supported for reasoning ServeGen data (it has no periods); drop --time');
  const cohorts = o.time === '' ? sg.cohorts : sg.cohorts.filter((c) => c.id.startsWith(`${o.time}-`));
  if (cohorts.length === 0) throw new ConvertError(`no cohorts found for period "${o.time}" in ${o.dir}; try another --time or none`);
  const text = specToYaml({
    version: '2',
    seed: SERVEGEN_CONVERT_SEED,
    category: sg.category,
    clients: [],
    cohorts,
    aggregateRate: 0,
    horizon: 0,
    numRequests: 0,
    servegenData: null,
    inferencePerf: null,
    goodputSloTargets: new Map(),
  });
  parseWorkloadSpec(text, `the spec converted from ${o.dir}`);
  return text;
}
