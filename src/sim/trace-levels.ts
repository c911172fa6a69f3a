/**
 * The `--trace-level` values, apart so that the option table (options.ts) and the policy resolver
 * (resolve-policies.ts) both import them and not each other.
 */

/** `--trace-level`: minimal = summary metrics only (as none); decisions adds policy decisions and anomalies; full adds batch formations and preemptions. */
export const TRACE_LEVELS = ['none', 'minimal', 'decisions', 'full'] as const;
export type TraceLevel = (typeof TRACE_LEVELS)[number];
