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
import { NO_HASH, hashBlock, inputBlockHashes } from '../../src/domain/block-hash.js';
import type { Request } from '../../src/domain/request.js';
import { buildCluster, runEngine, type EngineSetup } from '../../src/sim/engine-setup.js';
import { assertInvariants } from '../invariants/checkers.js';
import { renderAll } from '../invariants/harness.js';
import { EventRecorder, LivelockError } from '../invariants/recorder.js';

export interface Tally {
  tieredDeadlocks: number;
  /** Runs also checked with decode-block identities off (those whose prompts never repeat an output). */
  decodeIdentityChecks?: number;
}

/**
 * Whether some prompt block of one request has the identity of a block holding another's output tokens (the
 * chain over prompt ++ output): only then can the identities of blocks filled in decode be looked up.
 */
function promptRepeatsOutput(requests: readonly Request[], bs: number): boolean {
  const promptBlocks = new Set<number>();
  for (const r of requests) for (const h of inputBlockHashes(r, bs)) promptBlocks.add(h);
  for (const r of requests) {
    const all = new Int32Array(r.inputLen + r.outputLen);
    all.set(r.inputTokens, 0);
    all.set(r.outputTokens, r.inputLen);
    let parent = NO_HASH;
    for (let k = 0; (k + 1) * bs <= all.length; k++) {
      parent = hashBlock(parent, all, k * bs, (k + 1) * bs);
      if ((k + 1) * bs > r.inputLen && promptBlocks.has(parent)) return true;
    }
  }
  return false;
}

/**
 * Runs `freshRequests()` on `setup` with every check; returns the finished cluster and its requests. Unless a
 * prompt repeats an output (tiny token alphabets do), the run must also render the same with the KV store's
 * decode-block identities turned off.
 */
export function checkScenario(
  setup: EngineSetup,
  freshRequests: () => Request[],
  tiered: boolean,
  maxEvents: number,
  tally: Tally,
  /** Per-event checks; their INV-12 Phase-1 completeness does not hold for prefill-first steps, which stall decodes. */
  deep = true,
): { cs: ClusterSimulator; requests: Request[] } {
  const requests = freshRequests();
  const cs = buildCluster(setup);
  const log = new EventRecorder(cs, requests, setup.maxModelLen, { deep, maxEvents });
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
  if (!tiered && !promptRepeatsOutput(freshRequests(), setup.kv.blockSize)) {
    tally.decodeIdentityChecks = (tally.decodeIdentityChecks ?? 0) + 1;
    expect(renderAll(runEngine({ ...setup, kv: { ...setup.kv, decodeIdentities: false } }, freshRequests()))).toBe(renderAll(cs));
  }
  return { cs, requests };
}
