/**
 * Cohort expansion: a cohort of `population` identical members becomes that many explicit clients
 * (`<id>-<j>`), each with `rate_fraction / population`, and its diurnal / spike / drain pattern becomes lifecycle
 * windows. Pure: nothing here draws random numbers (the reference seeds a per-cohort RNG it never uses).
 */
import { goInt64 } from '../../gocompat/go-math.js';
import { goCos } from '../../gocompat/go-math-special.js';
import type { ActiveWindow, ClientSpec, CohortSpec, DiurnalSpec, DrainSpec, SpikeSpec } from './types.js';

const HOURS_PER_DAY = 24;
const US_PER_HOUR = 3_600_000_000;
const DRAIN_SEGMENTS = 10;

function window(startUs: number, endUs: number, traceRate: number | null = null): ActiveWindow {
  return { startUs, endUs, traceRate, arrival: null, inputDist: null, outputDist: null };
}

/**
 * 24 hourly windows whose *active length* follows the cosine profile (a duty cycle, not a rate change): the peak
 * hour is active for the whole hour, the trough (peak ± 12 h) for 1/R of it.
 */
export function diurnalWindows(d: DiurnalSpec): ActiveWindow[] {
  const r = d.peakToTroughRatio;
  const out: ActiveWindow[] = [];
  for (let h = 0; h < HOURS_PER_DAY; h++) {
    const angle = (2.0 * Math.PI * (h - d.peakHour)) / HOURS_PER_DAY;
    const multiplier = ((1.0 + goCos(angle)) / 2.0) * (1.0 - 1.0 / r) + 1.0 / r;
    let durationUs = goInt64(US_PER_HOUR * multiplier);
    if (durationUs > US_PER_HOUR) durationUs = US_PER_HOUR;
    if (durationUs < 1) durationUs = 1;
    out.push(window(h * US_PER_HOUR, h * US_PER_HOUR + durationUs));
  }
  return out;
}

/** One window for the spike; its cohort-level trace rate is split across members by the caller. */
export function spikeWindow(s: SpikeSpec): ActiveWindow {
  return window(s.startTimeUs, s.startTimeUs + s.durationUs, s.traceRate);
}

/**
 * A linear ramp-down approximated by 10 segments of `ramp/10` µs, segment i active for (10−i)/10 of its length,
 * preceded by a full-rate window [0, start) when the drain does not start at 0.
 */
export function drainWindows(d: DrainSpec): ActiveWindow[] {
  let segment = Math.trunc(d.rampDurationUs / DRAIN_SEGMENTS);
  if (segment < 1) segment = 1;
  const out: ActiveWindow[] = [];
  if (d.startTimeUs > 0) out.push(window(0, d.startTimeUs));
  for (let i = 0; i < DRAIN_SEGMENTS; i++) {
    const fraction = (DRAIN_SEGMENTS - i) / DRAIN_SEGMENTS;
    const start = d.startTimeUs + i * segment;
    let active = goInt64(segment * fraction);
    if (active < 1) active = 1;
    out.push(window(start, start + active));
  }
  return out;
}

function memberWindows(c: CohortSpec): ActiveWindow[] {
  const windows: ActiveWindow[] = [];
  if (c.diurnal !== null) windows.push(...diurnalWindows(c.diurnal));
  if (c.spike !== null) {
    const w = spikeWindow(c.spike);
    if (w.traceRate !== null) w.traceRate /= c.population;
    windows.push(w);
  }
  if (c.drain !== null) windows.push(...drainWindows(c.drain));
  return windows;
}

/** The explicit clients of every cohort, cohort by cohort, member by member. */
export function expandCohorts(cohorts: readonly CohortSpec[]): ClientSpec[] {
  const out: ClientSpec[] = [];
  for (const c of cohorts) {
    if (c.population <= 0) continue;
    const perMember = c.rateFraction / c.population;
    // Every member has the same windows; one shared (never mutated) list keeps a large population cheap.
    const windows = memberWindows(c);
    const lifecycle = windows.length > 0 ? { windows } : null;
    for (let j = 0; j < c.population; j++) {
      out.push({
        id: `${c.id}-${j}`,
        tenantId: c.tenantId,
        sloClass: c.sloClass,
        model: c.model,
        adapter: c.adapter,
        rateFraction: perMember,
        arrival: c.arrival,
        inputDist: c.inputDist,
        outputDist: c.outputDist,
        prefixGroup: c.prefixSharing === 'per_member' && c.prefixGroup !== '' ? `${c.prefixGroup}-${j}` : c.prefixGroup,
        prefixLength: c.prefixLength,
        streaming: c.streaming,
        network: c.network,
        multimodal: c.multimodal,
        reasoning: c.reasoning,
        timeout: c.timeout,
        sloTargetUs: c.sloTargetUs,
        closedLoop: c.closedLoop,
        concurrency: 0,
        thinkTimeUs: 0,
        lifecycle,
      });
    }
  }
  return out;
}
