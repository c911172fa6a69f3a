/**
 * Trace summarisation for LLM reflection (policy-search-design §11): turns finished runs (scenarios × seeds)
 * into a compact, actionable text — `## Outcome`, `## Key Issues`, `## Counterfactual Analysis`,
 * `## Worst Decisions`, `## Patterns`, `## Suggested Focus` — computed from the run's records, never canned.
 *
 * Every number comes from the run, through its digest (digest.ts, made where the run happened): requests
 * (outcomes, tenants, classes), the cluster's routing records (top-k candidates and regret), the recorder
 * (prefix audits, preemptions, ShadowKV routings, KV samples) and the anomaly report. Sections with nothing to say are left out (Outcome always
 * stays). The text is deterministic (every group is visited in sorted order) and bounded by `maxChars`
 * (whole lines are dropped from the end, then "… (truncated)" is appended).
 *
 * Definitions shared by the detectors (per run):
 * - population = the requests that arrived (`cs.arrivals`);
 * - a request is *gated* when its SLO class has a target (`slo[class]`, '' and 'default' interchangeable)
 *   with any dimension > 0; it *meets* its SLO when it completed and every gated dimension (TTFT, mean ITL,
 *   E2E, ms) is within target — exactly `sloAttainment`'s rule, so rejected or unfinished requests miss;
 * - *slow* = routed and TTFT > 2 × the run's median TTFT (or no first token at all);
 * - *bad* = SLO miss when the run has any gated request, else slow;
 * - the analysis window W is the smallest of 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600 s
 *   (then whole hours) that is >= the run's last arrival / 60, windows aligned at multiples of W.
 *
 * Files: context.ts (RunCtx, Finding), format.ts (text helpers, the cap), detectors/ (one issue detector per
 * file, listed by detectors/index.ts), issues.ts, outcome.ts, counterfactual.ts, worst-decisions.ts,
 * patterns.ts; this file assembles the sections.
 *
 * Issue detectors and thresholds:
 * - ROUTING: prefix audits where another instance held more cached leading blocks of the prompt than the
 *   chosen one; reported when >= 3 and >= 5% of the audited routings.
 * - ADMISSION (tenant bursts, >= 2 tenants): window k is a burst of tenant T when T's arrivals there are
 *   >= 5, >= 3 × T's mean per window and >= 50% of the window's arrivals; consecutive burst windows form an
 *   episode [s, e). Other tenants' requests arriving in [s, e + W) (the burst plus the window its queue takes
 *   to drain) that are bad are its victims. Reported when the victims total >= 3 and their rate is >= 20%
 *   and >= 2 × the other tenants' bad rate outside those windows.
 * - REJECTION: requests rejected, shed, expired or evicted at the gateway >= 5% of arrivals (and >= 3).
 * - PREEMPTION: any `preemption_storm` anomaly, or preemptions >= 10% of routed requests (and >= 10).
 * - KV_THRASHING: any `cache_thrashing` anomaly.
 * - PRIORITY: >= 3 `priority_inversion` anomalies.
 * - SHADOW: ShadowKV predictions that differed from the actual cache state >= 10% of routings (and >= 5).
 * - SLO: a class with >= 10 gated arrivals whose attainment is below 90%.
 * - LOAD_IMBALANCE: one instance received >= 2 × its fair share of routings (>= 2 instances, >= 20 routed).
 *
 * Patterns (pooled over runs; kept when the condition holds for >= 5 requests, its bad rate is >= 20% and
 * >= 2 × the rate without it): cluster mean queue depth at routing (top-k candidates) >= q for
 * q in {2, 4, 8, 16, 32, 64}; routed away from the longest cached prefix; prompts longer than the run's p90;
 * per tenant; per instance.
 */
import type { RunDigest } from '../digest.js';
import { buildCtx, runLabels } from './context.js';
import { counterfactualLines } from './counterfactual.js';
import { assemble, capText, cmpStr } from './format.js';
import { collectIssues } from './issues.js';
import { outcomeLines } from './outcome.js';
import { patternLines } from './patterns.js';
import { worstDecisionLines } from './worst-decisions.js';

export type SummaryStrategy = 'issue_focused' | 'decision_audit' | 'counterfactual' | 'pattern_mining';

export interface SummaryOptions {
  /** Hard cap on each text (default 6000 ≈ 1500 tokens). */
  readonly maxChars?: number;
  /** Sections beyond Outcome (default all four). */
  readonly strategies?: readonly SummaryStrategy[];
  /** Worst decisions listed (default 3). */
  readonly examples?: number;
}

export interface ReflectionSummary {
  readonly summary: string;
  readonly worstDecisions: string;
  readonly issues: readonly { kind: string; count: number; description: string }[];
}

const DEFAULT_MAX_CHARS = 6000;
const ALL_STRATEGIES: readonly SummaryStrategy[] = ['issue_focused', 'decision_audit', 'counterfactual', 'pattern_mining'];

/**
 * The reflection summary of `runs` (one or more scenarios × seeds): see the module comment for the sections,
 * detectors and thresholds. Pure and deterministic; each text is at most `maxChars` characters.
 */
export function summarizeForReflection(runs: readonly RunDigest[], opts: SummaryOptions = {}): ReflectionSummary {
  const maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
  if (!(maxChars >= 0)) throw new RangeError(`maxChars must be >= 0, got ${maxChars}`);
  const strategies = new Set<SummaryStrategy>(opts.strategies ?? ALL_STRATEGIES);
  const examples = Math.max(0, Math.floor(opts.examples ?? 3));
  const labels = runLabels(runs);
  const ctxs = runs.map((r, i) => buildCtx(r, i, labels[i] as string));

  const issues = collectIssues(ctxs);
  const worst = worstDecisionLines(ctxs, examples);

  const scen = new Map<string, number>();
  for (const r of runs) scen.set(r.scenario, (scen.get(r.scenario) ?? 0) + 1);
  const scenNames = [...scen.keys()].sort(cmpStr);
  const shown = scenNames.slice(0, 6).map((k) => `${k} ×${scen.get(k) as number}`);
  if (scenNames.length > 6) shown.push(`… ${scenNames.length - 6} more scenarios`);
  const scope = runs.length === 0 ? ' (no runs)' : runs.length === 1 ? ` — ${labels[0] as string}` : ` — ${runs.length} runs: ${shown.join(', ')}`;
  const sections: string[][] = [[`## Outcome${scope}`, ...outcomeLines(ctxs)]];

  if (strategies.has('issue_focused')) {
    const sec: string[] = [`## Key Issues (${issues.length} detected)`];
    if (issues.length === 0) sec.push('- None found: no routing prefix misses, tenant bursts, rejections, preemption storms, KV thrashing, priority inversions, ShadowKV divergence, SLO shortfalls or load imbalance above thresholds.');
    issues.forEach((iss, i) => {
      const [first, ...rest] = iss.lines;
      sec.push(`${i + 1}. ${first as string}`, ...rest);
    });
    sections.push(sec);
  }
  if (strategies.has('counterfactual')) {
    const cf = counterfactualLines(ctxs);
    if (cf.length > 0) sections.push(['## Counterfactual Analysis', ...cf]);
  }
  if (strategies.has('decision_audit') && worst.length > 0) sections.push(worst);
  if (strategies.has('pattern_mining')) {
    const pl = patternLines(ctxs);
    if (pl.length > 0) sections.push(['## Patterns', ...pl]);
  }
  const focus = strategies.has('issue_focused') && issues.length > 0 ? ['## Suggested Focus', ...issues.map((i) => `- ${i.focus}`)] : null;
  return {
    summary: assemble(sections, focus, maxChars),
    worstDecisions: capText(worst, maxChars),
    issues: issues.map((i) => ({ kind: i.kind, count: i.count, description: i.description })),
  };
}
