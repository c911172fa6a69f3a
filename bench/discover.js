// Discovery benchmark (issue 26): `blis search` from the defaults on three problems, each found policy proved on
// held-out seeds against the default (paired, 95% intervals), then re-scored under the other latency model
// (trained-physics <-> corrected-physics): a gain that only one model shows is not a finding.
//
//   1. bursty-tenants: a bursty, overloaded, mixed-tenant workload with SLO classes (critical, standard,
//      sheddable) on 2 instances. Target: the found policy cuts critical-class TTFT p99 by >= 50% against the
//      default, with no fewer requests meeting their SLO.
//   2. prefix-routing: the prefix-heavy workload of routing-prefix-heavy, with the default weighted scorers as the
//      default; only routing is searched. Target: beat the default beyond the noise, or say that it cannot.
//   3. scheduling: the built-in scheduling-slo-mix suite (FCFS default), whole policies.
//
// Everything goes through the CLI as a user would run it (`blis search`, `blis evaluate --stage validate`).
// Options: --budget N (candidates per search, default 30), --workers N (default 2). Last line: a JSON summary.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BLIS, argValue, fmtS, timedRun, verdict } from './lib.js';

const BUDGET = Number(argValue('budget', '30'));
const WORKERS = argValue('workers', '2');
const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const dir = mkdtempSync(path.join(tmpdir(), 'blis-bench-discover-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const indent = (text, n) => text.split('\n').map((l) => (l === '' ? l : ' '.repeat(n) + l)).join('\n');

/** Three tenants on 2 instances: a steady critical chat, a bursty standard API, a very bursty sheddable scraper. */
const burstySpec = (n, rate) => `version: "2"
seed: 1
aggregate_rate: ${rate}
num_requests: ${n}
clients:
  - id: chat
    tenant_id: acme
    slo_class: critical
    rate_fraction: 2
    arrival: {process: poisson}
    input_distribution: {type: lognormal, params: {mu: 5.5, sigma: 0.5, min: 16, max: 3000}}
    output_distribution: {type: exponential, params: {mean: 128, min: 8, max: 512}}
  - id: api
    tenant_id: initech
    slo_class: standard
    rate_fraction: 2
    arrival: {process: gamma, cv: 3}
    input_distribution: {type: lognormal, params: {mu: 6.2, sigma: 0.6, min: 16, max: 4000}}
    output_distribution: {type: exponential, params: {mean: 200, min: 8, max: 1024}}
  - id: scraper
    tenant_id: globex
    slo_class: sheddable
    rate_fraction: 3
    arrival: {process: gamma, cv: 6}
    input_distribution: {type: gaussian, params: {mean: 3000, std_dev: 800, min: 500, max: 6000}}
    output_distribution: {type: exponential, params: {mean: 256, min: 8, max: 1024}}
`;

const range = (first, n) => Array.from({ length: n }, (_, i) => first + i).join(', ');

const scenario = (name, spec, config, seeds, holdout, slo) => `  - name: ${name}
    seeds: [${seeds}]
    holdout_seeds: [${holdout}]
    config: ${JSON.stringify(config)}
    files:
      workload.yaml: |
${indent(spec, 8)}
    slo: ${JSON.stringify(slo)}
`;

const BURSTY_SUITE = (latencyModel) => `name: discover-bursty-tenants
description: three tenants (critical chat, bursty standard API, very bursty sheddable scraper) on 2 instances at 1.1x and 1.4x what they sustain on average, far above in bursts
objectives:
  - {name: critical_ttft_p99_ms, metric: ttft_p99_ms@critical, direction: minimize, weight: 3, normalization: {kind: linear, best: 100, worst: 3000}}
  - {name: critical_slo_attainment, metric: slo_attainment@critical, direction: maximize, weight: 2, normalization: {kind: linear, best: 1, worst: 0}}
  - {name: slo_attainment, metric: slo_attainment, direction: maximize, weight: 3, normalization: {kind: linear, best: 1, worst: 0}}
constraints:
  - {name: no_fewer_met, metric: slo_attainment, min: 1.0, relative_to_baseline: true}
defaults: {routingPolicy: least-loaded}
baseline: {id: defaults, description: 'admit everything, FCFS, least-loaded routing', bundle: {}}
stage2:
${scenario('busy', burstySpec(1500, 36), { model: MODEL, hardware: 'H100', tp: 1, numInstances: 2, workloadSpec: 'workload.yaml', latencyModel }, '1, 2, 3', range(1001, 10), { critical: { ttft_ms: 300, itl_ms: 40 }, standard: { ttft_ms: 1500, itl_ms: 60 }, sheddable: { ttft_ms: 8000, itl_ms: 100 } })}${scenario('surge', burstySpec(1500, 46), { model: MODEL, hardware: 'H100', tp: 1, numInstances: 2, workloadSpec: 'workload.yaml', latencyModel }, '4, 5, 6', range(2001, 10), { critical: { ttft_ms: 300, itl_ms: 40 }, standard: { ttft_ms: 1500, itl_ms: 60 }, sheddable: { ttft_ms: 8000, itl_ms: 100 } })}`;

/** routing-prefix-heavy's workload (forty apps' 1024-token system prompts) with the default weighted scorers as the default. */
const prefixSpec = (n, rate) => `version: "2"
seed: 1
aggregate_rate: ${rate}
num_requests: ${n}
clients:
${Array.from({ length: 40 }, (_, i) => `  - id: app-${i}
    tenant_id: tenant-${i % 4}
    slo_class: standard
    rate_fraction: ${i < 8 ? 4 : 1}
    arrival: {process: gamma, cv: 1.5}
    input_distribution: {type: lognormal, params: {mu: 4.5, sigma: 0.6, min: 16, max: 1000}}
    output_distribution: {type: exponential, params: {mean: 48, min: 4, max: 256}}
    prefix_group: system-${i}
    prefix_length: 1024`).join('\n')}
`;

const PREFIX_SUITE = `name: discover-prefix-routing
description: forty applications' 1024-token system prompts on 4 instances whose KV caches hold only part of them; the default is the weighted scorers' default profile (precise-prefix-cache 2, queue-depth 1, kv-utilization 1)
objectives:
  - {name: slo_attainment, metric: slo_attainment, direction: maximize, weight: 3, normalization: {kind: linear, best: 1, worst: 0}}
  - {name: ttft_p99_ms, metric: ttft_p99_ms, direction: minimize, weight: 2, normalization: {kind: ratio, target: 100}}
  - {name: ttft_mean_ms, metric: ttft_mean_ms, direction: minimize, weight: 2, normalization: {kind: ratio, target: 30}}
defaults: {routingPolicy: weighted}
baseline: {id: weighted-default, description: 'the weighted scorers with their default profile', bundle: {}}
stage2:
${scenario('steady', prefixSpec(1200, 320), { model: MODEL, hardware: 'H100', tp: 1, numInstances: 4, totalKvBlocks: 1200, workloadSpec: 'workload.yaml' }, '1, 2, 3', range(3001, 10), { standard: { ttft_ms: 150, itl_ms: 40 } })}${scenario('hot', prefixSpec(1200, 400), { model: MODEL, hardware: 'H100', tp: 1, numInstances: 4, totalKvBlocks: 1600, workloadSpec: 'workload.yaml' }, '4, 5, 6', range(4001, 10), { standard: { ttft_ms: 150, itl_ms: 40 } })}`;

const fmt = (x, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : `${x >= 0 ? '+' : ''}${x.toFixed(d)}`);
const ci = (e, d = 3) => (e?.ci95 ? `[${fmt(e.ci95[0], d)}, ${fmt(e.ci95[1], d)}]` : '(no interval)');

function blisJson(args, label) {
  const r = timedRun(process.execPath, [BLIS, ...args], { label });
  return { json: JSON.parse(r.stdout.toString()), wallS: r.wallS };
}

const mean = (xs) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Paired figures of `best` against `base` (two EvaluationResults on the same runs): per objective and SLO-met requests. */
function pairedFigures(best, base) {
  const key = (r) => `${r.scenario}@${r.seed}`;
  const b = new Map(base.scenarios.map((r) => [key(r), r]));
  const pairs = best.scenarios.filter((r) => b.has(key(r))).map((r) => [r, b.get(key(r))]);
  const met = (r) => r.metrics.arrived_requests * r.metrics.slo_attainment;
  const objectives = {};
  for (const name of Object.keys(best.scenarios[0]?.objectives ?? {})) {
    objectives[name] = { best: mean(pairs.map(([x]) => x.objectives[name])), default: mean(pairs.map(([, y]) => y.objectives[name])) };
  }
  return { runs: pairs.length, objectives, slo_met: { best: mean(pairs.map(([x]) => met(x))), default: mean(pairs.map(([, y]) => met(y))) } };
}

const cases = [
  { name: 'bursty-tenants', file: 'bursty.yaml', text: BURSTY_SUITE('trained-physics'), args: [], focus: 'critical_ttft_p99_ms' },
  { name: 'prefix-routing', file: 'prefix.yaml', text: PREFIX_SUITE, args: ['--points', 'routing'], focus: 'ttft_p99_ms' },
  { name: 'scheduling', file: null, suite: 'scheduling-slo-mix', args: [], focus: 'critical_ttft_p99_ms' },
];

const rows = [];
const t0 = process.hrtime.bigint();
console.log(`discovery: blis search from the defaults, --budget ${BUDGET} --workers ${WORKERS}; held-out seeds, paired against the default; then the found policy under the other latency model`);
writeFileSync(path.join(dir, 'none.json'), '{}\n');
for (const c of cases) {
  const suite = c.file === null ? c.suite : path.join(dir, c.file);
  if (c.file !== null) writeFileSync(suite, c.text);
  const s = blisJson(['search', '--suite', suite, '--budget', String(BUDGET), '--workers', WORKERS, '--seed', '1', '--quiet', ...c.args], `search ${c.name}`);
  const j = s.json;
  const vb = j.holdout.versus_baseline ?? j.holdout.versus_start;
  const focus = vb.objectives[c.focus];
  const cut = focus && focus.other > 0 ? 1 - focus.best / focus.other : null;
  const bestFile = path.join(dir, `${c.name}-best.json`);
  writeFileSync(bestFile, JSON.stringify(j.best.bundle, null, 2));
  // The other physics: the suite's own latency model is trained-physics; re-score under corrected-physics.
  const other = 'corrected-physics';
  const ob = blisJson(['evaluate', '--candidate', bestFile, '--suite', suite, '--stage', 'validate', '--latency-model', other, '--workers', WORKERS, '--quiet'], `evaluate ${c.name} best (${other})`).json;
  const od = blisJson(['evaluate', '--candidate', path.join(dir, 'none.json'), '--suite', suite, '--stage', 'validate', '--latency-model', other, '--workers', WORKERS, '--quiet'], `evaluate ${c.name} default (${other})`).json;
  const diffOther = ob.baseline?.difference ?? null;
  const po = pairedFigures(ob, od);
  const focusOther = po.objectives[c.focus];
  const cutOther = focusOther && focusOther.default > 0 ? 1 - focusOther.best / focusOther.default : null;
  const gain = vb.combined_score.difference;
  const survives = diffOther?.ci95 ? diffOther.ci95[0] > 0 : false;
  const row = {
    case: c.name,
    suite: j.suite,
    search_wall_s: s.wallS,
    evaluations: j.evaluations,
    racing: j.racing,
    found: j.best.policy,
    heldout: {
      runs: vb.runs,
      combined_score: { best: vb.combined_score.best, default: vb.combined_score.other, difference: gain },
      [c.focus]: { best: focus?.best ?? null, default: focus?.other ?? null, cut, difference: focus?.difference ?? null },
      slo_met_requests: { best: vb.slo_met_requests.best, default: vb.slo_met_requests.other, difference: vb.slo_met_requests.difference },
      significant: gain.ci95 !== null && gain.ci95[0] > 0,
    },
    other_physics: { latency_model: other, combined_score_difference: diffOther, [c.focus]: { ...focusOther, cut: cutOther }, slo_met_requests: po.slo_met, survives },
  };
  rows.push(row);
  console.log(`\n## ${c.name} (${j.suite}): ${j.evaluations} candidates in ${fmtS(s.wallS)}; racing: ${j.racing.runs_simulated} runs simulated of ${j.racing.runs_without_racing} without racing, ${j.racing.seed_rungs_added} seed rungs added, ${j.racing.undecided_at_last_rung} undecided at the last rung`);
  console.log(`found: ${j.best.policy.slice(0, 400)}`);
  console.log(`held-out (${vb.runs} paired runs, against the default): combined score ${vb.combined_score.best.toFixed(3)} vs ${vb.combined_score.other.toFixed(3)}, ${fmt(gain.mean, 4)} ${ci(gain, 4)}`);
  console.log(`  ${c.focus}: ${focus?.best.toFixed(1)} vs ${focus?.other.toFixed(1)} (${cut === null ? 'n/a' : `${(cut * 100).toFixed(0)}% cut`}), difference ${fmt(focus?.difference.mean, 1)} ${ci(focus?.difference, 1)}`);
  console.log(`  requests meeting their SLO per run: ${vb.slo_met_requests.best.toFixed(1)} vs ${vb.slo_met_requests.other.toFixed(1)}, difference ${fmt(vb.slo_met_requests.difference.mean, 1)} ${ci(vb.slo_met_requests.difference, 1)}`);
  const carried = !row.heldout.significant ? 'no held-out gain to carry over' : survives ? 'the gain survives the change of physics' : 'the gain does NOT survive the change of physics: not a finding';
  console.log(`under ${other}: combined score difference ${fmt(diffOther?.mean, 4)} ${ci(diffOther, 4)}; ${c.focus} ${focusOther?.best?.toFixed(1)} vs ${focusOther?.default?.toFixed(1)} (${cutOther === null ? 'n/a' : `${(cutOther * 100).toFixed(0)}% cut`}); SLO met ${po.slo_met.best?.toFixed(1)} vs ${po.slo_met.default?.toFixed(1)}: ${carried}`);
  if (c.name === 'bursty-tenants') {
    const metOk = vb.slo_met_requests.difference.mean >= 0 && !(vb.slo_met_requests.difference.ci95 && vb.slo_met_requests.difference.ci95[1] < 0);
    console.log(`target: critical-class TTFT p99 cut >= 50% with no fewer requests meeting their SLO (held-out, paired): ${verdict(cut, cut !== null && cut >= 0.5 && metOk)}`);
  } else if (c.name === 'prefix-routing') {
    console.log(row.heldout.significant ? 'the found routing beats the default weighted scorers beyond the noise (the 95% interval lies above 0)' : 'the search could not beat the default weighted scorers beyond the noise on the held-out seeds');
  }
}
const totalS = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`\ndiscovery total: ${fmtS(totalS)} (target <= 10 min on a 2-core machine: ${verdict(totalS, totalS <= 600)})`);
console.log(JSON.stringify({ bench: 'discover', budget: BUDGET, workers: Number(WORKERS), total_s: totalS, cases: rows }));
