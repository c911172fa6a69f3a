/**
 * Field-level checks shared by clients, cohorts and windows: SLO classes, arrival processes, distributions and
 * the small numeric rules. Each failure is reported through the spec source so it carries `file:line:col`.
 */
import { ARRIVAL_PROCESSES } from './arrival.js';
import { MAX_REQUEST_TOKENS } from '../../domain/units.js';
import type { SpecPath } from './errors.js';
import { DIST_TYPES, DistributionError, newLengthSampler } from './length.js';
import type { ArrivalSpec, DistSpec, MultimodalSpec } from './types.js';
import type { SpecSource } from './yaml-source.js';
import { showValue } from '../../domain/errors.js';

export const SLO_CLASSES = ['critical', 'standard', 'sheddable', 'batch', 'background'] as const;
export const CATEGORIES = ['language', 'multimodal', 'reasoning'] as const;

/** Go's %f: six decimals (used to echo offending values the way the reference prints them). */
export function goF(v: number): string {
  return Number.isFinite(v) ? v.toFixed(6) : String(v);
}

export function checkSloClass(src: SpecSource, path: SpecPath, cls: string): void {
  if (cls === '' || (SLO_CLASSES as readonly string[]).includes(cls)) return;
  src.fail('WORKLOAD_SPEC_VALUE', path, `unknown slo_class ${showValue(cls)}`, `use one of ${SLO_CLASSES.join(', ')}, or leave it empty`);
}

/** A positive rate (finiteness is already guaranteed by the schema); `present` = written in the file. */
export function checkPositiveRate(src: SpecSource, path: SpecPath, v: number, present: boolean): void {
  if (!present) src.fail('WORKLOAD_SPEC_RATE', path, 'is missing', 'set a positive number');
  if (v <= 0) src.fail('WORKLOAD_SPEC_RATE', path, `must be positive, got ${goF(v)}`, 'set a positive number');
}

export function checkNonNegative(src: SpecSource, path: SpecPath, v: number | null, what = 'value'): void {
  if (v !== null && v < 0) src.fail('WORKLOAD_SPEC_VALUE', path, `must be non-negative, got ${v}`, `set a ${what} >= 0`);
}

/** Process name, the Weibull CV range (unless fitted shape+scale are given) and positive cv/shape/scale. */
export function checkArrival(src: SpecSource, path: SpecPath, a: ArrivalSpec, checkProcess: boolean): void {
  if (checkProcess) {
    if (!(ARRIVAL_PROCESSES as readonly string[]).includes(a.process)) {
      const what = a.process === '' ? 'arrival process is missing' : `unknown arrival process "${a.process}"`;
      src.fail('WORKLOAD_SPEC_VALUE', [...path, 'process'], what, `set process to one of ${ARRIVAL_PROCESSES.join(', ')}`);
    }
    const explicit = a.shape !== null && a.scale !== null && a.shape > 0 && a.scale > 0;
    if (a.process === 'weibull' && a.cv !== null && !explicit && (a.cv < 0.01 || a.cv > 10.4)) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...path, 'cv'],
        `weibull CV must be in [0.01, 10.4], got ${goF(a.cv)}`,
        'choose a cv in that range or give explicit shape and scale',
      );
    }
    if (a.cv !== null && a.cv <= 0) {
      src.fail(
        'WORKLOAD_SPEC_VALUE',
        [...path, 'cv'],
        `must be positive, got ${goF(a.cv)}`,
        'set cv > 0 (1 = Poisson-like)',
      );
    }
  }
  if (a.shape !== null && a.shape <= 0) {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      [...path, 'shape'],
      `must be positive, got ${goF(a.shape)}`,
      'set shape > 0 or remove it',
    );
  }
  if (a.scale !== null && a.scale <= 0) {
    src.fail(
      'WORKLOAD_SPEC_VALUE',
      [...path, 'scale'],
      `must be positive, got ${goF(a.scale)}`,
      'set scale > 0 or remove it',
    );
  }
}

/**
 * A distribution the generator can build: known type, finite parameters (guaranteed by the schema), the type's
 * required parameters and, for bounded types, min <= max.
 */
export function checkDist(src: SpecSource, path: SpecPath, d: DistSpec, percent = false): void {
  if (!(DIST_TYPES as readonly string[]).includes(d.type)) {
    const what = d.type === '' ? 'distribution type is missing' : `unknown distribution type "${d.type}"`;
    src.fail('WORKLOAD_SPEC_DISTRIBUTION', [...path, 'type'], what, `set type to one of ${DIST_TYPES.join(', ')}`);
  }
  try {
    newLengthSampler(d);
  } catch (e) {
    if (!(e instanceof DistributionError)) throw e;
    const at = e.param !== null && d.params.has(e.param) ? [...path, 'params', e.param] : [...path, 'params'];
    src.fail('WORKLOAD_SPEC_DISTRIBUTION', at, e.message, e.fix, e.param !== null && d.params.has(e.param));
  }
  checkDistValues(src, path, d, percent);
}

/**
 * Parameter values the reference's samplers accept and then misuse silently (docs/reference-differences.md,
 * "Inputs blis-ts refuses"): a constant length below 1 (drawn as 1), gaussian bounds the wrong way round (every draw
 * clamped to one bound), a negative spread, a non-positive exponential mean, a mixture weight outside [0, 1].
 */
function checkDistValues(src: SpecSource, path: SpecPath, d: DistSpec, percent: boolean): void {
  const p = d.params;
  const bad = (key: string, problem: string, fix: string): never => src.fail('WORKLOAD_SPEC_DISTRIBUTION', [...path, 'params', key], problem, fix);
  const v = (key: string): number | undefined => p.get(key);
  // Lengths whose typical draw no request could hold (MAX_REQUEST_TOKENS); a percentage is clamped to 100 anyway.
  const tooLong = (key: string, value: number | undefined): void => {
    if (!percent && value !== undefined && value > MAX_REQUEST_TOKENS) {
      bad(key, `${goF(value)} tokens exceed the largest request blis-ts simulates (${MAX_REQUEST_TOKENS.toLocaleString('en-US')} tokens)`, 'use a smaller length');
    }
  };
  if (d.type === 'constant') tooLong('value', v('value'));
  if (d.type === 'gaussian' || d.type === 'exponential') tooLong('mean', v('mean'));
  if (d.type === 'gaussian' || d.type === 'exponential' || d.type === 'lognormal') tooLong('max', v('max'));
  if (d.type === 'lognormal' && !percent && Math.exp(v('mu') ?? 0) > MAX_REQUEST_TOKENS) {
    bad('mu', `the median length e^mu (${goF(Math.exp(v('mu')!))} tokens) exceeds the largest request blis-ts simulates (${MAX_REQUEST_TOKENS.toLocaleString('en-US')} tokens)`, 'use a smaller mu');
  }
  if (d.type === 'pareto_lognormal') tooLong('xm', v('xm'));
  if (d.type === 'empirical') for (const [k] of p) tooLong(k, Number.parseInt(k, 10));
  switch (d.type) {
    case 'constant': {
      const value = v('value')!;
      // A reason-ratio percentage of 0 is what the inference-perf expansion writes (the reference's own quirk).
      if (value < 1 && !percent) bad('value', `a constant length must be at least 1, got ${goF(value)} (it would be drawn as 1)`, 'set value to a whole number >= 1');
      break;
    }
    case 'gaussian': {
      const [min, max, sd] = [v('min')!, v('max')!, v('std_dev')!];
      if (sd < 0) bad('std_dev', `must be non-negative, got ${goF(sd)}`, 'set std_dev >= 0 (0 = always the mean)');
      if (min > max) bad('min', `gaussian: min (${goF(min)}) must be <= max (${goF(max)})`, 'make params.min at most params.max');
      break;
    }
    case 'exponential': {
      const mean = v('mean')!;
      if (mean <= 0) bad('mean', `must be positive, got ${goF(mean)}`, 'set the mean length in tokens (> 0)');
      break;
    }
    case 'lognormal': {
      const sigma = v('sigma')!;
      if (sigma < 0) bad('sigma', `must be non-negative, got ${goF(sigma)}`, 'set sigma >= 0');
      break;
    }
    case 'pareto_lognormal': {
      for (const key of ['alpha', 'xm'] as const) if (v(key)! <= 0) bad(key, `must be positive, got ${goF(v(key)!)}`, `set ${key} > 0`);
      if (v('sigma')! < 0) bad('sigma', `must be non-negative, got ${goF(v('sigma')!)}`, 'set sigma >= 0');
      const w = v('mix_weight')!;
      if (w < 0 || w > 1) bad('mix_weight', `must be in [0, 1], got ${goF(w)}`, 'set the Pareto share of the mixture between 0 and 1');
      break;
    }
  }
}

/** Multimodal distributions are optional (empty type = modality absent); given ones must be buildable. */
export function checkMultimodal(src: SpecSource, path: SpecPath, m: MultimodalSpec): void {
  const dists: [string, DistSpec][] = [
    ['text_distribution', m.textDist],
    ['image_distribution', m.imageDist],
    ['image_count_distribution', m.imageCountDist],
    ['audio_distribution', m.audioDist],
    ['audio_count_distribution', m.audioCountDist],
    ['video_distribution', m.videoDist],
    ['video_count_distribution', m.videoCountDist],
  ];
  for (const [key, d] of dists) if (d.type !== '' || d.params.size > 0) checkDist(src, [...path, key], d);
}
