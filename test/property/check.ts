/**
 * The shared body of the property suites: run one scenario under the per-event invariant recorder, check every
 * invariant, and check that a second run renders byte-identical output (INV-6).
 *
 * One known reference bug is set aside, not hidden: with a CPU KV tier a run can livelock (reference-differences
 * K6/K7). A run that trips the livelock guard in exactly that state, with no other violation before it, is
 * discarded (fc.pre) and counted in `tally.tieredDeadlocks`; callers assert the count stays small.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Request } from '../../src/domain/request.js';
import { buildCluster, runEngine, type EngineSetup } from '../../src/sim/engine-setup.js';
import { assertInvariants } from '../invariants/checkers.js';
import { renderAll } from '../invariants/harness.js';
import { EventRecorder, LivelockError } from '../invariants/recorder.js';

export interface Tally {
  tieredDeadlocks: number;
}

/** Runs `freshRequests()` on `setup` with every check; returns the finished cluster and its requests. */
export function checkScenario(
  setup: EngineSetup,
  freshRequests: () => Request[],
  tiered: boolean,
  maxEvents: number,
  tally: Tally,
): { cs: ClusterSimulator; requests: Request[] } {
  const requests = freshRequests();
  const cs = buildCluster(setup);
  const log = new EventRecorder(cs, requests, setup.maxModelLen, { deep: true, maxEvents });
  try {
    cs.run(requests);
  } catch (e) {
    if (e instanceof LivelockError && tiered && log.tieredQuirks.size > 0) {
      expect(log.violations).toEqual([]);
      tally.tieredDeadlocks++;
      fc.pre(false);
    }
    throw e;
  }
  log.finish();
  assertInvariants({ cs, requests, setup, log });
  expect(renderAll(runEngine(setup, freshRequests()))).toBe(renderAll(cs));
  return { cs, requests };
}
