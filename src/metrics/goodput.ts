/**
 * Goodput (blis-cluster.md §5.3): per-SLO-class targets on TTFT, mean ITL and E2E, the share of arrivals
 * that completed within every configured target, and the `goodput_rps` / `slo_attainment` / `per_class`
 * fields of the cluster MetricsOutput.
 */
import type { RequestOutcomeView } from './cluster-metrics.js';
import { sloClassKey } from './breakdowns.js';
import { goCompareStrings } from '../gocompat/go-format.js';
import { GoParseError, goParseDuration } from '../gocompat/go-parse.js';
import type { MetricsOutputJson } from './output.js';
import { percentilesMs } from './stats.js';
import { BlisError } from '../domain/errors.js';

/**
 * Per-class thresholds in ms; 0 = dimension not gated. Structurally the workload layer's SloDimTargets (the
 * spec and trace-header type), which metrics may not import.
 */
export interface SloDimTargets {
  ttftMs: number;
  itlMs: number;
  e2eMs: number;
}

export class GoodputFlagError extends BlisError {
  constructor(message: string) {
    super('goodput-flags', message);
    this.name = 'GoodputFlagError';
  }
}

/** Class → duration in nanoseconds. */
export type DurationMap = ReadonlyMap<string, bigint>;

/**
 * One `--slo-*` flag: "class=GoDuration,class=GoDuration". Empty (after trimming) means no signal (null).
 * Throws on empty pairs, missing '=', empty class names, unparseable or non-positive durations.
 */
export function parseSloDurationFlag(value: string): Map<string, bigint> | null {
  const s = value.trim();
  if (s === '') return null;
  const out = new Map<string, bigint>();
  for (const raw of s.split(',')) {
    const pair = raw.trim();
    if (pair === '') throw new GoodputFlagError(`empty pair in ${JSON.stringify(s)} (expected key=duration)`);
    const eq = pair.indexOf('=');
    if (eq < 0) throw new GoodputFlagError(`invalid pair ${JSON.stringify(pair)} (expected key=duration)`);
    const key = pair.slice(0, eq).trim();
    if (key === '') throw new GoodputFlagError(`empty class key in pair ${JSON.stringify(pair)}`);
    let d: bigint;
    try {
      d = goParseDuration(pair.slice(eq + 1).trim());
    } catch (e) {
      if (e instanceof GoParseError) throw new GoodputFlagError(`unparseable duration in pair ${JSON.stringify(pair)}: ${e.message}`);
      throw e;
    }
    if (d <= 0n) throw new GoodputFlagError(`non-positive duration in pair ${JSON.stringify(pair)}`);
    out.set(key, d);
  }
  return out;
}

export interface GoodputCliTargets {
  readonly ttft: DurationMap | null;
  readonly itl: DurationMap | null;
  readonly e2e: DurationMap | null;
}

/** Parses the three flags; an error names its flag ("--slo-ttft: ..."), as the reference's fatal message does. */
export function resolveGoodputCliFlags(ttft: string, itl: string, e2e: string): GoodputCliTargets {
  const one = (flag: string, v: string): Map<string, bigint> | null => {
    try {
      return parseSloDurationFlag(v);
    } catch (e) {
      if (e instanceof GoodputFlagError) throw new GoodputFlagError(`${flag}: ${e.message}`);
      throw e;
    }
  };
  return { ttft: one('--slo-ttft', ttft), itl: one('--slo-itl', itl), e2e: one('--slo-e2e', e2e) };
}

const nsToMs = (d: bigint): number => Number(d) / 1e6;

/**
 * Merged targets, per class and per dimension: CLI > trace header > workload spec. A header value
 * overrides only when positive; a class whose three dimensions end up 0 is dropped. Null = goodput off.
 */
export function mergeGoodputTargets(
  cli: GoodputCliTargets | null,
  traceHeader: ReadonlyMap<string, SloDimTargets> | null | undefined,
  spec: ReadonlyMap<string, SloDimTargets> | null | undefined,
): Map<string, SloDimTargets> | null {
  const classes = new Set<string>();
  for (const m of [cli?.ttft, cli?.itl, cli?.e2e, traceHeader, spec]) if (m) for (const k of m.keys()) classes.add(k);
  if (classes.size === 0) return null;
  const out = new Map<string, SloDimTargets>();
  for (const cls of [...classes].sort(goCompareStrings)) {
    const base = spec?.get(cls);
    const t: SloDimTargets = base ? { ttftMs: base.ttftMs, itlMs: base.itlMs, e2eMs: base.e2eMs } : { ttftMs: 0, itlMs: 0, e2eMs: 0 };
    const h = traceHeader?.get(cls);
    if (h) {
      if (h.ttftMs > 0) t.ttftMs = h.ttftMs;
      if (h.itlMs > 0) t.itlMs = h.itlMs;
      if (h.e2eMs > 0) t.e2eMs = h.e2eMs;
    }
    const ct = cli?.ttft?.get(cls);
    if (ct !== undefined) t.ttftMs = nsToMs(ct);
    const ci = cli?.itl?.get(cls);
    if (ci !== undefined) t.itlMs = nsToMs(ci);
    const ce = cli?.e2e?.get(cls);
    if (ce !== undefined) t.e2eMs = nsToMs(ce);
    if (t.ttftMs === 0 && t.itlMs === 0 && t.e2eMs === 0) continue;
    out.set(cls, t);
  }
  return out.size === 0 ? null : out;
}

export interface ClassAttainment {
  readonly good: number;
  /** Arrivals of the class (drops, rejections and timeouts included). */
  readonly injected: number;
  /** Completed (E2E-bearing) requests of the class. */
  readonly completed: number;
  /** Met / gated per configured (> 0) dimension: keys among 'e2e', 'itl', 'ttft'. */
  readonly byDim: ReadonlyMap<string, number>;
}

const frac = (num: number, den: number): number => (den === 0 ? 0 : num / den);

/**
 * Per-class attainment over the completed (E2E-bearing) requests. A request's class folds "" → "default";
 * classes without a target are ignored in numerator and denominator. The "default" denominator also counts
 * arrivals with an empty class. The reference files a completed request missing from the request table under
 * "default"; `corrected` keeps its own class.
 */
export function sloAttainment(
  requests: readonly RequestOutcomeView[],
  injectedByClass: ReadonlyMap<string, number>,
  targets: ReadonlyMap<string, SloDimTargets>,
  corrected = false,
): { overall: number; perClass: Map<string, ClassAttainment> } {
  const perClass = new Map<string, ClassAttainment>();
  if (targets.size === 0) return { overall: 0, perClass };
  type Acc = { good: number; n: number; tm: number; tc: number; im: number; ic: number; em: number; ec: number };
  const acc = new Map<string, Acc>();
  for (const k of targets.keys()) acc.set(k, { good: 0, n: 0, tm: 0, tc: 0, im: 0, ic: 0, em: 0, ec: 0 });
  for (const r of requests) {
    if (!r.hasE2E) continue;
    // A request missing from the reference's request table has no class to read there: it counts as "".
    const cls = sloClassKey(r.registered || corrected ? r.sloClass : '');
    const t = targets.get(cls);
    const a = acc.get(cls);
    if (!t || !a) continue;
    a.n++;
    let good = true;
    // Latencies compare in ms, converted from ticks as the reference does before comparing.
    if (t.ttftMs > 0) {
      a.tc++;
      if (r.hasTTFT && r.ttft / 1e3 <= t.ttftMs) a.tm++;
      else good = false;
    }
    if (t.itlMs > 0) {
      a.ic++;
      if (r.itlMean / 1e3 <= t.itlMs) a.im++;
      else good = false;
    }
    if (t.e2eMs > 0) {
      a.ec++;
      if (r.e2e / 1e3 <= t.e2eMs) a.em++;
      else good = false;
    }
    if (good) a.good++;
  }
  let totalGood = 0;
  let totalInjected = 0;
  for (const cls of [...targets.keys()].sort(goCompareStrings)) {
    const a = acc.get(cls) as Acc;
    const t = targets.get(cls) as SloDimTargets;
    let injected = injectedByClass.get(cls) ?? 0;
    if (cls === 'default') injected += injectedByClass.get('') ?? 0;
    const byDim = new Map<string, number>();
    if (t.e2eMs > 0) byDim.set('e2e', frac(a.em, a.ec));
    if (t.itlMs > 0) byDim.set('itl', frac(a.im, a.ic));
    if (t.ttftMs > 0) byDim.set('ttft', frac(a.tm, a.tc));
    perClass.set(cls, { good: a.good, injected, completed: a.n, byDim });
    totalGood += a.good;
    totalInjected += injected;
  }
  return { overall: totalInjected > 0 ? totalGood / totalInjected : 0, perClass };
}

/** TTFT p99, mean ITL and E2E p99 of one class, in ms (reference perClassLatencyStats). */
function classLatencyStats(requests: readonly RequestOutcomeView[], cls: string): { ttftP99: number; itlMean: number; e2eP99: number } {
  const members = requests.filter((r) => r.hasE2E && r.registered && sloClassKey(r.sloClass) === cls);
  // Request-id order fixes the float sum of the mean ITLs.
  members.sort((a, b) => goCompareStrings(a.id, b.id));
  const ttft: number[] = [];
  const e2e: number[] = [];
  let itlSum = 0;
  for (const r of members) {
    e2e.push(r.e2e);
    if (r.hasTTFT) ttft.push(r.ttft);
    itlSum += r.itlMean;
  }
  return {
    ttftP99: percentilesMs(ttft, [99])[0] as number,
    itlMean: members.length > 0 ? itlSum / members.length / 1e3 : 0,
    e2eP99: percentilesMs(e2e, [99])[0] as number,
  };
}

/** The goodput fields of MetricsOutput, with Go's JSON key order (sorted map keys) already applied. */
export interface GoodputFields {
  readonly goodputRps: number;
  readonly sloAttainment: number;
  readonly perClass: Record<string, Record<string, unknown>>;
}

/**
 * Goodput over the aggregated requests (reference emitGoodput). `simEndedTime` in ticks is the runtime
 * denominator. Null when no target is configured (the output stays byte-identical to a goodput-free run).
 * A class's `count` is its arrivals in the reference, although the latency figures beside it describe its
 * completions; `corrected` reports the completions. Attainment keeps arrivals as its denominator in both
 * modes: a rejected or timed-out request did not meet its SLO (otherwise shedding load would raise it).
 */
export function computeGoodput(
  requests: readonly RequestOutcomeView[],
  injectedByClass: ReadonlyMap<string, number>,
  simEndedTime: number,
  targets: ReadonlyMap<string, SloDimTargets> | null,
  corrected = false,
): GoodputFields | null {
  if (!targets || targets.size === 0) return null;
  const runtimeSec = simEndedTime / 1e6;
  const { overall, perClass } = sloAttainment(requests, injectedByClass, targets, corrected);
  let totalGood = 0;
  const per: Record<string, Record<string, unknown>> = {};
  for (const cls of [...perClass.keys()].sort(goCompareStrings)) {
    const a = perClass.get(cls) as ClassAttainment;
    totalGood += a.good;
    const stats = classLatencyStats(requests, cls);
    // Keys in sorted order, as encoding/json writes a map; zero latency stats are left out.
    const e: Record<string, unknown> = { count: corrected ? a.completed : a.injected };
    if (stats.e2eP99 > 0) e['e2e_p99_ms'] = stats.e2eP99;
    e['goodput_rps'] = runtimeSec > 0 ? a.good / runtimeSec : 0;
    if (stats.itlMean > 0) e['itl_mean_ms'] = stats.itlMean;
    e['slo_attainment'] = frac(a.good, a.injected);
    if (a.byDim.size > 0) e['slo_attainment_by_dim'] = Object.fromEntries(a.byDim);
    if (stats.ttftP99 > 0) e['ttft_p99_ms'] = stats.ttftP99;
    per[cls] = e;
  }
  return { goodputRps: runtimeSec > 0 ? totalGood / runtimeSec : 0, sloAttainment: overall, perClass: per };
}

/**
 * Adds the goodput fields to a MetricsOutput object, after its fixed fields (and saturation, when set),
 * with omitempty: a zero goodput_rps or slo_attainment is left out; per_class is always present.
 */
export function applyGoodput(output: MetricsOutputJson, g: GoodputFields | null): MetricsOutputJson {
  if (!g) return output;
  if (g.goodputRps !== 0) output['goodput_rps'] = g.goodputRps;
  if (g.sloAttainment !== 0) output['slo_attainment'] = g.sloAttainment;
  output['per_class'] = g.perClass;
  return output;
}
