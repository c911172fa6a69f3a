/**
 * Semantic checks of `load_profile:` and `misbehavior:` (the structure and value kinds are checked by the zod
 * schemas in schema.ts). Every failure names `file:line:col`, the field and the fix, like the rest of the spec.
 *
 * Parameters are checked against the YAML text (`src.has`), so a parameter that does not belong to the chosen
 * kind is reported at its own key, and "absent" is never confused with "0".
 */
import type { SpecPath } from '../spec/errors.js';
import { hasPerWindowParameters } from '../spec/rates.js';
import type { ClientSpec, WorkloadSpec } from '../spec/types.js';
import type { SpecSource } from '../spec/yaml-source.js';
import type { LoadProfileSpec, LoadSegment, MisbehaviorSpec } from './types.js';
import { MISBEHAVIOR_KINDS, SEGMENT_KINDS, SPIKE_DEFAULT_BASE } from './types.js';
import { showValue } from '../../domain/errors.js';

/** Parameter keys each segment kind takes (besides start_s, end_s, kind). */
const SEGMENT_PARAMS: Readonly<Record<string, readonly string[]>> = {
  constant: ['multiplier'],
  step: ['levels'],
  ramp: ['from', 'to'],
  diurnal: ['period_s', 'peak_at_s', 'peak', 'trough'],
  spike: ['at_s', 'duration_s', 'peak', 'base', 'decay_s'],
};
const SEGMENT_REQUIRED: Readonly<Record<string, readonly string[]>> = {
  constant: ['multiplier'],
  step: ['levels'],
  ramp: ['from', 'to'],
  diurnal: ['peak', 'trough'],
  spike: ['peak'],
};
const ALL_SEGMENT_PARAMS = [...new Set(Object.values(SEGMENT_PARAMS).flat())];

const MISBEHAVIOR_PARAMS: Readonly<Record<string, readonly string[]>> = {
  bursty: ['burst_rate_multiplier', 'off_rate_multiplier', 'mean_on_s', 'mean_off_s', 'pareto_alpha'],
  abusive: ['rate_multiplier', 'input_multiplier', 'fixed_input_tokens', 'output_multiplier', 'fraction'],
  adversarial: ['group', 'period_s', 'start_s', 'burst_size', 'jitter_ms', 'background_multiplier'],
};
const MISBEHAVIOR_REQUIRED: Readonly<Record<string, readonly string[]>> = {
  bursty: ['burst_rate_multiplier', 'mean_on_s', 'mean_off_s'],
  abusive: [],
  adversarial: ['group', 'period_s', 'burst_size'],
};
/** Numbers in messages, shortest form (these blocks have no reference messages to match). */
const fmt = (v: number): string => String(v);

const ALL_MISBEHAVIOR_PARAMS = [...new Set(Object.values(MISBEHAVIOR_PARAMS).flat())];

type Check = (v: number) => boolean;
const nonNegative: [Check, string] = [(v) => v >= 0, 'must be >= 0'];
const positive: [Check, string] = [(v) => v > 0, 'must be > 0'];

function checkNumber(src: SpecSource, path: SpecPath, v: number | null, [ok, rule]: [Check, string], fix: string): void {
  if (v !== null && !ok(v)) src.fail('WORKLOAD_SPEC_VALUE', path, `${rule}, got ${fmt(v)}`, fix);
}

/** Kind present and known, every required parameter given, and no parameter of another kind. */
function checkKindParams(
  src: SpecSource,
  p: SpecPath,
  kind: string,
  what: string,
  kinds: readonly string[],
  params: Readonly<Record<string, readonly string[]>>,
  required: Readonly<Record<string, readonly string[]>>,
  all: readonly string[],
): void {
  if (kind === '') src.fail('WORKLOAD_SPEC_VALUE', p, `${what} has no kind`, `add kind: one of ${kinds.join(', ')}`);
  const own = params[kind];
  if (own === undefined) src.fail('WORKLOAD_SPEC_VALUE', [...p, 'kind'], `unknown ${what} kind ${showValue(kind)}`, `use one of ${kinds.join(', ')}`);
  for (const key of all) {
    if (!own.includes(key) && src.has([...p, key])) {
      const takes = own.length === 0 ? 'no parameters' : own.join(', ');
      src.fail('WORKLOAD_SPEC_VALUE', [...p, key], `${showValue(key)} is not a parameter of a ${kind} ${what}`, `remove it (${kind} takes ${takes})`, true);
    }
  }
  for (const key of required[kind] ?? []) {
    if (!src.has([...p, key])) src.fail('WORKLOAD_SPEC_VALUE', p, `a ${kind} ${what} requires ${showValue(key)}`, `add ${key} (${kind} takes ${own.join(', ')})`);
  }
}

function checkSegment(src: SpecSource, p: SpecPath, s: LoadSegment): void {
  if (Number.isNaN(s.startS)) src.fail('WORKLOAD_SPEC_VALUE', p, 'segment has no start_s', 'add start_s (seconds from the start of the run)');
  if (Number.isNaN(s.endS)) src.fail('WORKLOAD_SPEC_VALUE', p, 'segment has no end_s', 'add end_s (seconds, after start_s)');
  checkNumber(src, [...p, 'start_s'], s.startS, nonNegative, 'start segments at 0 or later');
  if (!(s.endS > s.startS)) {
    src.fail('WORKLOAD_SPEC_VALUE', [...p, 'end_s'], `end_s (${fmt(s.endS)}) must be greater than start_s (${fmt(s.startS)})`, 'make the segment non-empty');
  }
  checkKindParams(src, p, s.kind, 'segment', SEGMENT_KINDS, SEGMENT_PARAMS, SEGMENT_REQUIRED, ALL_SEGMENT_PARAMS);
  const mult = 'multipliers scale the client rate and cannot be negative';
  for (const [key, v] of [['multiplier', s.multiplier], ['from', s.from], ['to', s.to], ['peak', s.peak], ['trough', s.trough], ['base', s.base]] as const) {
    checkNumber(src, [...p, key], v, nonNegative, mult);
  }
  if (s.levels !== null) {
    if (s.levels.length === 0) src.fail('WORKLOAD_SPEC_VALUE', [...p, 'levels'], 'levels is empty', 'list one multiplier per step, e.g. [1, 2, 4]');
    s.levels.forEach((v, i) => checkNumber(src, [...p, 'levels', i], v, nonNegative, mult));
  }
  if (s.kind === 'diurnal' && s.peak !== null && s.trough !== null && s.peak < s.trough) {
    src.fail('WORKLOAD_SPEC_VALUE', [...p, 'peak'], `peak (${fmt(s.peak)}) must be >= trough (${fmt(s.trough)})`, 'swap them');
  }
  checkNumber(src, [...p, 'period_s'], s.periodS, positive, 'set the cycle length in seconds (86400 = one day)');
  checkNumber(src, [...p, 'duration_s'], s.durationS, positive, 'set the spike length in seconds');
  checkNumber(src, [...p, 'decay_s'], s.decayS, nonNegative, 'set the decay time constant in seconds (0 = flat top)');
  if (s.atS !== null && !(s.atS >= s.startS && s.atS < s.endS)) {
    src.fail('WORKLOAD_SPEC_VALUE', [...p, 'at_s'], `at_s (${fmt(s.atS)}) must lie in the segment [${fmt(s.startS)}, ${fmt(s.endS)})`, 'move the spike inside its segment');
  }
}

/** The largest multiplier a segment reaches (with the defaults profile.ts applies to absent parameters). */
function peakMultiplier(s: LoadSegment): number {
  switch (s.kind) {
    case 'constant':
      return s.multiplier ?? 1;
    case 'step':
      return Math.max(...(s.levels ?? [1]));
    case 'ramp':
      return Math.max(s.from ?? 1, s.to ?? 1);
    case 'diurnal':
      return Math.max(s.peak ?? 1, s.trough ?? s.peak ?? 1);
    default: {
      const base = s.base ?? SPIKE_DEFAULT_BASE;
      return Math.max(base, s.peak ?? base);
    }
  }
}

/** A profile: a non-negative default, sorted, non-overlapping, valid segments, and some traffic at all. */
export function checkLoadProfile(src: SpecSource, p: SpecPath, lp: LoadProfileSpec): void {
  checkNumber(src, [...p, 'default_multiplier'], lp.defaultMultiplier, nonNegative, 'multipliers scale the client rate and cannot be negative');
  lp.segments.forEach((s, j) => {
    const sp: SpecPath = [...p, 'segments', j];
    checkSegment(src, sp, s);
    const prev = lp.segments[j - 1];
    if (prev !== undefined && s.startS < prev.endS) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...sp, 'start_s'],
        `segment starts at ${fmt(s.startS)} s, before the previous segment ends (${fmt(prev.endS)} s)`,
        'list segments in time order without overlaps',
      );
    }
  });
  if (lp.defaultMultiplier === 0 && lp.segments.every((s) => peakMultiplier(s) === 0)) {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      p,
      'every multiplier of this load profile is 0, so it would send no requests at all',
      'set default_multiplier or a segment multiplier above 0 (1 = the client\'s own rate)',
    );
  }
}

function checkMisbehavior(src: SpecSource, p: SpecPath, m: MisbehaviorSpec, c: ClientSpec): void {
  checkKindParams(src, p, m.kind, 'misbehavior', MISBEHAVIOR_KINDS, MISBEHAVIOR_PARAMS, MISBEHAVIOR_REQUIRED, ALL_MISBEHAVIOR_PARAMS);
  const mult = 'multipliers cannot be negative';
  checkNumber(src, [...p, 'burst_rate_multiplier'], m.burstRateMultiplier, positive, 'set how many times the rate rises during a burst');
  checkNumber(src, [...p, 'off_rate_multiplier'], m.offRateMultiplier, nonNegative, mult);
  checkNumber(src, [...p, 'mean_on_s'], m.meanOnS, positive, 'set the mean burst length in seconds');
  checkNumber(src, [...p, 'mean_off_s'], m.meanOffS, positive, 'set the mean quiet length in seconds');
  checkNumber(src, [...p, 'pareto_alpha'], m.paretoAlpha, [(v) => v > 1, 'must be > 1 (the mean is infinite otherwise)'], 'use e.g. 1.5 (heavy tail) to 3 (light tail)');
  checkNumber(src, [...p, 'rate_multiplier'], m.rateMultiplier, positive, 'set how many times faster the tenant sends');
  checkNumber(src, [...p, 'input_multiplier'], m.inputMultiplier, positive, 'set how many times longer the prompts are');
  checkNumber(src, [...p, 'output_multiplier'], m.outputMultiplier, positive, 'set how many times longer the outputs are');
  checkNumber(src, [...p, 'fixed_input_tokens'], m.fixedInputTokens, positive, 'set the prompt length in tokens');
  checkNumber(src, [...p, 'fraction'], m.fraction, [(v) => v > 0 && v <= 1, 'must be in (0, 1]'], 'set the share of requests that are abusive');
  checkNumber(src, [...p, 'period_s'], m.periodS, positive, 'set the time between synchronised bursts in seconds');
  checkNumber(src, [...p, 'start_s'], m.startS, nonNegative, 'set the first burst instant in seconds');
  checkNumber(src, [...p, 'burst_size'], m.burstSize, positive, 'set the requests each client sends per burst');
  checkNumber(src, [...p, 'jitter_ms'], m.jitterMs, nonNegative, 'set the jitter in milliseconds (0 = exactly synchronised)');
  checkNumber(src, [...p, 'background_multiplier'], m.backgroundMultiplier, nonNegative, mult);
  if (m.kind === 'abusive') {
    if (m.inputMultiplier !== null && m.fixedInputTokens !== null) {
      src.fail('WORKLOAD_SPEC_CONFLICT', [...p, 'fixed_input_tokens'], 'input_multiplier and fixed_input_tokens are mutually exclusive', 'keep one of them', true);
    }
    if (m.rateMultiplier === null && m.inputMultiplier === null && m.fixedInputTokens === null && m.outputMultiplier === null) {
      src.fail('WORKLOAD_SPEC_VALUE', p, 'an abusive misbehavior needs at least one effect', 'add rate_multiplier, input_multiplier, fixed_input_tokens or output_multiplier');
    }
    if (c.multimodal !== null && (m.inputMultiplier !== null || m.fixedInputTokens !== null)) {
      src.fail('WORKLOAD_SPEC_CONFLICT', p, 'oversized prompts are not supported for multimodal clients', 'remove input_multiplier / fixed_input_tokens or multimodal');
    }
  }
  if (m.kind === 'adversarial') {
    if (m.group === '') src.fail('WORKLOAD_SPEC_VALUE', [...p, 'group'], 'group is empty', 'name the group of clients that burst together');
    if (m.jitterMs !== null && m.periodS !== null && m.jitterMs * 1000 >= m.periodS * 1e6) {
      src.fail('WORKLOAD_SPEC_VALUE', [...p, 'jitter_ms'], `jitter (${fmt(m.jitterMs)} ms) must be shorter than period_s (${fmt(m.periodS)} s)`, 'reduce the jitter');
    }
  }
}

/** Clients of one adversarial group must agree on the shared instants (period_s and start_s). */
function checkAdversarialGroups(src: SpecSource, spec: WorkloadSpec): void {
  const first = new Map<string, [number, MisbehaviorSpec]>();
  spec.clients.forEach((c, i) => {
    const m = c.misbehavior;
    if (m === undefined || m.kind !== 'adversarial' || m.group === null) return;
    const seen = first.get(m.group);
    if (seen === undefined) {
      first.set(m.group, [i, m]);
      return;
    }
    const [j, ref] = seen;
    for (const [key, a, b] of [['period_s', m.periodS, ref.periodS], ['start_s', m.startS, ref.startS]] as const) {
      if (a !== b) {
        src.fail(
          'WORKLOAD_SPEC_CONFLICT',
          ['clients', i, 'misbehavior', key],
          `${key} differs from clients[${j}] in adversarial group "${m.group}" (${a === null ? 'absent' : fmt(a)} vs ${b === null ? 'absent' : fmt(b)})`,
          'clients of one group burst at shared instants: give them the same period_s and start_s',
        );
      }
    }
  });
}

/** Whether the spec takes the reference's per-window generation path, which fixes each window's request count. */
function perWindowPath(spec: WorkloadSpec): boolean {
  return hasPerWindowParameters(spec.clients) || spec.cohorts.some((c) => c.spike !== null && c.spike.traceRate !== null);
}

/** The extension blocks of `spec`; a no-op for specs that use neither. */
export function checkTrafficShaping(spec: WorkloadSpec, src: SpecSource): void {
  const anyClientBlock = spec.clients.some((c) => c.loadProfile !== undefined || c.misbehavior !== undefined);
  if (spec.loadProfile === undefined && !anyClientBlock) return;
  const conflictFix = 'remove per-window trace_rate/arrival/distribution overrides and spike trace_rate, or drop the block';
  const why = 'the per-window generation path (window overrides or cohort spike trace_rate) fixes each window\'s request count';
  if (spec.loadProfile !== undefined) {
    if (perWindowPath(spec)) src.fail('WORKLOAD_SPEC_CONFLICT', ['load_profile'], `load_profile cannot be used here: ${why}`, conflictFix, true);
    checkLoadProfile(src, ['load_profile'], spec.loadProfile);
  }
  spec.clients.forEach((c, i) => {
    for (const [key, block] of [['load_profile', c.loadProfile], ['misbehavior', c.misbehavior]] as const) {
      if (block === undefined) continue;
      const p: SpecPath = ['clients', i, key];
      if (perWindowPath(spec)) src.fail('WORKLOAD_SPEC_CONFLICT', p, `${key} cannot be used here: ${why}`, conflictFix, true);
      if (c.concurrency > 0 || c.reasoning?.multiTurn != null) {
        src.fail('WORKLOAD_SPEC_CONFLICT', p, `${key} applies to open-loop rate-based clients only`, 'remove it, or use rate_fraction without multi_turn', true);
      }
    }
    if (c.loadProfile !== undefined) checkLoadProfile(src, ['clients', i, 'load_profile'], c.loadProfile);
    if (c.misbehavior !== undefined) checkMisbehavior(src, ['clients', i, 'misbehavior'], c.misbehavior, c);
  });
  checkAdversarialGroups(src, spec);
}
