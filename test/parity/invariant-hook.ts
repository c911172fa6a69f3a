/** Runs the reusable invariant checkers on a simulation observed through the CLI (parity and golden suites). */
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Request } from '../../src/domain/request.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';
import { checkSessionCausality, checkSessionCompleteness } from '../../src/workload/sessions/invariants.js';
import type { SessionLog } from '../../src/workload/sessions/manager.js';
import { assertInvariants } from '../invariants/checkers.js';

export function checkRun(cs: ClusterSimulator, requests: readonly Request[], setup: EngineSetup, sessions: SessionLog | null = null): void {
  assertInvariants({ cs, requests, setup });
  if (sessions !== null) {
    const v = [...checkSessionCausality(requests, sessions), ...checkSessionCompleteness(requests, sessions)];
    if (v.length > 0) throw new Error(`session invariant violations:\n${v.map((x) => `${x.invariant} ${x.sessionId}: ${x.message}`).join('\n')}`);
  }
}
