/**
 * `blis calibrate --adapter-reference` (the reference's LoRA fidelity mode): BLIS aggregates against a Digital
 * Twin reference for one model configuration. The reference file holds the DT's workload-aggregate mean TTFT
 * (ms) and output throughput (tokens/s) with adapters (`adapter_aware`) and without (`adapter_blind`); BLIS's
 * side comes from `run`/`replay --metrics-path` files (mean TTFT, total output tokens / simulated duration).
 * Per metric: the absolute percentage error |BLIS - DT| / |DT| against a threshold and, when a blind BLIS run
 * is given, the same error of the aware/blind ratios (which cancels the two simulators' different bases).
 */
import { parseJson } from '../format/json.js';
import { CalibrateInputError } from './io.js';

export interface DtAggregate {
  readonly ttftMs: number;
  readonly outputThroughput: number;
}

export interface DtReference {
  readonly model: string;
  readonly aware: DtAggregate;
  readonly blind: DtAggregate;
}

export interface BlisAggregate {
  readonly ttftMs: number;
  readonly outputThroughput: number;
}

function obj(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CalibrateInputError(`${where} must be a JSON object`);
  return v as Record<string, unknown>;
}

function num(o: Record<string, unknown>, key: string, where: string): number {
  const v = o[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number') throw new CalibrateInputError(`${where}.${key} must be a number, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * A DT reference file (`{model, adapter_aware: {ttft, output_throughput, ...}, adapter_blind: {...}}`).
 * @throws CalibrateInputError unless the aware TTFT and throughput are positive.
 */
export function parseDtReference(text: string, file: string): DtReference {
  const o = obj(parseJson(text, file, { code: 'calibrate-input' }), file);
  const side = (key: string): DtAggregate => {
    const s = o[key] === undefined || o[key] === null ? {} : obj(o[key], `${file}: ${key}`);
    return { ttftMs: num(s, 'ttft', `${file}: ${key}`), outputThroughput: num(s, 'output_throughput', `${file}: ${key}`) };
  };
  const model = o['model'];
  const ref = { model: typeof model === 'string' ? model : '', aware: side('adapter_aware'), blind: side('adapter_blind') };
  if (!(ref.aware.ttftMs > 0) || !(ref.aware.outputThroughput > 0)) {
    throw new CalibrateInputError(`adapter reference ${file}: adapter_aware ttft and output_throughput must be positive (got ttft=${ref.aware.ttftMs} output_throughput=${ref.aware.outputThroughput})`);
  }
  return ref;
}

/** BLIS's aggregate from a metrics file (`ttft_mean_ms`, `total_output_tokens` / `vllm_estimated_duration_s`). */
export function parseBlisAggregate(text: string, file: string, flag: string): BlisAggregate {
  const o = obj(parseJson(text, file, { code: 'calibrate-input' }), `${flag} ${file}`);
  const dur = num(o, 'vllm_estimated_duration_s', `${flag} ${file}`);
  if (!(dur > 0)) throw new CalibrateInputError(`${flag} ${file}: vllm_estimated_duration_s must be > 0 to compute throughput, got ${dur}`);
  const tokens = num(o, 'total_output_tokens', `${flag} ${file}`);
  if (!Number.isSafeInteger(tokens)) throw new CalibrateInputError(`${flag} ${file}: total_output_tokens must be an integer, got ${tokens}`);
  return { ttftMs: num(o, 'ttft_mean_ms', `${flag} ${file}`), outputThroughput: tokens / dur };
}

export interface AdapterMetricComparison {
  readonly metric: 'ttft' | 'throughput';
  readonly dtValue: number;
  readonly blisValue: number;
  /** |blis - dt| / |dt|; +Infinity when the DT value is 0. */
  readonly mape: number;
  readonly within: boolean;
  /** The error of the aware/blind ratios; null without a blind run or with a zero blind value. */
  readonly deltaMape: number | null;
}

export interface AdapterReferenceReport {
  readonly model: string;
  readonly threshold: number;
  readonly metrics: AdapterMetricComparison[];
  readonly allWithin: boolean;
}

function ape(blis: number, dt: number): number {
  return dt === 0 ? Infinity : Math.abs(blis - dt) / Math.abs(dt);
}

export function compareAdapterReference(ref: DtReference, aware: BlisAggregate, blind: BlisAggregate | null, threshold: number): AdapterReferenceReport {
  const rows = [
    { metric: 'ttft' as const, dt: ref.aware.ttftMs, blis: aware.ttftMs, dtBase: ref.blind.ttftMs, blisBase: blind?.ttftMs ?? null },
    { metric: 'throughput' as const, dt: ref.aware.outputThroughput, blis: aware.outputThroughput, dtBase: ref.blind.outputThroughput, blisBase: blind?.outputThroughput ?? null },
  ];
  const metrics = rows.map((r): AdapterMetricComparison => {
    const mape = ape(r.blis, r.dt);
    const deltaMape = r.blisBase !== null && r.dtBase !== 0 && r.blisBase !== 0 ? ape(r.blis / r.blisBase, r.dt / r.dtBase) : null;
    return { metric: r.metric, dtValue: r.dt, blisValue: r.blis, mape, within: mape <= threshold, deltaMape };
  });
  return { model: ref.model, threshold, metrics, allWithin: metrics.every((m) => m.within) };
}

/** The report as the reference writes it (its JSON field names and order). */
export function adapterReportToJson(r: AdapterReferenceReport): Record<string, unknown> {
  const finite = (v: number, what: string): number => {
    if (!Number.isFinite(v)) throw new CalibrateInputError(`the adapter reference's ${what} is 0, so the error is infinite; the report cannot be written`);
    return v;
  };
  return {
    model: r.model,
    mape_threshold: r.threshold,
    metrics: r.metrics.map((m) => ({
      metric: m.metric,
      dt_value: m.dtValue,
      blis_value: m.blisValue,
      mape: finite(m.mape, `${m.metric} (adapter_aware)`),
      within_threshold: m.within,
      ...(m.deltaMape === null ? {} : { delta_mape: finite(m.deltaMape, `${m.metric} ratio`) }),
    })),
    all_within_threshold: r.allWithin,
  };
}

/** Summary lines (stderr) and warnings, as the reference logs them. */
export function adapterReportLines(r: AdapterReferenceReport, blindGiven: boolean): { info: string[]; warnings: string[] } {
  const info: string[] = [];
  const warnings: string[] = [];
  for (const m of r.metrics) {
    let line = `  ${m.metric.padEnd(11)} BLIS=${m.blisValue.toFixed(2)} DT=${m.dtValue.toFixed(2)} MAPE=${(m.mape * 100).toFixed(1)}% [${m.within ? 'WITHIN' : 'EXCEEDS'}]`;
    if (m.deltaMape !== null) line += ` delta-normalized MAPE=${(m.deltaMape * 100).toFixed(1)}%`;
    (m.within ? info : warnings).push(line);
    if (blindGiven && m.deltaMape === null) warnings.push(`delta-normalized diagnostic skipped for "${m.metric}": the DT reference's adapter_blind ${m.metric} or the BLIS blind aggregate is zero`);
  }
  if (!r.allWithin) warnings.push(`not every metric of ${r.model} is within MAPE <= ${(r.threshold * 100).toFixed(0)}%: that dimension's fidelity is unsupported for this configuration`);
  return { info, warnings };
}
