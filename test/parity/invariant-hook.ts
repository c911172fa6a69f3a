/** Runs the reusable invariant checkers on a finished simulation (shared by the parity and golden suites). */
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Request } from '../../src/domain/request.js';

export function checkRun(cs: ClusterSimulator, requests: readonly Request[]): void {
  const problems: string[] = [];
  for (const inst of cs.instances) {
    const kv = inst.kv.checkConservation();
    if (kv) problems.push(`${inst.id}: ${kv}`);
    const m = inst.metrics;
    const injected = m.requests.length;
    const accounted = m.completedRequests + m.stillQueued + m.stillRunning + m.droppedUnservable + m.timedOutRequests;
    if (accounted > injected) problems.push(`${inst.id}: more requests accounted (${accounted}) than injected (${injected})`);
  }
  if (requests.length < cs.arrivals.length) problems.push('more arrivals than requests');
  if (problems.length > 0) throw new Error(`invariant violations:\n${problems.join('\n')}`);
}
