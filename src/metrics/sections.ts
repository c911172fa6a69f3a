/**
 * Text bodies of the optional breakdown sections of the reference stdout (cmd/root.go print* functions),
 * each null when the reference prints no such section. Keys arrive already in Go's sorted order.
 */
import type { ModelMetrics, SessionMetrics, SloMetrics, TenantMetrics } from './breakdowns.js';
import { computePerModelMetrics, computePerSloDistributions, computePerTenantMetrics, computeSessionMetrics, jainFairnessIndex } from './breakdowns.js';
import type { Distribution, RequestOutcomeView } from './cluster-metrics.js';
import { goFixed, goSortedKeys } from '../gocompat/go-format.js';
import { perModelData, perSloData, perTenantData, sessionData } from './section-data.js';

const f2 = (x: number): string => goFixed(x, 2);

/**
 * `=== Per-SLO Metrics ===` (values in ticks). A single class is printed only when goodput targets are
 * configured, so the classes gating goodput are always visible.
 */
/**
 * How latencies print: the reference prints the Per-SLO and Per-Model sections in µs without a unit while the
 * Session section prints ms; corrected semantics print all three in ms, marked.
 */
interface LatencyUnit {
  readonly scale: number;
  readonly suffix: string;
}
const TICKS: LatencyUnit = { scale: 1, suffix: '' };
const MS: LatencyUnit = { scale: 1e3, suffix: ' ms' };

export function perSloLines(slo: ReadonlyMap<string, SloMetrics>, goodputConfigured: boolean, inMs = false): string[] | null {
  if (slo.size === 0 || (slo.size === 1 && !goodputConfigured)) return null;
  const u = inMs ? MS : TICKS;
  const v = (x: number): string => f2(x / u.scale);
  const lines: string[] = [];
  for (const cls of goSortedKeys(slo)) {
    const m = slo.get(cls) as SloMetrics;
    lines.push(
      `  ${cls}:`,
      `    TTFT: mean=${v(m.ttft.mean)} p99=${v(m.ttft.p99)}${u.suffix} (n=${m.ttft.count})`,
      `    ITL:  mean=${v(m.itl.mean)} p99=${v(m.itl.p99)}${u.suffix} (n=${m.itl.count})`,
      `    E2E:  mean=${v(m.e2e.mean)} p99=${v(m.e2e.p99)}${u.suffix} (n=${m.e2e.count})`,
    );
  }
  return lines;
}

/** `=== Per-Model Metrics ===` (latencies in ticks, or ms with `inMs`). */
export function perModelLines(models: ReadonlyMap<string, ModelMetrics> | null, inMs = false): string[] | null {
  if (!models || models.size === 0) return null;
  const u = inMs ? MS : TICKS;
  const v = (x: number): string => f2(x / u.scale);
  const lines: string[] = [];
  for (const name of goSortedKeys(models)) {
    const m = models.get(name) as ModelMetrics;
    lines.push(
      `  ${name}:`,
      `    TTFT: p50=${v(m.ttft.p50)} p99=${v(m.ttft.p99)}${u.suffix} (n=${m.ttft.count})`,
      `    E2E:  p50=${v(m.e2e.p50)} p99=${v(m.e2e.p99)}${u.suffix} (n=${m.e2e.count})`,
      `    Throughput: ${f2(m.throughputRps)} req/s, ${f2(m.tokensPerSec)} tok/s`,
    );
  }
  return lines;
}

/** `=== Per-Tenant Metrics ===`, ending with Jain's index over the tenants' served tokens. */
export function perTenantLines(tenants: ReadonlyMap<string, TenantMetrics> | null): string[] | null {
  if (!tenants || tenants.size === 0) return null;
  const lines: string[] = [];
  const tokens = new Map<string, number>();
  for (const id of goSortedKeys(tenants)) {
    const t = tenants.get(id) as TenantMetrics;
    lines.push(`  ${id}: requests=${t.completedRequests}, tokens=${t.totalTokensServed}`);
    tokens.set(id, t.totalTokensServed);
  }
  lines.push(`  Jain Fairness Index: ${goFixed(jainFairnessIndex(tokens), 4)}`);
  return lines;
}

function sessionDistLine(label: string, d: Distribution): string {
  return `  ${label} mean=${f2(d.mean)} p50=${f2(d.p50)} p95=${f2(d.p95)} p99=${f2(d.p99)} ms (n=${d.count})`;
}

/** `=== Session Metrics ===` (ms); each distribution line only when it has samples. */
export function sessionLines(s: SessionMetrics | null): string[] | null {
  if (!s) return null;
  const lines = [`  Sessions: ${s.sessionCount}`];
  if (s.ttftCold.count > 0) lines.push(sessionDistLine('TTFT cold (round 0):', s.ttftCold));
  if (s.ttftWarm.count > 0) lines.push(sessionDistLine('TTFT warm (round\u22651):', s.ttftWarm));
  if (s.sessionDuration.count > 0) lines.push(sessionDistLine('Session duration:   ', s.sessionDuration));
  return lines;
}

/** One breakdown section: its reference text and the same figures as data (the JSON output's). */
export interface BreakdownSection {
  readonly header: string;
  readonly key: string;
  readonly lines: string[];
  readonly data: object;
}

/**
 * The four breakdown sections in the reference's print order, leaving out those it does not print.
 * `corrected` (--semantics corrected): latencies in ms throughout, TTFT over completed requests, generated
 * rather than planned token counts.
 */
export function breakdownSections(
  requests: readonly RequestOutcomeView[],
  simEndedTime: number,
  goodputConfigured: boolean,
  corrected = false,
): BreakdownSection[] {
  const out: BreakdownSection[] = [];
  const add = <T>(header: string, key: string, value: T | null, lines: (v: T) => string[] | null, data: (v: T) => object): void => {
    if (value === null) return;
    const l = lines(value);
    if (l !== null) out.push({ header, key, lines: l, data: data(value) });
  };
  add('Per-SLO Metrics', 'per_slo_metrics', computePerSloDistributions(requests, corrected), (v) => perSloLines(v, goodputConfigured, corrected), perSloData);
  add('Per-Model Metrics', 'per_model_metrics', computePerModelMetrics(requests, simEndedTime, corrected), (v) => perModelLines(v, corrected), perModelData);
  add('Per-Tenant Metrics', 'per_tenant_metrics', computePerTenantMetrics(requests, corrected), perTenantLines, perTenantData);
  add('Session Metrics', 'session_metrics', computeSessionMetrics(requests, corrected), sessionLines, sessionData);
  return out;
}
