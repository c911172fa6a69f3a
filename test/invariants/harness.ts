/**
 * Running a simulation under observation: build the cluster, attach an {@link EventRecorder}, run, assert
 * every invariant. Plus the INV-6 determinism helper (same setup twice -> identical rendered output).
 */
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Request } from '../../src/domain/request.js';
import { buildCluster, type EngineSetup } from '../../src/sim/engine-setup.js';
import { buildReport, renderJson, renderMetricsFile, renderReferenceText } from '../../src/sim/report.js';
import { assertInvariants } from './checkers.js';
import { EventRecorder, LivelockError, type RecorderOptions } from './recorder.js';

export interface CheckedRun {
  readonly cs: ClusterSimulator;
  readonly log: EventRecorder;
}

/** Livelock guard used when the caller sets none: far beyond any run the suites make. */
const DEFAULT_MAX_EVENTS = 5_000_000;

/** Runs `requests` on a fresh cluster with the recorder attached and asserts every invariant (throws). */
export function runChecked(setup: EngineSetup, requests: readonly Request[], opts: RecorderOptions = {}): CheckedRun {
  const cs = buildCluster(setup);
  const log = new EventRecorder(cs, requests, setup.maxModelLen, { maxEvents: DEFAULT_MAX_EVENTS, ...opts });
  cs.run(requests);
  log.finish();
  assertInvariants({ cs, requests, setup, log });
  return { cs, log };
}

/** Every rendering of a finished run: default JSON, the reference text, and the per-request metrics file. */
export function renderAll(cs: ClusterSimulator): string {
  const r = buildReport(cs);
  return `${renderJson(r)}\n${renderReferenceText(r)}\n${renderMetricsFile(r)}`;
}

/**
 * INV-6: runs the same setup on freshly built requests `times` times and reports any rendering that differs
 * from the first (requests are mutated by a run, hence the factory).
 */
export function checkDeterminism(setup: EngineSetup, makeRequests: () => Request[], times = 2): string[] {
  const outs: string[] = [];
  for (let i = 0; i < times; i++) {
    const cs = buildCluster(setup);
    let events = 0;
    cs.onEvent = (t) => {
      if (++events > DEFAULT_MAX_EVENTS) throw new LivelockError(DEFAULT_MAX_EVENTS, t);
    };
    cs.run(makeRequests());
    outs.push(renderAll(cs));
  }
  const v: string[] = [];
  const first = outs[0] as string;
  outs.forEach((o, i) => {
    if (o === first) return;
    let at = 0;
    while (at < o.length && o[at] === first[at]) at++;
    v.push(`INV-6: run ${i} output differs from run 0 at char ${at}: ${JSON.stringify(first.slice(at, at + 60))} vs ${JSON.stringify(o.slice(at, at + 60))}`);
  });
  return v;
}
