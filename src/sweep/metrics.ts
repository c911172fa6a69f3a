/**
 * A row's metrics: `simulate()`'s cluster metrics (what `blis run` prints as `simulation_metrics`) flattened to
 * numbers, nested sections joined with dots (`per_class.critical.slo_attainment`). Strings (the instance id)
 * are left out; a non-finite number becomes null (as JSON would write it).
 */

/** Always present in the cluster metrics. */
const ALWAYS = [
  'completed_requests', 'still_queued', 'still_running', 'injected_requests', 'total_input_tokens', 'total_output_tokens',
  'vllm_estimated_duration_s', 'responses_per_sec', 'tokens_per_sec', 'e2e_mean_ms', 'e2e_p90_ms', 'e2e_p95_ms', 'e2e_p99_ms',
  'ttft_mean_ms', 'ttft_p90_ms', 'ttft_p95_ms', 'ttft_p99_ms', 'itl_mean_ms', 'itl_p90_ms', 'itl_p95_ms', 'itl_p99_ms',
  'scheduling_delay_p99_ms', 'preemption_count', 'dropped_unservable', 'length_capped_requests', 'timed_out_requests',
];

/**
 * Left out of the reference's JSON when zero (`omitempty`): a row without one of them had 0. The goodput
 * fields exist only when SLO targets are set.
 */
export const OMITTED_WHEN_ZERO: readonly string[] = ['kv_allocation_failures', 'goodput_rps', 'slo_attainment'];

/** Names an objective may use: the fixed fields, and any per-class field. */
export function isKnownMetric(name: string): boolean {
  return ALWAYS.includes(name) || OMITTED_WHEN_ZERO.includes(name) || /^per_class\.[^.]+\.[a-z0-9_.]+$/.test(name);
}

export const KNOWN_METRICS: readonly string[] = [...ALWAYS, ...OMITTED_WHEN_ZERO, 'per_class.<class>.<field>'];

export function flattenMetrics(m: Readonly<Record<string, unknown>>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  const walk = (o: Readonly<Record<string, unknown>>, prefix: string): void => {
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === 'number') out[prefix + k] = Number.isFinite(v) ? v : null;
      else if (v !== null && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, `${prefix}${k}.`);
    }
  };
  walk(m, '');
  return out;
}

/** A metric's value in a successful row for ranking: an omitted zero counts as 0; otherwise null when absent. */
export function metricValue(metrics: Readonly<Record<string, number | null>>, name: string): number | null {
  const v = metrics[name];
  if (v !== undefined) return v;
  return OMITTED_WHEN_ZERO.includes(name) ? 0 : null;
}
