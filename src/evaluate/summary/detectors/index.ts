/**
 * The issue detectors of the reflection summary, one per file, in the order their findings are collected.
 * A detector reads one run's context and returns its findings (none, one, or one per tenant/class). To add
 * one: a file here exporting `detectX(c: RunCtx)`, an entry in `DETECTORS`, its thresholds in ../index.ts's comment.
 */
import type { Finding, RunCtx } from '../context.js';
import { detectImbalance } from './imbalance.js';
import { detectPreemption } from './preemption.js';
import { detectPriority } from './priority.js';
import { detectRejections } from './rejections.js';
import { detectRouting } from './routing.js';
import { detectShadow } from './shadow.js';
import { detectSlo } from './slo.js';
import { detectTenantBursts } from './tenant-bursts.js';
import { detectThrashing } from './thrashing.js';

/** Every detector, in the order their findings are collected (ties between findings keep this order). */
export const DETECTORS: readonly ((c: RunCtx) => Finding | readonly Finding[] | null)[] = [
  detectRouting,
  detectTenantBursts,
  detectRejections,
  detectPreemption,
  detectThrashing,
  detectPriority,
  detectShadow,
  detectSlo,
  detectImbalance,
];

/** One run's findings from every detector. */
export function detectAll(c: RunCtx): Finding[] {
  const out: Finding[] = [];
  for (const detect of DETECTORS) {
    const f = detect(c);
    if (f === null) continue;
    if (Array.isArray(f)) out.push(...(f as readonly Finding[]));
    else out.push(f as Finding);
  }
  return out;
}
