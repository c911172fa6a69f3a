/**
 * ServeGen reasoning data (the reference's `buildReasoningCohorts`): no periods. The one 600 s window of day one
 * that most chunks are active in is selected; chunks with a usable `reason_ratio` PMF are shuffled and dealt to
 * the five SLO classes; each class becomes one open-loop single-round cohort (Poisson arrivals, a spike of the
 * period length at t = 0 with the summed rate of its chunks in that window), lengths fitted as for language data,
 * and the reason-ratio PMF averaged over all chunks as an empirical distribution over percentages.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import type { DistSpec, CohortSpec } from '../spec/types.js';
import { byteOrder, cohortOf, datasetFileName, SLO_CLASSES, traceFileName, WINDOW_SEC, type ServeGenChunkFiles, type ServeGenOptions } from './common.js';
import { datasetWindows, fitLognormal, nearestDataset, parseServeGenRatioPdf, parseServeGenTrace, readDatasetJson, ServeGenError, type TraceRow } from './parse.js';

const WINDOWS_PER_DAY = 86400 / WINDOW_SEC;

function rowsOrNull(c: ServeGenChunkFiles, dir: string): TraceRow[] | null {
  try {
    return parseServeGenTrace(c.trace, `${dir}/${traceFileName(c.id)}`).rows;
  } catch {
    return null;
  }
}

/** Index of the day-one window with the most active rows over all chunks (first of equals). */
function bestWindow(chunks: readonly ServeGenChunkFiles[], dir: string): number {
  const coverage = new Map<number, number>();
  for (const c of chunks) {
    for (const row of rowsOrNull(c, dir) ?? []) {
      const idx = Math.trunc(row.startSec / WINDOW_SEC);
      if (row.rate > 0) coverage.set(idx, (coverage.get(idx) ?? 0) + 1);
    }
  }
  let best = 0;
  let max = 0;
  for (let i = 0; i < WINDOWS_PER_DAY; i++) {
    const n = coverage.get(i) ?? 0;
    if (n > max) {
      max = n;
      best = i;
    }
  }
  if (max === 0) throw new ServeGenError(`${dir}: no trace row has rate > 0 in any window of the first day (or no trace file parses)`, dir);
  return best;
}

/** The rate of the chunk's first row starting at `startSec` (0 when none). */
function rateAt(c: ServeGenChunkFiles, dir: string, startSec: number): number {
  const row = (rowsOrNull(c, dir) ?? []).find((r) => Math.trunc(r.startSec) === startSec);
  return row?.rate ?? 0;
}

/** The first window (key order) with a reason_ratio PMF that parses. */
function reasonRatioOf(c: ServeGenChunkFiles, dir: string, warn: (m: string) => void): Map<number, number> | null {
  if (c.dataset === null) {
    warn(`skipping chunk ${c.id}: ${dir}/${datasetFileName(c.id)} is missing`);
    return null;
  }
  let raw;
  try {
    raw = readDatasetJson(c.dataset, `${dir}/${datasetFileName(c.id)}`);
  } catch (e) {
    warn(`skipping chunk ${c.id}: ${(e as Error).message}`);
    return null;
  }
  for (const key of Object.keys(raw).sort(byteOrder)) {
    const text = raw[key]!['reason_ratio'];
    if (text === undefined || text === '' || text === '{}') continue;
    try {
      return parseServeGenRatioPdf(text);
    } catch {
      /* the next window */
    }
  }
  warn(`skipping chunk ${c.id}: no valid reason_ratio found`);
  return null;
}

/** Element-wise mean of the PMFs, keyed by whole percent (clamped to 0..100). */
function averagePmf(pmfs: readonly Map<number, number>[]): DistSpec {
  const sums = new Map<number, number>();
  for (const pmf of pmfs) {
    for (const ratio of [...pmf.keys()].sort((a, b) => a - b)) {
      const pct = Math.min(100, Math.max(0, Math.trunc(ratio * 100)));
      sums.set(pct, (sums.get(pct) ?? 0) + pmf.get(ratio)!);
    }
  }
  const params = new Map<string, number>();
  for (const pct of [...sums.keys()].sort((a, b) => a - b)) params.set(String(pct), sums.get(pct)! / pmfs.length);
  return { type: 'empirical', params, file: '' };
}

/** Fitted lengths at the dataset window nearest before `at`, averaged over days and chunks; null when none fit. */
function fittedLengths(chunks: readonly ServeGenChunkFiles[], o: ServeGenOptions, at: number, warn: (m: string) => void): { input: DistSpec; output: DistSpec } | null {
  const acc = { muIn: 0, sdIn: 0, muOut: 0, sdOut: 0 };
  let n = 0;
  for (const c of chunks) {
    let windows;
    try {
      if (c.dataset === null) throw new Error('missing');
      const file = `${o.dir}/${datasetFileName(c.id)}`;
      windows = datasetWindows(readDatasetJson(c.dataset, file), file, warn);
    } catch (e) {
      warn(`skipping chunk ${c.id}: dataset load failed: ${(e as Error).message}`);
      continue;
    }
    const boundary = nearestDataset(at, windows);
    if (boundary === null) continue;
    const part = { muIn: 0, sdIn: 0, muOut: 0, sdOut: 0 };
    let nin = 0;
    let nout = 0;
    for (const ts of [...windows.keys()].sort((a, b) => a - b)) {
      if (ts % 86400 !== boundary % 86400) continue;
      const d = windows.get(ts)!;
      try {
        const f = fitLognormal(d.input);
        part.muIn += f.mu;
        part.sdIn += f.sigma;
        nin++;
      } catch { /* skipped */ }
      try {
        const f = fitLognormal(d.output);
        part.muOut += f.mu;
        part.sdOut += f.sigma;
        nout++;
      } catch { /* skipped */ }
    }
    if (nin > 0 && nout > 0) {
      acc.muIn += part.muIn / nin;
      acc.sdIn += part.sdIn / nin;
      acc.muOut += part.muOut / nout;
      acc.sdOut += part.sdOut / nout;
      n++;
    }
  }
  if (n === 0) return null;
  const ln = (mu: number, sigma: number): DistSpec => ({ type: 'lognormal', params: new Map([['mu', mu], ['sigma', sigma]]), file: '' });
  return { input: ln(acc.muIn / n, acc.sdIn / n), output: ln(acc.muOut / n, acc.sdOut / n) };
}

export function reasoningCohorts(files: readonly ServeGenChunkFiles[], o: ServeGenOptions, rng: GoRand, warn: (m: string) => void): CohortSpec[] {
  const at = bestWindow(files, o.dir) * WINDOW_SEC;
  const usable: { c: ServeGenChunkFiles; pmf: Map<number, number> }[] = [];
  for (const c of files) {
    const pmf = reasonRatioOf(c, o.dir, warn);
    if (pmf !== null && pmf.size > 0) usable.push({ c, pmf });
  }
  if (usable.length === 0) throw new ServeGenError(`${o.dir}: no chunk has a valid reason_ratio PMF`, o.dir);
  const ratio = averagePmf(usable.map((u) => u.pmf));
  if (files.reduce((s, c) => s + rateAt(c, o.dir, at), 0) <= 0) throw new ServeGenError(`${o.dir}: no chunk is active in the selected window (${at} s)`, o.dir);

  const shuffled = usable.map((u) => u.c);
  rng.shuffle(shuffled.length, (i, j) => {
    const t = shuffled[i]!;
    shuffled[i] = shuffled[j]!;
    shuffled[j] = t;
  });
  const groups = new Map<string, ServeGenChunkFiles[]>();
  shuffled.forEach((c, i) => {
    const cls = SLO_CLASSES[i % SLO_CLASSES.length]!;
    groups.set(cls, [...(groups.get(cls) ?? []), c]);
  });
  const cohorts: CohortSpec[] = [];
  for (const cls of [...SLO_CLASSES].sort()) {
    const group = groups.get(cls);
    if (group === undefined) continue;
    const id = `reasoning-${cls}`;
    const rate = group.reduce((s, c) => s + rateAt(c, o.dir, at), 0);
    if (rate <= 0) {
      warn(`skipping cohort ${id}: no active chunks at the selected window`);
      continue;
    }
    const lengths = fittedLengths(group, o, at, warn);
    if (lengths === null) {
      warn(`skipping cohort ${id}: no valid input/output distributions`);
      continue;
    }
    const cohort = cohortOf(id, group.length, cls, { process: 'poisson', cv: null, shape: null, scale: null }, lengths, { startTimeUs: 0, durationUs: o.windowDurationSecs * 1e6, traceRate: rate });
    cohort.closedLoop = false;
    cohort.reasoning = { reasonRatioDist: ratio, multiTurn: { maxRounds: 1, thinkTimeUs: 0, contextGrowth: '', singleSession: false, toolCall: null } };
    cohorts.push(cohort);
  }
  if (cohorts.length === 0) throw new ServeGenError(`${o.dir}: no reasoning cohorts generated (every class had zero rate or no fittable lengths)`, o.dir);
  return cohorts;
}
