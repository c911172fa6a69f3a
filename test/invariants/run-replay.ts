/**
 * INV-13 run/replay parity: a trace exported by `blis run --trace-output` and replayed with the same flags
 * gives every request the same outcome, TTFT and E2E.
 *
 * Requests are matched by what the trace preserves: a session round by (session_id, round_index) — in closed
 * loop the follow-ups are regenerated under new ids — and any other request by its trace row, whose
 * request_id is the run's arrival order (`request_<request_id>` in the replay).
 */
import type { Request } from '../../src/domain/request.js';

function key(r: Request, rowOf: (r: Request) => number): string {
  return r.sessionId !== '' ? `session ${r.sessionId} round ${r.roundIndex}` : `row ${rowOf(r)}`;
}

/**
 * @param runArrivals the run's requests in arrival order (the cluster's `arrivals`: the trace rows).
 * @param replayRequests every request of the replay, follow-ups included.
 * @returns one line per mismatch (empty = INV-13 holds).
 */
export function checkRunReplayParity(runArrivals: readonly Request[], replayRequests: readonly Request[]): string[] {
  const v: string[] = [];
  const runRow = new Map<Request, number>(runArrivals.map((r, i) => [r, i]));
  const run = new Map<string, Request>();
  for (const r of runArrivals) run.set(key(r, (x) => runRow.get(x)!), r);
  const seen = new Set<string>();
  for (const r of replayRequests) {
    const m = /^request_(\d+)$/.exec(r.id);
    const k = key(r, () => (m === null ? -1 : Number(m[1])));
    seen.add(k);
    const a = run.get(k);
    if (a === undefined) {
      // A request past the run's last recorded arrival cannot be in the trace; anything else is a lost row.
      v.push(`INV-13: replay ${r.id} (${k}) has no counterpart in the run`);
      continue;
    }
    const diff = (what: string, x: unknown, y: unknown): void => {
      if (x !== y) v.push(`INV-13: ${k}: ${what} run=${String(x)} replay=${String(y)} (run ${a.id}, replay ${r.id})`);
    };
    diff('arrival', a.arrivalTime, r.arrivalTime);
    diff('input length', a.inputLen, r.inputLen);
    diff('output length', a.outputLen, r.outputLen);
    diff('outcome', a.outcome, r.outcome);
    diff('instance', a.assignedInstance, r.assignedInstance);
    diff('has TTFT', a.hasTTFT, r.hasTTFT);
    diff('TTFT', a.ttft, r.ttft);
    diff('has E2E', a.hasE2E, r.hasE2E);
    diff('E2E', a.e2e, r.e2e);
  }
  for (const k of run.keys()) if (!seen.has(k)) v.push(`INV-13: run request ${k} was not replayed`);
  return v;
}
