/**
 * `run` and `replay` as pure functions of the options: resolve the plan (plan.ts: every check, every derived
 * value), build the engine from it and simulate (engine-setup.ts), and render every output as text
 * (run-outputs.ts). The CLI writes the texts to stdout and files; the library API returns them. Same options,
 * same bytes.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { Request } from '../domain/request.js';
import { SessionManager, type SessionLog } from '../workload/sessions/manager.js';
import { driveEngine, driveEngineStreaming, type EngineSetup } from './engine-setup.js';
import type { SimEnv } from './env.js';
import type { FlagValues } from './options.js';
import { resolvePlan, type ReplayPlan, type RunOptions, type RunPlan } from './plan.js';
import { finishReport, instruments, outputs, replayTrace, runTrace, simResults, wallClockGuard, type SimulationOutputs, type TraceOutput } from './run-outputs.js';
import { materialize, sessionPool } from './run-workload.js';

export type { RunOptions } from './plan.js';
export type { SimulationOutputs, TraceOutput } from './run-outputs.js';

/** Receives each finished simulation (tests run invariant checkers on it). */
export type SimulationObserver = (cs: ClusterSimulator, requests: readonly Request[], setup: EngineSetup, sessions: SessionLog | null) => void;

/**
 * Every check `simulateRun` / `simulateReplay` makes before it simulates — option values, the files named by
 * options (read through `env`), policies compiled, workload options: the plan resolved and discarded, without
 * generating an open-loop workload or simulating. Throws what the run would throw; a sweep checks each point
 * with it before queueing.
 */
export async function checkSimulation(mode: 'run' | 'replay', f: FlagValues, env: SimEnv): Promise<void> {
  await resolvePlan(mode, f, env);
}

export async function simulateRun(f: FlagValues, env: SimEnv, observe?: SimulationObserver, opts: RunOptions = {}): Promise<SimulationOutputs> {
  const plan = (await resolvePlan('run', f, env, opts)) as RunPlan;
  await env.pause?.();
  const full = plan.setup;
  const wl = plan.workload;
  // Closed-loop sessions: follow-up rounds enter the cluster as arrivals when their previous round ends.
  let sessions: SessionManager | null = null;
  if (wl.sessions.length > 0) {
    sessions = new SessionManager(wl.sessions);
    if (wl.followUpBudget >= 0) sessions.setFollowUpBudget(wl.followUpBudget);
  }
  const poolN = plan.poolSize;
  const { recorder, holder, prepare } = instruments(plan);
  let cs: ClusterSimulator;
  let all: Request[];
  if (wl.streamed && sessions === null) {
    ({ cluster: cs, requests: all } = await driveEngineStreaming(full, wl.requests, prepare, env.drive ?? null, opts.onProgress ?? null, wl.total ?? null, wallClockGuard(plan)));
  } else {
    let requests = materialize(wl.requests, wl.expected ?? null, opts.onGenerate ?? null);
    const pool = sessions !== null && poolN > 0 ? sessionPool(sessions, requests, poolN) : null;
    if (pool !== null) requests = pool.injected;
    const hook = pool !== null ? pool.pool.hook : sessions === null ? null : sessions.hook;
    cs = await driveEngine(full, requests, hook, prepare, env.drive ?? null, opts.onProgress ?? null, true, wallClockGuard(plan));
    all = sessions === null ? requests : [...requests, ...(pool?.pool.admitted ?? []), ...sessions.log().followUps];
    if (pool !== null && pool.pool.unstarted > 0) env.warn(`--concurrent-sessions ${poolN}: ${pool.pool.unstarted} session(s) never started before the horizon`);
  }
  observe?.(cs, all, full, sessions === null ? null : sessions.log());
  const { report, series } = await finishReport(plan, env, cs, all, recorder, holder.sampler);
  const trace: TraceOutput | null = !plan.output.trace ? null : runTrace(plan, cs, sessions === null ? null : sessions.log(), wl.sessions, wl.seed, env);
  return outputs(plan, { report, cluster: cs, trace, recorder, requests: all, ...series, goodputTargets: plan.goodputTargets }, null);
}

export async function simulateReplay(f: FlagValues, env: SimEnv, observe?: SimulationObserver, opts: RunOptions = {}): Promise<SimulationOutputs> {
  const plan = (await resolvePlan('replay', f, env, opts)) as ReplayPlan;
  const full = plan.setup;
  const { requests, sessions, pool } = plan.workload;
  const { recorder, holder, prepare } = instruments(plan);
  const hook = pool !== null ? pool.hook : sessions === null ? null : sessions.hook;
  const cs = await driveEngine(full, requests, hook, prepare, env.drive ?? null, opts.onProgress ?? null, true, wallClockGuard(plan));
  const all = sessions === null ? requests : [...requests, ...(pool?.admitted ?? []), ...sessions.log().followUps];
  if (pool !== null && pool.unstarted > 0) env.warn(`--concurrent-sessions ${pool.size}: ${pool.unstarted} session(s) never started (the --horizon ended the run, or a session never ended)`);
  observe?.(cs, all, full, sessions === null ? null : sessions.log());
  const { report, series } = await finishReport(plan, env, cs, all, recorder, holder.sampler);
  // Corrected semantics export what was injected (follow-ups included), as run does; the reference every built request.
  const exported = plan.corrected ? cs.arrivals : requests;
  const trace = !plan.output.trace ? null : replayTrace(exported, plan.goodputTargets, plan.header.observedKvMetrics);
  return outputs(plan, { report, cluster: cs, trace, recorder, requests: all, ...series, goodputTargets: plan.goodputTargets }, () => simResults(report));
}
