/**
 * Which control points a policy bundle sets: an evolvable section (`type:`) or a reference key that names a
 * policy (`admission.policy`, `routing.policy` or `routing.scorers`, `scheduler`, `preemption.policy`). The
 * evaluator layers a candidate over a suite's defaults with it, and refuses a candidate that sets a control point
 * the suite fixes.
 */
import { parsePolicyBundle } from './bundle.js';
import { CONTROL_POINTS, type ControlPoint } from './view.js';

/**
 * The control points `text` sets, in CONTROL_POINTS order; null when the bundle does not parse (the simulation
 * reports that error itself, at file:line:col).
 */
export function bundleControlPoints(text: string, file: string): ControlPoint[] | null {
  let b;
  try {
    b = parsePolicyBundle(text, file);
  } catch {
    return null;
  }
  const set = new Set<ControlPoint>(Object.keys(b.evolvable.specs) as ControlPoint[]);
  if (b.admission.policy !== '') set.add('admission');
  if (b.routing.policy !== '' || b.routing.scorers !== null) set.add('routing');
  if (b.scheduler !== '' || b.preemption.policy !== '') set.add('scheduler');
  return CONTROL_POINTS.filter((p) => set.has(p));
}

/**
 * The control point a `simulate()` option decides (a policy flag), or null for an option that is not a policy
 * choice (model, instances, workload...).
 */
export function optionControlPoint(option: string): ControlPoint | null {
  return Object.hasOwn(OPTION_POINTS, option) ? (OPTION_POINTS[option] as ControlPoint) : null;
}

/** The policy options of simulate() and the control point each decides. */
const OPTION_POINTS: Readonly<Record<string, ControlPoint>> = {
  admissionPolicy: 'admission',
  tokenBucketCapacity: 'admission',
  tokenBucketRefillRate: 'admission',
  flowControl: 'admission',
  routingPolicy: 'routing',
  routingScorers: 'routing',
  scheduler: 'scheduler',
  preemptionPolicy: 'scheduler',
  autoscalePolicy: 'autoscale',
  pdDecider: 'disaggregation',
  encodeDecider: 'encode',
};

/** The simulate() options that choose a policy (a suite's `defaults:` takes these). */
export const POLICY_OPTIONS: readonly string[] = Object.keys(OPTION_POINTS);
