/**
 * zod schemas of `load_profile:` and `misbehavior:`, plugged into the spec v2 schema (src/workload/spec/schema.ts).
 *
 * Each block is one strict object holding the union of every kind's parameters, so a misspelt key is reported as
 * an unknown key with a did-you-mean hint like everywhere else in the spec; whether a parameter belongs to the
 * chosen kind is checked afterwards (validate.ts), where the message can name both.
 */
import { z } from 'zod';
import type { LoadProfileSpec, LoadSegment, MisbehaviorSpec } from './types.js';

const float = z.preprocess((v) => (typeof v === 'bigint' ? Number(v) : v), z.number());
const int = z.number().int();
const ptr = <T extends z.ZodType>(schema: T) => schema.optional().transform((v) => v ?? null);

export const segmentObject = z.strictObject({
  start_s: ptr(float),
  end_s: ptr(float),
  kind: z.string().optional().transform((v) => v ?? ''),
  multiplier: ptr(float),
  levels: ptr(z.array(float)),
  from: ptr(float),
  to: ptr(float),
  period_s: ptr(float),
  peak_at_s: ptr(float),
  peak: ptr(float),
  trough: ptr(float),
  at_s: ptr(float),
  duration_s: ptr(float),
  base: ptr(float),
  decay_s: ptr(float),
});

const segmentSchema = segmentObject.transform(
  (s): LoadSegment => ({
    // A missing bound is reported by the validator (which knows the position). YAML cannot produce NaN here (the
    // number schema rejects .nan), so NaN unambiguously means "absent".
    startS: s.start_s ?? Number.NaN,
    endS: s.end_s ?? Number.NaN,
    kind: s.kind,
    multiplier: s.multiplier,
    levels: s.levels,
    from: s.from,
    to: s.to,
    periodS: s.period_s,
    peakAtS: s.peak_at_s,
    peak: s.peak,
    trough: s.trough,
    atS: s.at_s,
    durationS: s.duration_s,
    base: s.base,
    decayS: s.decay_s,
  }),
);

export const loadProfileObject = z.strictObject({
  default_multiplier: float.optional().transform((v) => v ?? 1),
  segments: z
    .array(z.preprocess((v) => v ?? {}, segmentSchema))
    .optional()
    .transform((v) => v ?? []),
});

export const loadProfileSchema = loadProfileObject.transform(
  (p): LoadProfileSpec => ({ defaultMultiplier: p.default_multiplier, segments: p.segments }),
);

export const misbehaviorObject = z.strictObject({
  kind: z.string().optional().transform((v) => v ?? ''),
  burst_rate_multiplier: ptr(float),
  off_rate_multiplier: ptr(float),
  mean_on_s: ptr(float),
  mean_off_s: ptr(float),
  pareto_alpha: ptr(float),
  rate_multiplier: ptr(float),
  input_multiplier: ptr(float),
  fixed_input_tokens: ptr(int),
  output_multiplier: ptr(float),
  fraction: ptr(float),
  group: ptr(z.string()),
  period_s: ptr(float),
  start_s: ptr(float),
  burst_size: ptr(int),
  jitter_ms: ptr(float),
  background_multiplier: ptr(float),
});

export const misbehaviorSchema = misbehaviorObject.transform(
  (m): MisbehaviorSpec => ({
    kind: m.kind,
    burstRateMultiplier: m.burst_rate_multiplier,
    offRateMultiplier: m.off_rate_multiplier,
    meanOnS: m.mean_on_s,
    meanOffS: m.mean_off_s,
    paretoAlpha: m.pareto_alpha,
    rateMultiplier: m.rate_multiplier,
    inputMultiplier: m.input_multiplier,
    fixedInputTokens: m.fixed_input_tokens,
    outputMultiplier: m.output_multiplier,
    fraction: m.fraction,
    group: m.group,
    periodS: m.period_s,
    startS: m.start_s,
    burstSize: m.burst_size,
    jitterMs: m.jitter_ms,
    backgroundMultiplier: m.background_multiplier,
  }),
);

const keysOf = (o: { shape: object }): readonly string[] => Object.keys(o.shape);

/** Valid keys of the extension blocks, by the key that introduces them (for unknown-key hints). */
export const PROFILE_KEYS_BY_NAME: ReadonlyMap<string, readonly string[]> = new Map([
  ['load_profile', keysOf(loadProfileObject)],
  ['misbehavior', keysOf(misbehaviorObject)],
]);

/** Valid keys of list items, by the list's key. */
export const PROFILE_ITEM_KEYS: ReadonlyMap<string, readonly string[]> = new Map([['segments', keysOf(segmentObject)]]);
