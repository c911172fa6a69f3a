import { beforeAll, describe, expect, it } from 'vitest';
import type { Request } from '../domain/request.js';
import { anomalyReport } from '../sim/policy-report.js';
import { simulateRun } from '../sim/run.js';
import { parseSimulationConfig } from '../sim/simulate.js';
import { digestRun, type LiveRun } from './digest.js';
import { summarizeForReflection, type SummaryOptions } from './summary/index.js';
import type { SloTargets } from './types.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

/** One traced run, built the way `simulate()` builds its SimEnv, with the prefix audit on. */
async function traced(
  scenario: string,
  seed: number,
  config: Record<string, unknown>,
  files: Record<string, string>,
  slo: Record<string, SloTargets>,
): Promise<LiveRun> {
  const { values } = parseSimulationConfig({ mode: 'run', model: MODEL, hardware: 'H100', tp: 1, traceLevel: 'decisions', counterfactualK: 3, seed, ...config, files });
  const env = {
    readText: (path: string): string => {
      const text = files[path];
      if (text === undefined) throw new Error(`missing file ${path}`);
      return text;
    },
    warn: (): void => undefined,
  };
  const out = await simulateRun(values, env, undefined, { prefixAudit: true });
  const goodput = new Map(Object.entries(slo).map(([k, v]) => [k, { ttftMs: v.ttftMs, itlMs: v.itlMs, e2eMs: v.e2eMs }]));
  const anomalies = anomalyReport({
    cs: out.cluster,
    recorder: out.recorder,
    requests: out.requests,
    metadata: null,
    evolvable: null,
    traceLevel: 'decisions',
    goodputTargets: goodput.size > 0 ? goodput : null,
    priorityScheduling: false,
  });
  const ttfts = out.requests.filter((r) => r.hasTTFT).map((r) => r.ttft / 1000).sort((a, b) => a - b);
  const p99 = ttfts.length > 0 ? (ttfts[Math.min(ttfts.length - 1, Math.floor(0.99 * (ttfts.length - 1)))] as number) : 0;
  return {
    scenario,
    seed,
    cs: out.cluster,
    recorder: out.recorder,
    requests: out.requests,
    anomalies,
    slo,
    objectives: { ttft_p99_ms: p99 },
    scores: { ttft_p99_ms: p99 <= 500 ? 1 : 500 / p99 },
  };
}

/** Many prefix groups (1024-token prefixes) and a small KV cache: round-robin keeps losing the prefix. */
function prefixSpec(groups: number, rate: number, n: number): string {
  const clients = Array.from(
    { length: groups },
    (_, g) => `  - id: c${g}
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 64, min: 32, max: 512}}
    output_distribution: {type: constant, params: {value: 64}}
    prefix_group: g${g}
    prefix_length: 1024
`,
  ).join('');
  return `version: "2"\nseed: 7\naggregate_rate: ${rate}\nnum_requests: ${n}\nclients:\n${clients}`;
}

/** A steady critical tenant and a heavy on/off bursty batch tenant on one instance. */
const BURSTY = `version: "2"
seed: 11
aggregate_rate: 10
num_requests: 1000
clients:
  - id: steady
    tenant_id: acme
    slo_class: critical
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 256}}
    output_distribution: {type: constant, params: {value: 64}}
  - id: noisy
    tenant_id: globex
    slo_class: batch
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 1500}}
    output_distribution: {type: constant, params: {value: 128}}
    misbehavior: {kind: bursty, burst_rate_multiplier: 30, off_rate_multiplier: 0, mean_on_s: 2, mean_off_s: 28, pareto_alpha: 1.5}
`;

const CRITICAL_SLO: Record<string, SloTargets> = { critical: { ttftMs: 200, itlMs: 0, e2eMs: 0 } };

/** The summary of live runs, through their digests (as the evaluator builds it). */
function summarize(runs: readonly LiveRun[], opts?: SummaryOptions): ReturnType<typeof summarizeForReflection> {
  return summarizeForReflection(runs.map(digestRun), opts);
}

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

let prefixRun: LiveRun;
let burstRun: LiveRun;
let cleanRun: LiveRun;

beforeAll(async () => {
  prefixRun = await traced('prefix-heavy', 7, { numInstances: 4, routingPolicy: 'round-robin', workloadSpec: 'w.yaml', totalKvBlocks: 1500 }, { 'w.yaml': prefixSpec(40, 150, 400) }, {});
  burstRun = await traced('noisy-neighbour', 11, { numInstances: 1, workloadSpec: 'b.yaml' }, { 'b.yaml': BURSTY }, CRITICAL_SLO);
  cleanRun = await traced('clean', 3, { numInstances: 2, routingPolicy: 'least-loaded', rate: 2, numRequests: 60 }, {}, { default: { ttftMs: 2000, itlMs: 0, e2eMs: 0 } });
});

describe('summarizeForReflection', () => {
  it('names the routing prefix misses of a prefix-ignoring policy with the right counts', () => {
    const audits = prefixRun.recorder.prefixAudits;
    const misses = audits.filter((a) => a.bestBlocks > a.chosenBlocks);
    const cold = misses.filter((a) => a.chosenBlocks === 0).length;
    expect(audits.length).toBe(400);
    expect(misses.length).toBeGreaterThan(100);

    const s = summarize([prefixRun]);
    expect(s.summary).toContain(`ROUTING: ${misses.length} of ${audits.length} routed requests went to an instance holding a shorter prefix`);
    expect(s.summary).toContain(`${cold} of them held none of it while another instance did`);
    expect(s.summary).toContain('[prefix-heavy (seed 7)]');
    const routing = s.issues.find((i) => i.kind === 'ROUTING');
    expect(routing?.count).toBe(misses.length);

    // Counterfactual: decisions with a better-scored alternative and cold misses, counted independently.
    const recs = prefixRun.cs.routingRecords;
    const positive = recs.filter((r) => r.regret > 0).length;
    expect(s.summary).toContain('## Counterfactual Analysis');
    expect(s.summary).toContain(`${positive} of ${recs.length} decisions`);
    expect(s.summary).toContain(`- ${cold} decisions where another instance held the prompt's prefix and the chosen instance held none`);

    // Worst decisions: real prefix misses, each with its request, instances and outcome.
    expect(s.worstDecisions).toMatch(/^## Worst Decisions \(3 examples\)/);
    const missIds = new Set(misses.map((a) => a.requestId));
    const routedIds = [...s.worstDecisions.matchAll(/routed (\S+) /g)].map((m) => m[1] as string);
    expect(routedIds).toHaveLength(3);
    for (const id of routedIds) expect(missIds.has(id)).toBe(true);
    expect(s.worstDecisions).toMatch(/Result: (cache miss, )?TTFT [\d.]+(ms|s) = [\d.]+x the run median/);
    expect(s.summary).toContain(s.worstDecisions);
    expect(s.summary).toMatch(/## Suggested Focus\n- Routing: .*prefix affinity/);
  });

  it('names the bursting tenant and the window in which the other tenant missed its SLO', () => {
    const s = summarize([burstRun]);
    const adm = s.issues.find((i) => i.kind === 'ADMISSION');
    expect(adm).toBeDefined();
    expect(adm?.description).toMatch(/^bursty tenant "globex"/);
    expect(s.summary).not.toContain('bursty tenant "acme"');

    const m = /(\d+(?:\.\d+)?)–(\d+(?:\.\d+)?)s: "globex" sent (\d+) requests \((\d+)% of arrivals[^;]*; (\d+) of (\d+) other-tenant requests arriving (\d+(?:\.\d+)?)–(\d+(?:\.\d+)?)s missed SLO \(critical (\d+)\/(\d+)\)/.exec(s.summary);
    expect(m).not.toBeNull();
    const [bs, be, sent, , bad, others, vs, ve, cBad, cN] = (m as RegExpExecArray).slice(1).map((x) => Number(x));
    const arrived = new Set<Request>(burstRun.cs.arrivals);
    const reqs = burstRun.requests.filter((r) => arrived.has(r));
    const inBurst = (r: Request): boolean => r.arrivalTime >= (bs as number) * 1e6 && r.arrivalTime < (be as number) * 1e6;
    // The bursting tenant's arrivals in the burst window, and its dominance there.
    const globex = reqs.filter((r) => r.tenantId === 'globex' && inBurst(r)).length;
    expect(globex).toBe(sent);
    expect(globex).toBeGreaterThanOrEqual(0.5 * reqs.filter(inBurst).length);
    // The other tenant's critical requests arriving in the victim window that missed the 200 ms TTFT target.
    const victims = reqs.filter((r) => r.tenantId === 'acme' && r.arrivalTime >= (vs as number) * 1e6 && r.arrivalTime < (ve as number) * 1e6);
    const missed = victims.filter((r) => !r.hasE2E || !r.hasTTFT || r.ttft / 1000 > 200);
    expect(victims.length).toBe(others);
    expect(missed.length).toBe(bad);
    expect(cBad).toBe(bad);
    expect(cN).toBe(others);
    expect(bad).toBeGreaterThan(0.5 * (others as number));
    // The count of the issue: every other-tenant miss inside the burst windows (>= the listed window's).
    expect(adm?.count).toBeGreaterThanOrEqual(bad as number);
    expect(s.summary).toContain('SLO attainment by class:');
    expect(s.summary).toMatch(/## Suggested Focus\n(- .*\n)*- Admission: add per-tenant burst detection — throttle or delay tenant "globex"/);
  });

  it('reports no key issues for a clean low-load run and stays within the cap', () => {
    const s = summarize([cleanRun]);
    expect(s.issues).toEqual([]);
    expect(s.summary).toContain('## Key Issues (0 detected)\n- None found');
    expect(s.summary).not.toContain('## Suggested Focus');
    expect(s.summary).not.toMatch(/^\d+\. /m);
    expect(s.summary).toMatch(/^## Outcome — clean \(seed 3\)/);
    expect(s.summary).toContain('- P99 TTFT:');
    expect(s.summary).toContain('✓');
    expect(s.summary.length).toBeLessThanOrEqual(6000);
    expect(s.worstDecisions).toBe('');
  });

  it('is deterministic: same runs, same text; a re-simulated run gives the same text', async () => {
    const runs = [prefixRun, burstRun, cleanRun];
    const a = summarize(runs);
    const b = summarize(runs);
    expect(b).toEqual(a);
    const again = await traced('clean', 3, { numInstances: 2, routingPolicy: 'least-loaded', rate: 2, numRequests: 60 }, {}, { default: { ttftMs: 2000, itlMs: 0, e2eMs: 0 } });
    expect(summarize([again])).toEqual(summarize([cleanRun]));
  });

  it('aggregates over runs and names the scenario of each issue', () => {
    const s = summarize([prefixRun, burstRun, cleanRun]);
    expect(s.summary).toMatch(/^## Outcome — 3 runs: clean ×1, noisy-neighbour ×1, prefix-heavy ×1/);
    expect(s.summary).toMatch(/ROUTING: .*\[prefix-heavy \(seed 7\)\]/);
    expect(s.summary).toMatch(/ADMISSION: bursty tenant "globex".*\[noisy-neighbour \(seed 11\)\]/);
    expect(s.summary).toMatch(/\| prefix-heavy \(seed 7\) \| routed /);
    const kinds = s.issues.map((i) => i.kind);
    expect(kinds).toContain('ROUTING');
    expect(kinds).toContain('ADMISSION');
  });

  it('keeps the hard maxChars cap with many runs, truncating whole lines', () => {
    const many: LiveRun[] = [];
    for (let i = 0; i < 8; i++) for (const r of [prefixRun, burstRun, cleanRun]) many.push({ ...r, scenario: `${r.scenario}-${i}`, seed: r.seed + i });
    const full = summarize(many, { maxChars: 1_000_000, examples: 10 });
    const capped = summarize(many, { examples: 10 });
    expect(full.summary.length).toBeGreaterThan(6000);
    expect(capped.summary.length).toBeLessThanOrEqual(6000);
    // Whole lines cut from the middle sections; Outcome first and Suggested Focus last are kept.
    const parts = capped.summary.split('\n… (truncated)');
    expect(parts).toHaveLength(2);
    const [before, after] = parts as [string, string];
    expect(full.summary.startsWith(`${before}\n`)).toBe(true);
    expect(after).toMatch(/^\n\n## Suggested Focus\n- Routing: /);
    expect(full.summary.endsWith(after)).toBe(true);
    expect(before).toMatch(/^## Outcome — 24 runs: clean-0 ×1, .*… 18 more scenarios\n/);
    for (const max of [300, 1000, 2500]) {
      const t = summarize(many, { maxChars: max, examples: 10 });
      expect(t.summary.length).toBeLessThanOrEqual(max);
      expect(t.worstDecisions.length).toBeLessThanOrEqual(max);
      expect(t.summary).toContain('… (truncated)');
      for (const line of t.summary.split('\n')) if (line !== '… (truncated)') expect(full.summary.split('\n')).toContain(line);
    }
    // The issue list is not truncated: counts aggregate over the runs.
    const routing = full.issues.find((i) => i.kind === 'ROUTING');
    const misses = prefixRun.recorder.prefixAudits.filter((a) => a.bestBlocks > a.chosenBlocks).length;
    expect(routing?.count).toBe(8 * misses);
    expect(routing?.description).toMatch(new RegExp(`^${8 * misses} of ${8 * 400} routed requests .* in 8 of 24 runs; worst: `));
  });

  it('honours strategies and examples', () => {
    const only = summarize([prefixRun], { strategies: ['issue_focused'] });
    expect(only.summary).toContain('## Key Issues');
    expect(only.summary).not.toContain('## Counterfactual Analysis');
    expect(only.summary).not.toContain('## Worst Decisions');
    expect(only.summary).not.toContain('## Patterns');
    expect(only.worstDecisions).toMatch(/^## Worst Decisions/);
    const outcomeOnly = summarize([prefixRun], { strategies: [] });
    expect(outcomeOnly.summary).toMatch(/^## Outcome/);
    expect(outcomeOnly.summary).not.toContain('##  Key');
    expect(outcomeOnly.summary.match(/^## /gm)).toHaveLength(1);
    const one = summarize([prefixRun], { examples: 1 });
    expect(one.worstDecisions).toMatch(/^## Worst Decisions \(1 example\)/);
    expect(one.worstDecisions).not.toMatch(/^2\. /m);
    expect(summarize([prefixRun], { examples: 0 }).worstDecisions).toBe('');
    expect(new RegExp(esc('## Outcome')).test(summarize([]).summary)).toBe(true);
  });
  it('names preemption storms and KV thrashing with the recorded counts', async () => {
    const run = await traced('kv-tight', 5, { numInstances: 2, routingPolicy: 'least-loaded', rate: 30, numRequests: 300, totalKvBlocks: 400, kvCpuBlocks: 2000, outputTokens: 400 }, {}, {});
    const pre = run.recorder.preemptions;
    const storms = run.anomalies.counts.preemption_storm;
    expect(storms).toBeGreaterThan(0);
    const s = summarize([run]);
    const victims = new Set(pre.map((p) => p.requestId)).size;
    expect(s.summary).toContain(`PREEMPTION: ${pre.length} preemptions of ${victims} requests in ${storms} preemption storms`);
    expect(s.issues.find((i) => i.kind === 'PREEMPTION')?.count).toBe(pre.length);
    const thrash = run.anomalies.counts.cache_thrashing;
    if (thrash > 0) expect(s.summary).toContain(`KV OFFLOAD: ${thrash} windows of GPU↔CPU thrashing`);
    expect(s.summary).toMatch(/## Suggested Focus\n(- .*\n)*- Scheduler\/routing: /);
    expect(s.summary.length).toBeLessThanOrEqual(6000);
  });
});
