/**
 * Splitting `aggregate_rate` across clients, and the lifecycle-window predicates the generator uses.
 */
import type { ActiveWindow, ClientSpec, LifecycleSpec } from './types.js';

function hasWindows(l: LifecycleSpec | null): l is LifecycleSpec {
  return l !== null && l.windows.length > 0;
}

/** Whether two clients are ever active at the same time (a client without windows is always active). */
export function windowsOverlap(a: LifecycleSpec | null, b: LifecycleSpec | null): boolean {
  if (!hasWindows(a) || !hasWindows(b)) return true;
  for (const wa of a.windows) {
    for (const wb of b.windows) {
      if (wa.startUs < wb.endUs && wb.startUs < wa.endUs) return true;
    }
  }
  return false;
}

/**
 * Per-client rates in requests/µs. Without lifecycle windows each client gets `aggregate · f_i / Σf`. With
 * windows each client's fraction is divided by the sum over the clients whose windows overlap its own (so every
 * phase runs at the aggregate rate); clients with a non-positive fraction get 0 there.
 */
export function normalizeRateFractions(clients: readonly ClientSpec[], aggregateRate: number): number[] {
  if (!clients.some((c) => hasWindows(c.lifecycle))) {
    let total = 0.0;
    for (const c of clients) total += c.rateFraction;
    if (total === 0) return clients.map(() => 0);
    return clients.map((c) => (aggregateRate * (c.rateFraction / total)) / 1e6);
  }
  // The co-active sum depends only on the client's windows: computed once per lifecycle object (a cohort's
  // members share one), with each overlap test done once per pair of lifecycle objects, so a large cohort
  // costs O(clients) instead of O(clients²). The summation order, hence the float result, is unchanged.
  const coActiveOf = new Map<LifecycleSpec | null, number>();
  const coActive = (l: LifecycleSpec | null): number => {
    let sum = coActiveOf.get(l);
    if (sum !== undefined) return sum;
    const overlaps = new Map<LifecycleSpec | null, boolean>();
    sum = 0.0;
    for (const o of clients) {
      if (o.rateFraction <= 0) continue;
      let ov = overlaps.get(o.lifecycle);
      if (ov === undefined) overlaps.set(o.lifecycle, (ov = windowsOverlap(l, o.lifecycle)));
      if (ov) sum += o.rateFraction;
    }
    coActiveOf.set(l, sum);
    return sum;
  };
  return clients.map((c) => {
    if (c.rateFraction <= 0) return 0;
    const sum = coActive(c.lifecycle);
    if (sum === 0) return 0;
    return (aggregateRate * (c.rateFraction / sum)) / 1e6;
  });
}

/** Whether `t` falls in one of the windows (each `[start, end)`). */
export function isInActiveWindow(t: number, l: LifecycleSpec): boolean {
  return l.windows.some((w) => t >= w.startUs && t < w.endUs);
}

/** The latest window end (0 for no windows). */
export function lastWindowEndUs(l: LifecycleSpec): number {
  let end = 0;
  for (const w of l.windows) if (w.endUs > end) end = w.endUs;
  return end;
}

/** Whether any window overrides the rate or distributions, which switches generation to the per-window path. */
export function hasPerWindowParameters(clients: readonly ClientSpec[]): boolean {
  const overrides = (w: ActiveWindow): boolean => w.traceRate !== null || w.arrival !== null || w.inputDist !== null || w.outputDist !== null;
  return clients.some((c) => c.lifecycle !== null && c.lifecycle.windows.some(overrides));
}
