/**
 * Warm-up of a freshly started replica (policy-search-design §4 WarmupProfile): its step times are
 * multiplied by a penalty factor that starts at `initialFactor` and falls to 1 over `durationUs` following
 * the curve — linear, exponential (e^{-5x}, faster early recovery) or step (full penalty, then none). The
 * wrapper reads the replica's own clock; the warm-up starts when {@link WarmupState.startUs} is set.
 */
import type { LatencyModel, StepBatch } from './types.js';

export const WARMUP_CURVES = ['linear', 'exponential', 'step'] as const;
export type WarmupCurve = (typeof WARMUP_CURVES)[number];

export interface WarmupProfile {
  readonly curve: WarmupCurve;
  readonly durationUs: number;
  /** Step-time multiplier at the start, >= 1 (1.5 = 50% slower). */
  readonly initialFactor: number;
}

/** Mutable per replica: when its warm-up began (-1 = not yet: full penalty while loading is irrelevant). */
export interface WarmupState {
  startUs: number;
}

/** The penalty at `elapsedUs` into the warm-up. */
export function warmupFactor(p: WarmupProfile, elapsedUs: number): number {
  if (elapsedUs >= p.durationUs || p.durationUs <= 0) return 1;
  const x = Math.max(0, elapsedUs) / p.durationUs;
  switch (p.curve) {
    case 'linear':
      return p.initialFactor + (1 - p.initialFactor) * x;
    case 'exponential':
      return 1 + (p.initialFactor - 1) * Math.exp(-5 * x);
    case 'step':
      return p.initialFactor;
  }
}

export function withWarmup(base: LatencyModel, p: WarmupProfile, state: WarmupState, clock: () => number): LatencyModel {
  return {
    name: `${base.name}+warmup`,
    stepTime(batch: StepBatch): number {
      const t = base.stepTime(batch);
      if (state.startUs < 0) return t;
      const f = warmupFactor(p, clock() - state.startUs);
      return f === 1 ? t : Math.max(1, Math.round(t * f));
    },
    queueingTime: (r) => base.queueingTime(r),
    outputTokenProcessingTime: () => base.outputTokenProcessingTime(),
    postDecodeFixedOverhead: () => base.postDecodeFixedOverhead(),
    ...(base.vllmPreemption === true ? { vllmPreemption: true } : {}),
  };
}
