/** Runs the reusable invariant checkers on a simulation observed through the CLI (parity suite). */
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Request } from '../../src/domain/request.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';
import { assertInvariants } from '../invariants/checkers.js';

export function checkRun(cs: ClusterSimulator, requests: readonly Request[], setup: EngineSetup): void {
  assertInvariants({ cs, requests, setup });
}
