/**
 * The time-series options (`--timeseries-path`, `--timeseries-interval-us`, `--timeseries-format`), the
 * sampler they attach to a cluster, and the file formats: CSV or JSON lines, one row per (time, scope) where
 * scope is `cluster` or an instance id. Counters are per-row deltas (see cluster/timeseries.ts).
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import { scalingProbes } from '../cluster/scaling-series.js';
import { TimeSeriesSampler, type SeriesProbe, type TimeSeriesData } from '../cluster/timeseries.js';
import { ConfigError } from './config-error.js';
import type { FlagValues } from './options.js';

export type TimeSeriesFormat = 'csv' | 'jsonl';

/** Automatic sampling: start at 1 ms and double to keep at most this many rows. */
export const AUTO_INTERVAL_US = 1000;
export const AUTO_MAX_ROWS = 1024;
/** A fixed interval keeps at most this many rows; past that it doubles too (with a warning). */
export const FIXED_MAX_ROWS = 100_000;

export interface TimeSeriesRequest {
  readonly intervalUs: number;
  readonly maxRows: number;
  /** The file to write ('' = none) and its format. */
  readonly path: string;
  readonly format: TimeSeriesFormat;
  /** The interval was given explicitly. */
  readonly fixed: boolean;
}

/** The time-series options; null when nothing asks for series (`force`: a report needs them). */
export function resolveTimeSeries(f: FlagValues, force: boolean): TimeSeriesRequest | null {
  const interval = f.int('timeseries-interval-us');
  if (interval < 0) throw new ConfigError('bad-flag', `--timeseries-interval-us must be >= 0 (0 = automatic), got ${interval}`);
  const path = f.str('timeseries-path');
  const fmt = f.str('timeseries-format');
  if (fmt !== 'auto' && fmt !== 'csv' && fmt !== 'jsonl') throw new ConfigError('bad-flag', `--timeseries-format must be auto, csv or jsonl, got "${fmt}"`);
  let format: TimeSeriesFormat = 'csv';
  if (fmt !== 'auto') format = fmt;
  else if (path !== '') {
    if (/\.csv$/i.test(path)) format = 'csv';
    else if (/\.(jsonl|ndjson)$/i.test(path)) format = 'jsonl';
    else throw new ConfigError('bad-flag', `--timeseries-path: cannot tell the format of "${path}" from its extension; name it .csv or .jsonl, or pass --timeseries-format csv|jsonl`);
  }
  if (interval === 0 && path === '' && !force) return null;
  return interval > 0
    ? { intervalUs: interval, maxRows: FIXED_MAX_ROWS, path, format, fixed: true }
    : { intervalUs: AUTO_INTERVAL_US, maxRows: AUTO_MAX_ROWS, path, format, fixed: false };
}

/** Attaches a sampler to `cs` (before it runs). */
export function attachSampler(cs: ClusterSimulator, req: TimeSeriesRequest, outputTokenProcessingUs: number, probes: readonly SeriesProbe[] = []): TimeSeriesSampler {
  const s = new TimeSeriesSampler(cs, { intervalUs: req.intervalUs, maxRows: req.maxRows, outputTokenProcessingUs, probes: [...scalingProbes(cs), ...probes] });
  cs.sampler = s;
  return s;
}

/** Columns in file order: every column any scope has, cluster-only ones last. */
function fileColumns(ts: TimeSeriesData): string[] {
  const inst = ts.instances.length > 0 ? Object.keys((ts.instances[0] as { values: Record<string, unknown> }).values) : [];
  const rest = Object.keys(ts.cluster).filter((k) => !inst.includes(k)).sort();
  return [...inst, ...rest];
}

interface Row {
  readonly time: number;
  readonly scope: string;
  readonly values: Readonly<Record<string, readonly number[]>>;
  readonly index: number;
}

/** Rows in time order; at one time the cluster row first, then instances in cluster order. */
function rows(ts: TimeSeriesData): Row[] {
  const out: Row[] = [];
  ts.times.forEach((time, k) => {
    out.push({ time, scope: 'cluster', values: ts.cluster, index: k });
    for (const s of ts.instances) {
      const j = k - s.firstRow;
      const len = (Object.values(s.values)[0] ?? []).length;
      if (j >= 0 && j < len) out.push({ time, scope: s.id, values: s.values, index: j });
    }
  });
  return out;
}

export function formatTimeSeries(ts: TimeSeriesData, format: TimeSeriesFormat): string {
  const cols = fileColumns(ts);
  const all = rows(ts);
  if (format === 'jsonl') {
    return all
      .map((r) => {
        const o: Record<string, number | string> = { time_us: r.time, scope: r.scope };
        for (const c of cols) {
          const v = r.values[c];
          if (v !== undefined) o[c] = v[r.index] as number;
        }
        return `${JSON.stringify(o)}\n`;
      })
      .join('');
  }
  let s = `time_us,scope,${cols.join(',')}\n`;
  for (const r of all) {
    s += `${r.time},${csvField(r.scope)}`;
    for (const c of cols) {
      const v = r.values[c];
      s += v === undefined ? ',' : `,${v[r.index] as number}`;
    }
    s += '\n';
  }
  return s;
}

function csvField(v: string): string {
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}
