/**
 * ServeGen data → spec v2 cohorts (the reference's `loadServeGenData`, blis-cluster.md §9.7), for `blis convert
 * servegen` and a spec's `servegen_data` source. Pure: the chunk files arrive as text, read by the caller.
 *
 * Language/multimodal data: three periods (midnight 0 s, morning 28800 s, afternoon 50400 s of the day); for each
 * one of its three 600 s windows is drawn (`rand(seed).Intn(3)`). A chunk joins a period when it has an active
 * window (rate > 0, with a dataset at or before it) at that time of day on any day. Each period's chunks are
 * shuffled and dealt round-robin to the five SLO classes; each (period, class) group becomes a cohort whose
 * rate is the sum of its chunks' mean rates at that time of day, whose arrival process is the majority of the
 * chunks' patterns with averaged cv/shape/scale (scale in µs), and whose lengths are lognormals fitted to the
 * nearest-preceding dataset PDFs (averaged over days and chunks). Periods run back to back, separated by the
 * drain gap, as spike windows in absolute-rate mode (aggregate_rate 0).
 *
 * Reasoning data (datasets with `reason_ratio`): one window, the one most chunks are active in; five
 * single-round cohorts with the averaged reason-ratio PMF (see {@link reasoningCohorts}).
 */
import { GoRand } from '../../gocompat/go-rand.js';
import type { ArrivalSpec, CohortSpec, DistSpec } from '../spec/types.js';
import { cohortOf, datasetFileName, SLO_CLASSES, traceFileName, WINDOW_SEC, type ServeGenChunkFiles, type ServeGenOptions } from './common.js';
import { reasoningCohorts } from './reasoning.js';
import { datasetWindows, fitLognormal, hasReasonRatio, nearestDataset, parseServeGenTrace, readDatasetJson, ServeGenError, type DatasetWindow, type TraceRow } from './parse.js';

export interface ServeGenConversion {
  /** "reasoning" for reasoning data, else "" (left to the spec). */
  readonly category: string;
  readonly cohorts: CohortSpec[];
}

const DAY_SEC = 86400;

interface Window {
  readonly startUs: number;
  readonly rate: number;
  readonly arrival: ArrivalSpec;
}

interface Chunk {
  readonly id: string;
  readonly windows: Window[];
  readonly datasets: Map<number, DatasetWindow>;
}

/** A row's arrival: Gamma/Weibull with its cv and (both positive) shape and scale in µs; anything else Poisson. */
function arrivalOf(row: TraceRow): ArrivalSpec {
  const process = row.pattern.toLowerCase();
  if (process !== 'gamma' && process !== 'weibull') return { process: 'poisson', cv: null, shape: null, scale: null };
  const both = row.shape > 0 && row.scale > 0;
  return { process, cv: row.cv > 0 ? row.cv : null, shape: both ? row.shape : null, scale: both ? row.scale * 1e6 : null };
}

function fit(pdf: ReadonlyMap<number, number>, file: string, at: number, what: string): { mu: number; sigma: number } {
  try {
    return fitLognormal(pdf);
  } catch (e) {
    throw new ServeGenError(`${file}: cannot fit the ${what} distribution of window ${at}: ${(e as Error).message}`, file);
  }
}

export function datasetOf(c: ServeGenChunkFiles, dir: string, warn: (m: string) => void): Map<number, DatasetWindow> {
  const file = `${dir}/${datasetFileName(c.id)}`;
  if (c.dataset === null) throw new ServeGenError(`${file} is missing: every chunk-<id>-trace.csv needs its chunk-<id>-dataset.json`, file);
  return datasetWindows(readDatasetJson(c.dataset, file), file, warn);
}

/** A chunk's active windows (rate > 0 with a dataset at or before them); null when it has none. */
function loadChunk(c: ServeGenChunkFiles, dir: string, warn: (m: string) => void): Chunk | null {
  const traceFile = `${dir}/${traceFileName(c.id)}`;
  const { rows, skipped } = parseServeGenTrace(c.trace, traceFile);
  if (skipped > 0) warn(`${traceFile}: ${skipped} rows skipped (fewer than 4 columns start_s,rate,cv,pattern, or not numbers)`);
  const datasets = datasetOf(c, dir, warn);
  const windows: Window[] = [];
  const used = new Set<number>();
  for (const row of rows) {
    if (row.rate <= 0) continue;
    const key = nearestDataset(Math.trunc(row.startSec), datasets);
    if (key === null) continue;
    used.add(key);
    windows.push({ startUs: Math.trunc(row.startSec * 1e6), rate: row.rate, arrival: arrivalOf(row) });
  }
  if (windows.length === 0) return null;
  // The reference fits every dataset an active window uses here, so an unfittable one is an error.
  const file = `${dir}/${datasetFileName(c.id)}`;
  for (const key of [...used].sort((a, b) => a - b)) {
    const d = datasets.get(key)!;
    fit(d.input, file, key, 'input');
    fit(d.output, file, key, 'output');
  }
  return { id: c.id, windows, datasets };
}

/** Second of the day a window starts at (Go: int64 µs / 1e6, then % 86400). */
function timeOfDay(w: Window): number {
  return Math.trunc(w.startUs / 1e6) % DAY_SEC;
}

const lognormal = (mu: number, sigma: number): DistSpec => ({ type: 'lognormal', params: new Map([['mu', mu], ['sigma', sigma]]), file: '' });
const FALLBACK_INPUT: DistSpec = { type: 'gaussian', params: new Map([['mean', 512], ['std_dev', 128], ['min', 1], ['max', 32768]]), file: '' };
const FALLBACK_OUTPUT: DistSpec = { type: 'gaussian', params: new Map([['mean', 128], ['std_dev', 32], ['min', 1], ['max', 32768]]), file: '' };

/**
 * The lognormal fits at the dataset window nearest before `at`, averaged over the days it recurs and over the
 * chunks; and the cohort's rate, Σ over chunks of the mean rate of their windows at `at`. As in the reference,
 * a chunk with no dataset window at or before `at` (day one) adds neither fits nor rate.
 */
function lengthsAndRate(chunks: readonly Chunk[], at: number): { input: DistSpec; output: DistSpec; rate: number } {
  let muIn = 0;
  let sdIn = 0;
  let muOut = 0;
  let sdOut = 0;
  let n = 0;
  let rate = 0;
  for (const c of chunks) {
    const boundary = nearestDataset(at, c.datasets);
    if (boundary === null) continue;
    let mi = 0;
    let si = 0;
    let mo = 0;
    let so = 0;
    let count = 0;
    for (const ts of [...c.datasets.keys()].sort((a, b) => a - b)) {
      if (ts % DAY_SEC !== boundary % DAY_SEC) continue;
      const d = c.datasets.get(ts)!;
      // As in the reference, an input fit counts even when the output fit fails (only outputs are counted).
      try {
        const f = fitLognormal(d.input);
        mi += f.mu;
        si += f.sigma;
      } catch { /* skipped */ }
      try {
        const f = fitLognormal(d.output);
        mo += f.mu;
        so += f.sigma;
        count++;
      } catch { /* skipped */ }
    }
    if (count > 0) {
      muIn += mi / count;
      sdIn += si / count;
      muOut += mo / count;
      sdOut += so / count;
      n++;
    }
    let sum = 0;
    let windows = 0;
    for (const w of c.windows) {
      if (timeOfDay(w) !== at) continue;
      sum += w.rate;
      windows++;
    }
    if (windows > 0) rate += sum / windows;
  }
  if (n === 0) return { input: FALLBACK_INPUT, output: FALLBACK_OUTPUT, rate };
  return { input: lognormal(muIn / n, sdIn / n), output: lognormal(muOut / n, sdOut / n), rate };
}

/** Majority process (ties to gamma) with averaged cv/shape/scale over the chunks' windows at `at`. */
function averagedArrival(chunks: readonly Chunk[], at: number): ArrivalSpec {
  let cv = 0;
  let shape = 0;
  let scale = 0;
  let n = 0;
  let gamma = 0;
  let weibull = 0;
  for (const c of chunks) {
    for (const w of c.windows) {
      if (timeOfDay(w) !== at) continue;
      if (w.arrival.cv !== null) cv += w.arrival.cv;
      if (w.arrival.shape !== null) shape += w.arrival.shape;
      if (w.arrival.scale !== null) scale += w.arrival.scale;
      n++;
      if (w.arrival.process === 'gamma') gamma++;
      else if (w.arrival.process === 'weibull') weibull++;
    }
  }
  if (n === 0) return { process: '', cv: null, shape: null, scale: null };
  return { process: weibull > gamma ? 'weibull' : 'gamma', cv: cv / n, shape: shape / n, scale: scale / n };
}

/**
 * --semantics corrected: the majority process over the cohort's windows at `at` (ties: gamma, weibull, then
 * Poisson), Poisson as Poisson; cv, shape and scale averaged over the windows of that process that give them
 * (left unset when none does: a gamma without cv is Poisson, one without shape/scale is fitted from cv alone).
 */
function majorityArrival(chunks: readonly Chunk[], at: number): ArrivalSpec {
  const windows = chunks.flatMap((c) => c.windows.filter((w) => timeOfDay(w) === at));
  const count = (p: string): number => windows.filter((w) => w.arrival.process === p).length;
  const gamma = count('gamma');
  const weibull = count('weibull');
  const process = gamma >= weibull ? 'gamma' : 'weibull';
  if (count('poisson') > Math.max(gamma, weibull)) return { process: 'poisson', cv: null, shape: null, scale: null };
  const mine = windows.filter((w) => w.arrival.process === process);
  const mean = (get: (a: ArrivalSpec) => number | null): number | null => {
    const xs = mine.map((w) => get(w.arrival)).filter((x): x is number => x !== null);
    return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const cv = mean((a) => a.cv);
  const shape = mean((a) => a.shape);
  const scale = mean((a) => a.scale);
  const both = shape !== null && scale !== null;
  if (cv === null && !both) return { process: 'poisson', cv: null, shape: null, scale: null };
  return { process, cv, shape: both ? shape : null, scale: both ? scale : null };
}

/**
 * The averaged arrival must describe a Gamma/Weibull process (the reference writes cv, shape and scale even when
 * no row had them, and the spec is then invalid): say which rows and columns are missing.
 */
function checkArrival(id: string, a: ArrivalSpec, group: readonly Chunk[], at: number, dir: string): void {
  const files = group.map((c) => `${dir}/${traceFileName(c.id)}`).join(', ');
  if (a.cv === 0) {
    throw new ServeGenError(`cohort ${id}: no trace row at ${at} s of ${files} has a Gamma or Weibull pattern with a positive cv (columns 3 and 4); ServeGen rows are start_s,rate,cv,pattern,shape,scale and Poisson-only windows cannot be converted`, dir);
  }
  if (a.shape === 0 || a.scale === 0) {
    throw new ServeGenError(`cohort ${id}: the trace rows at ${at} s of ${files} have no positive shape and scale (columns 5 and 6); ServeGen rows are start_s,rate,cv,pattern,shape,scale`, dir);
  }
}

const PERIODS = [['midnight', 0], ['morning', 28800], ['afternoon', 50400]] as const;

/**
 * The cohorts of a ServeGen directory.
 * @param chunks the directory's `chunk-*-trace.csv` files in byte order of their names, with their datasets.
 * @throws ServeGenError when nothing usable is found or a file is malformed.
 */
export function convertServeGenChunks(chunks: readonly ServeGenChunkFiles[], o: ServeGenOptions): ServeGenConversion {
  const warn = o.warn ?? ((): void => undefined);
  const windowSec = o.windowDurationSecs > 0 ? o.windowDurationSecs : WINDOW_SEC;
  const drainSec = o.drainTimeoutSecs < 0 ? 180 : o.drainTimeoutSecs;
  const rng = new GoRand(o.seed);
  const first = chunks[0];
  if (first !== undefined && first.dataset !== null) {
    let reasoning = false;
    try {
      reasoning = hasReasonRatio(readDatasetJson(first.dataset, datasetFileName(first.id)));
    } catch {
      warn(`${o.dir}/${datasetFileName(first.id)}: not valid JSON; treating the data as non-reasoning`);
    }
    if (reasoning) return { category: 'reasoning', cohorts: reasoningCohorts(chunks, { ...o, windowDurationSecs: windowSec }, rng, warn) };
  }
  if (chunks.length === 0) throw new ServeGenError(`no chunk-*-trace.csv files found in ${o.dir}; a ServeGen directory holds chunk-<id>-trace.csv and chunk-<id>-dataset.json pairs`, o.dir);

  const loaded: Chunk[] = [];
  for (const c of chunks) {
    const chunk = loadChunk(c, o.dir, warn);
    if (chunk !== null) loaded.push(chunk);
  }
  if (loaded.length === 0) throw new ServeGenError(`no valid chunks found in ${o.dir}: no trace row has rate > 0 with a dataset window at or before it (rows need start_s,rate,cv,pattern[,shape,scale])`, o.dir);

  const selected = PERIODS.map(([, spanStart]) => spanStart + rng.intn(3) * WINDOW_SEC);
  const cohorts: CohortSpec[] = [];
  PERIODS.forEach(([name], p) => {
    const at = selected[p]!;
    const members = loaded.filter((c) => c.windows.some((w) => timeOfDay(w) === at));
    if (members.length === 0) return;
    rng.shuffle(members.length, (i, j) => {
      const t = members[i]!;
      members[i] = members[j]!;
      members[j] = t;
    });
    const groups = new Map<string, Chunk[]>();
    members.forEach((c, i) => {
      const cls = SLO_CLASSES[i % SLO_CLASSES.length]!;
      groups.set(cls, [...(groups.get(cls) ?? []), c]);
    });
    for (const cls of [...groups.keys()].sort()) {
      const group = groups.get(cls)!;
      const id = `${name}-${cls}`;
      const { rate, ...lengths } = lengthsAndRate(group, at);
      const arrival = o.corrected === true ? majorityArrival(group, at) : averagedArrival(group, at);
      if (rate <= 0) {
        warn(`skipping cohort ${id}: zero rate at the selected window ${at} s`);
        continue;
      }
      if (o.corrected !== true) checkArrival(id, arrival, group, at, o.dir);
      cohorts.push(cohortOf(id, group.length, cls, arrival, lengths, { startTimeUs: p * (windowSec + drainSec) * 1e6, durationUs: windowSec * 1e6, traceRate: rate }));
    }
  });
  if (cohorts.length === 0) throw new ServeGenError(`no active cohorts generated from ${o.dir} (every selected window had zero rate)`, o.dir);
  return { category: '', cohorts };
}
