/**
 * Semantic validation of a parsed spec: the reference's `WorkloadSpec.Validate` rules (in its order, so the same
 * spec fails on the same problem), plus the sampler-construction checks the reference only hits at generation
 * time. Every failure names `file:line:col` and the field.
 *
 * Deliberately stricter than the reference in a few places, all of which the reference would accept and then
 * mis-generate silently (docs/reference-differences.md, "Inputs blis-ts refuses"): unknown per-window arrival
 * processes (it falls back to Poisson), negative window trace rates (the window generates nothing), negative
 * goodput targets, rate fractions that are all 0, an unknown `version`, a negative `horizon` or `num_requests`,
 * missing or repeated client/cohort ids, and the distribution and load-profile values checked in
 * validate-parts.ts and ../profiles/validate.ts.
 */
import { showValue } from '../../domain/errors.js';
import type { SpecPath } from './errors.js';
import { findInferencePerfProblem } from './inference-perf.js';
import type { ClientSpec, CohortSpec, LifecycleSpec, TrafficSource, WorkloadSpec } from './types.js';
import {
  CATEGORIES,
  checkArrival,
  checkDist,
  checkMultimodal,
  checkNonNegative,
  checkPositiveRate,
  checkSloClass,
  goF,
} from './validate-parts.js';
import type { SpecSource } from './yaml-source.js';
import { checkTrafficShaping } from '../profiles/validate.js';

const MAX_COHORT_POPULATION = 100_000;

/** Spec versions: "2", and the v1 spellings the parser upgrades ("1", or no version at all). */
const SPEC_VERSIONS: readonly string[] = ['', '1', '2'];

/** Throws WorkloadSpecError for the first problem found. */
export function validateWorkloadSpec(spec: WorkloadSpec, src: SpecSource): void {
  checkTopLevel(spec, src);
  checkSources(spec, src);
  if (spec.inferencePerf !== null) {
    // The expanded clients are valid by construction once the block itself is.
    const bad = findInferencePerfProblem(spec.inferencePerf);
    if (bad !== null) src.fail('WORKLOAD_SPEC_VALUE', bad.path, bad.problem, bad.fix);
  }
  if (spec.category !== '' && !(CATEGORIES as readonly string[]).includes(spec.category)) {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      ['category'],
      `unknown category "${spec.category}"`,
      `use one of ${CATEGORIES.join(', ')}, or leave it empty`,
    );
  }
  checkAggregateRate(spec, src);
  if (spec.clients.length === 0 && spec.cohorts.length === 0 && spec.inferencePerf === null && spec.servegenData === null) {
    src.fail(
      'WORKLOAD_SPEC_EMPTY',
      ['clients'],
      'at least one client or cohort is required',
      'add a `clients:` list with at least one client',
    );
  }
  checkRateSum(spec, src);
  spec.clients.forEach((c, i) => checkClient(c, ['clients', i], src));
  const multiTurn = [...spec.clients, ...spec.cohorts].some((c) => c.reasoning?.multiTurn != null);
  const concurrencyAt = spec.clients.findIndex((c) => c.concurrency > 0);
  if (concurrencyAt >= 0 && multiTurn) {
    src.fail(
      'WORKLOAD_SPEC_CONFLICT',
      ['clients', concurrencyAt, 'concurrency'],
      'concurrency clients and multi-turn clients cannot be mixed in one spec',
      'split them into separate specs',
    );
  }
  spec.cohorts.forEach((c, i) => checkCohort(c, ['cohorts', i], src));
  checkMixedSlo(spec, src);
  for (const [cls, t] of spec.goodputSloTargets) {
    for (const [key, v] of [['ttft_ms', t.ttftMs], ['itl_ms', t.itlMs], ['e2e_ms', t.e2eMs]] as const) {
      checkNonNegative(src, ['goodput_slo_targets', cls, key], v, 'threshold in ms (0 = not gated)');
    }
  }
  checkTrafficShaping(spec, src);
}

/**
 * `version` (checked before the v1 upgrade rewrites it: `spec.version` is "2" by then for "" and "1"),
 * non-negative bounds, and one distinct id per client and cohort (ids name the streams in metrics and traces).
 */
function checkTopLevel(spec: WorkloadSpec, src: SpecSource): void {
  const written = src.versionText();
  if (written !== null && !SPEC_VERSIONS.includes(written)) {
    src.fail('WORKLOAD_SPEC_VALUE', ['version'], `unknown spec version ${showValue(written)}`, 'write version: "2" (this is the workload spec v2 format)');
  }
  if (spec.horizon < 0) src.fail('WORKLOAD_SPEC_VALUE', ['horizon'], `must be non-negative, got ${spec.horizon}`, 'set the last arrival time in µs, or 0 for none');
  if (spec.numRequests < 0) src.fail('WORKLOAD_SPEC_VALUE', ['num_requests'], `must be non-negative, got ${spec.numRequests}`, 'set the number of requests, or 0 for no cap');
  const seen = new Map<string, string>();
  const sources: [string, readonly { id: string }[]][] = [['clients', spec.clients], ['cohorts', spec.cohorts]];
  for (const [list, items] of sources) {
    items.forEach((c, i) => {
      const here = `${list}[${i}]`;
      if (c.id === '') src.fail('WORKLOAD_SPEC_VALUE', [list, i], 'id is missing', `give each ${list === 'clients' ? 'client' : 'cohort'} a distinct id, e.g. id: ${list === 'clients' ? 'client' : 'cohort'}-${i + 1}`);
      const first = seen.get(c.id);
      if (first !== undefined) src.fail('WORKLOAD_SPEC_VALUE', [list, i, 'id'], `id ${showValue(c.id)} is already used by ${first}`, 'give each client and cohort a distinct id');
      seen.set(c.id, here);
    });
  }
}

/** At most one primary workload source; clients and cohorts compose. */
function checkSources(spec: WorkloadSpec, src: SpecSource): void {
  const present: string[] = [];
  if (spec.clients.length > 0) present.push('clients');
  if (spec.servegenData !== null) present.push('servegen_data');
  if (spec.inferencePerf !== null) present.push('inference_perf');
  if (present.length > 1) {
    src.fail(
      'WORKLOAD_SPEC_CONFLICT',
      [present[1]!],
      `workload sources {${present.join(', ')}} are mutually exclusive`,
      'keep exactly one of clients, servegen_data, inference_perf',
      true,
    );
  }
}

/**
 * aggregate_rate must be positive when any client is rate-based — unless it is 0 ("absolute mode"), where every
 * rate-based client's windows and every cohort's spike carry their own trace_rate.
 */
function checkAggregateRate(spec: WorkloadSpec, src: SpecSource): void {
  const rateClients = spec.clients.map((c, i) => [c, i] as const).filter(([c]) => c.concurrency === 0);
  if (rateClients.length === 0 && spec.cohorts.length === 0) return;
  if (spec.aggregateRate !== 0) {
    checkPositiveRate(src, ['aggregate_rate'], spec.aggregateRate, true);
    return;
  }
  const fix = 'set aggregate_rate > 0 (requests/second), or use absolute rate mode: a trace_rate on every lifecycle window';
  const problem = 'aggregate_rate is 0 or missing';
  const at: SpecPath = src.has(['aggregate_rate']) ? ['aggregate_rate'] : [];
  for (const [c, i] of rateClients) {
    const windows = c.lifecycle?.windows ?? [];
    if (windows.length === 0) {
      src.fail(
        'WORKLOAD_SPEC_RATE',
        at,
        `${problem} and clients[${i}] has no lifecycle windows with trace_rate`,
        fix,
      );
    }
    const j = windows.findIndex((w) => w.traceRate === null);
    if (j >= 0) {
      src.fail(
        'WORKLOAD_SPEC_RATE',
        ['clients', i, 'lifecycle', 'windows', j],
        `${problem} and this window has no trace_rate`,
        fix,
      );
    }
  }
  spec.cohorts.forEach((c, i) => {
    const p: SpecPath = ['cohorts', i];
    const why = 'absolute rate mode (aggregate_rate 0) supports only spike patterns with trace_rate';
    if (c.diurnal !== null) {
      src.fail(
        'WORKLOAD_SPEC_RATE',
        [...p, 'diurnal'],
        `${why}; diurnal is not supported there`,
        'set aggregate_rate > 0 or use a spike',
        true,
      );
    }
    if (c.drain !== null) {
      src.fail(
        'WORKLOAD_SPEC_RATE',
        [...p, 'drain'],
        `${why}; drain is not supported there`,
        'set aggregate_rate > 0 or use a spike',
        true,
      );
    }
    if (c.spike === null) {
      src.fail(
        'WORKLOAD_SPEC_RATE',
        p,
        `${why}; this cohort has no spike`,
        'add spike.trace_rate or set aggregate_rate > 0',
      );
    }
    if (c.spike.traceRate === null) {
      src.fail(
        'WORKLOAD_SPEC_RATE',
        [...p, 'spike'],
        `${why}; the spike has no trace_rate`,
        'add spike.trace_rate (requests/second for the cohort)',
      );
    }
    checkPositiveRate(src, [...p, 'spike', 'trace_rate'], c.spike.traceRate, true);
  });
}

/** Rate-based clients whose fractions are all 0 leave nothing to split aggregate_rate by. */
function checkRateSum(spec: WorkloadSpec, src: SpecSource): void {
  const rate = spec.clients.filter((c) => c.concurrency === 0);
  // A single client gets the per-client "rate_fraction must be positive" message instead.
  if (rate.length < 2 || spec.cohorts.length > 0 || rate.some((c) => c.rateFraction !== 0)) return;
  const first = spec.clients.findIndex((c) => c.concurrency === 0);
  src.fail(
    'WORKLOAD_SPEC_RATE_SUM',
    ['clients', first, 'rate_fraction'],
    'rate fractions of the rate-based clients sum to 0, so aggregate_rate cannot be split among them',
    'give every client a positive rate_fraction (e.g. 1 each for an even split)',
  );
}

/** Rules shared by clients and cohorts (timeouts, SLO target, prefix length, distributions, multimodal). */
function checkSourceCommon(c: TrafficSource, p: SpecPath, src: SpecSource): void {
  checkNonNegative(src, [...p, 'prefix_length'], c.prefixLength, 'token count');
  checkDist(src, [...p, 'input_distribution'], c.inputDist);
  checkDist(src, [...p, 'output_distribution'], c.outputDist);
  checkNonNegative(src, [...p, 'timeout'], c.timeout, 'timeout in µs (0 = none)');
  checkNonNegative(src, [...p, 'slo_target_us'], c.sloTargetUs, 'target in µs (0 = none)');
  const mt = c.reasoning?.multiTurn ?? null;
  if (mt !== null && mt.maxRounds < 1) {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      [...p, 'reasoning', 'multi_turn', 'max_rounds'],
      `must be >= 1, got ${mt.maxRounds}`,
      'set max_rounds to the number of rounds per session',
    );
  }
  if (c.multimodal !== null) checkMultimodal(src, [...p, 'multimodal'], c.multimodal);
  const ratio = c.reasoning?.reasonRatioDist;
  if (ratio !== undefined && (ratio.type !== '' || ratio.params.size > 0)) checkDist(src, [...p, 'reasoning', 'reason_ratio_distribution'], ratio, true);
}

function checkClient(c: ClientSpec, p: SpecPath, src: SpecSource): void {
  checkSloClass(src, [...p, 'slo_class'], c.sloClass);
  checkNonNegative(src, [...p, 'concurrency'], c.concurrency, 'number of users');
  checkNonNegative(src, [...p, 'think_time_us'], c.thinkTimeUs, 'think time in µs');
  if (c.concurrency > 0 && c.rateFraction > 0) {
    src.fail(
      'WORKLOAD_SPEC_CONFLICT',
      [...p, 'rate_fraction'],
      'concurrency and rate_fraction are mutually exclusive',
      'remove one of them',
      true,
    );
  }
  const rateBased = c.concurrency === 0;
  if (rateBased) checkPositiveRate(src, [...p, 'rate_fraction'], c.rateFraction, src.has([...p, 'rate_fraction']));
  checkArrival(src, [...p, 'arrival'], c.arrival, rateBased);
  checkSourceCommon(c, p, src);
  if (c.lifecycle !== null) checkLifecycle(c.lifecycle, [...p, 'lifecycle'], src);
}

function checkLifecycle(l: LifecycleSpec, p: SpecPath, src: SpecSource): void {
  if (l.windows.length === 0) src.fail('WORKLOAD_SPEC_VALUE', p, 'lifecycle has no windows', 'add windows or remove lifecycle', true);
  l.windows.forEach((w, j) => {
    const wp: SpecPath = [...p, 'windows', j];
    if (w.startUs < 0) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...wp, 'start_us'],
        `must be non-negative, got ${w.startUs}`,
        'start windows at 0 or later',
      );
    }
    if (w.endUs <= w.startUs) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...wp, 'end_us'],
        `end_us (${w.endUs}) must be greater than start_us (${w.startUs})`,
        'make the window non-empty',
      );
    }
    if (w.traceRate !== null && w.traceRate < 0) {
      src.fail(
        'WORKLOAD_SPEC_RATE',
        [...wp, 'trace_rate'],
        `must be non-negative, got ${goF(w.traceRate)}`,
        'set a rate >= 0',
      );
    }
    if (w.arrival !== null) checkArrival(src, [...wp, 'arrival'], w.arrival, true);
    if (w.inputDist !== null) checkDist(src, [...wp, 'input_distribution'], w.inputDist);
    if (w.outputDist !== null) checkDist(src, [...wp, 'output_distribution'], w.outputDist);
  });
}

function checkCohort(c: CohortSpec, p: SpecPath, src: SpecSource): void {
  if (c.population <= 0) {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      [...p, 'population'],
      `must be positive, got ${c.population}`,
      'set the number of members (1 or more)',
    );
  }
  if (c.population > MAX_COHORT_POPULATION) {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      [...p, 'population'],
      `${c.population} exceeds the maximum ${MAX_COHORT_POPULATION}`,
      'split the cohort',
    );
  }
  checkPositiveRate(src, [...p, 'rate_fraction'], c.rateFraction, src.has([...p, 'rate_fraction']));
  checkSloClass(src, [...p, 'slo_class'], c.sloClass);
  checkArrival(src, [...p, 'arrival'], c.arrival, true);
  checkCohortPatterns(c, p, src);
  if (c.prefixSharing !== '' && c.prefixSharing !== 'shared' && c.prefixSharing !== 'per_member') {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      [...p, 'prefix_sharing'],
      `must be "shared" or "per_member", got "${c.prefixSharing}"`,
      'use shared (one prefix for all members) or per_member',
    );
  }
  if (c.prefixSharing === 'per_member' && c.prefixGroup === '') {
    src.fail('WORKLOAD_SPEC_VALUE', [...p, 'prefix_sharing'], 'per_member prefix sharing requires prefix_group', 'set prefix_group');
  }
  checkSourceCommon(c, p, src);
}

function checkCohortPatterns(c: CohortSpec, p: SpecPath, src: SpecSource): void {
  if (c.diurnal !== null) {
    const r = c.diurnal.peakToTroughRatio;
    if (r < 1.0) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...p, 'diurnal', 'peak_to_trough_ratio'],
        `must be a finite number >= 1.0, got ${goF(r)}`,
        'set the peak/trough ratio (1 = flat)',
      );
    }
    const h = c.diurnal.peakHour;
    if (h < 0 || h > 23) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...p, 'diurnal', 'peak_hour'],
        `must be 0-23, got ${h}`,
        'give the hour of peak traffic',
      );
    }
  }
  if (c.spike !== null) {
    checkNonNegative(src, [...p, 'spike', 'start_time_us'], c.spike.startTimeUs, 'start time in µs');
    if (c.spike.durationUs <= 0) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...p, 'spike', 'duration_us'],
        `must be > 0, got ${c.spike.durationUs}`,
        'set the spike length in µs',
      );
    }
  }
  if (c.drain !== null) {
    checkNonNegative(src, [...p, 'drain', 'start_time_us'], c.drain.startTimeUs, 'start time in µs');
    if (c.drain.rampDurationUs <= 0) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...p, 'drain', 'ramp_duration_us'],
        `must be > 0, got ${c.drain.rampDurationUs}`,
        'set the ramp length in µs',
      );
    }
  }
}

/** slo_class must be set on every client and cohort or on none (empty counts as "standard" in metrics). */
function checkMixedSlo(spec: WorkloadSpec, src: SpecSource): void {
  const entries: [SpecPath, string][] = [
    ...spec.clients.map((c, i): [SpecPath, string] => [['clients', i], c.sloClass]),
    ...spec.cohorts.map((c, i): [SpecPath, string] => [['cohorts', i], c.sloClass]),
  ];
  const empty = entries.filter(([, cls]) => cls === '');
  if (empty.length === 0 || empty.length === entries.length) return;
  const explicit = entries.filter(([, cls]) => cls !== '').length;
  src.fail(
    'WORKLOAD_SPEC_CONFLICT',
    empty[0]![0],
    `slo_class is missing here but set on ${explicit} other client(s)/cohort(s); if any sets slo_class, all must`,
    'add slo_class to every client and cohort, or remove it everywhere',
  );
}
