/**
 * The workload sources of `blis run`: the distribution workload and its presets (a lazy stream), closed-loop
 * users (`--concurrency`), a workload spec (`--workload-spec`), the session pool (`--concurrent-sessions`),
 * each with its flag checks. plan.ts calls them while it resolves a run; run.ts materialises what they return.
 */
import type { Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import { showValue } from '../domain/errors.js';
import { checkDistributionWorkload, distributionWorkloadStream, type DistributionWorkloadOptions } from '../workload/distribution.js';
import { DEFAULT_DISTRIBUTION, isPresetName, resolvePreset, validateDistributionParams, validateWorkloadFlags } from '../workload/presets.js';
import { SessionPool } from '../workload/sessions/pool.js';
import type { SessionManager } from '../workload/sessions/manager.js';
import { synthesizeConcurrencySpec } from '../workload/sessions/synthesize.js';
import type { SessionBlueprint } from '../workload/sessions/types.js';
import { generateWorkload } from '../workload/sessions/workload.js';
import type { SloDimTargets } from '../metrics/goodput.js';
import { ConfigError } from './config-error.js';
import type { SimEnv } from './env.js';
import type { FlagValues } from './options.js';
import { horizonFlag, semanticsFlag } from './resolve-engine.js';
import type { AdapterReference } from './resolve-lora.js';

/** A run's workload, resolved: its requests (or their lazy source) and what the run needs to know about them. */
export interface RunWorkload {
  /** The requests, sorted by arrival; a lazy source (generated as the simulation reaches them) when `streamed`. */
  readonly requests: Iterable<Request>;
  readonly streamed: boolean;
  /** How many requests a streamed workload holds (progress displays). */
  readonly total?: number;
  /** At most how many requests a workload generated before the run holds (its generation's progress); absent = unknown. */
  readonly expected?: number;
  readonly horizon: number;
  /** The workload seed in effect (trace header). */
  readonly seed: bigint;
  readonly specGoodput: ReadonlyMap<string, SloDimTargets> | null;
  /** Closed-loop sessions continued during the run (none for open-loop workloads). */
  readonly sessions: SessionBlueprint[];
  /** Follow-up cap; -1 = none. */
  readonly followUpBudget: number;
  /** No two requests' prompts share a full block (KVStoreConfig.privatePrompts); absent = not known. */
  readonly privatePrompts?: boolean;
  /** The spec's LoRA adapter references (checked against --lora-config). */
  readonly adapterRefs?: readonly AdapterReference[];
}

/**
 * `blis run --concurrent-sessions N`: a pool over the spec's closed-loop sessions (0 = off). Refused with
 * `--concurrency` (its users are already a closed loop); a workload without sessions is warned about.
 */
export function runPoolSize(f: FlagValues, users: number, hasSessions: boolean, env: SimEnv): number {
  const n = f.int('concurrent-sessions');
  if (n < 0) throw new ConfigError('bad-flag', `--concurrent-sessions must be >= 0 (0 = no pool), got ${n}`);
  if (n > 0 && users > 0) throw new ConfigError('bad-flag', '--concurrent-sessions pools a workload spec\'s multi-turn sessions; --concurrency users are already a closed loop, so give one or the other');
  if (n > 0 && !hasSessions) env.warn(`--concurrent-sessions ${n}: the workload has no closed-loop sessions (a spec client with reasoning.multi_turn), so it has no effect`);
  return hasSessions ? n : 0;
}

/** The pool over a run's sessions: their round-0 requests in arrival order; what is injected at the start. */
export function sessionPool(sessions: SessionManager, requests: Request[], n: number): { pool: SessionPool; injected: Request[] } {
  const roundZeros = requests.filter((r) => r.sessionId !== '' && r.roundIndex === 0 && sessions.state(r.sessionId) !== undefined);
  const pool = new SessionPool(sessions, roundZeros, n);
  const waiting = new Set(roundZeros.slice(pool.initial().length));
  return { pool, injected: requests.filter((r) => !waiting.has(r)) };
}

/** `--concurrency` / `--think-time-ms`, checked as the reference does before any workload is built. */
export function concurrencyFlags(f: FlagValues): { users: number; thinkMs: number } {
  const users = f.int('concurrency');
  const thinkMs = f.int('think-time-ms');
  if (users < 0) throw new ConfigError('bad-flag', `--concurrency must be >= 0, got ${users}`);
  if (thinkMs < 0) throw new ConfigError('bad-flag', `--think-time-ms must be >= 0, got ${thinkMs}`);
  if (users > 0 && f.changed('rate')) throw new ConfigError('bad-flag', '--concurrency and --rate are mutually exclusive; use one or the other');
  return { users, thinkMs };
}

/**
 * Closed-loop users (`--concurrency`): the distribution flags' lengths, no rate. `--num-requests` caps the
 * total only when given explicitly; otherwise `--horizon` must bound the run.
 */
export function concurrencyWorkload(f: FlagValues, seed: bigint, users: number, thinkMs: number): RunWorkload {
  const timeoutSecs = f.int('timeout');
  const corrected = semanticsFlag(f) === 'corrected';
  const numRequests = f.int('num-requests');
  const prefixTokens = f.int('prefix-tokens');
  const werr = validateWorkloadFlags({ rate: f.float('rate'), numRequests, prefixTokens, timeoutSecs }, false);
  if (werr) throw new ConfigError('bad-flag', werr);
  const prompt = { mean: f.int('prompt-tokens'), stdev: f.int('prompt-tokens-stdev'), min: f.int('prompt-tokens-min'), max: f.int('prompt-tokens-max') };
  const output = { mean: f.int('output-tokens'), stdev: f.int('output-tokens-stdev'), min: f.int('output-tokens-min'), max: f.int('output-tokens-max') };
  const derr = validateDistributionParams(prompt, output);
  if (derr) throw new ConfigError('bad-flag', derr);
  const cap = f.changed('num-requests') ? numRequests : 0;
  const horizon = horizonFlag(f);
  if (cap === 0 && horizon >= MAX_INT64) throw new ConfigError('bad-flag', 'Workload requires either num_requests or --horizon to bound generation');
  const spec = synthesizeConcurrencySpec({ seed, concurrency: users, thinkTimeMs: thinkMs, numRequests: cap, prefixTokens, prompt, output });
  // The reference always applies --timeout (300 s by default); corrected semantics only when it is given.
  const timeout = corrected && !f.changed('timeout') ? {} : { timeoutSecs };
  const wl = generateWorkload(spec, { seed, numRequests: cap, horizon, ...timeout, ...(corrected ? { corrected } : {}) });
  return { requests: wl.requests, streamed: false, horizon, seed, specGoodput: null, sessions: wl.sessions, followUpBudget: wl.followUpBudget };
}

/** The distribution workload's (or preset's) options, validated (also by {@link checkSimulation}). */
function distributionOptions(f: FlagValues): Omit<DistributionWorkloadOptions, 'seed'> & { total: number } {
  const horizon = horizonFlag(f);
  const timeoutSecs = f.int('timeout');
  const workloadFlags = { rate: f.float('rate'), numRequests: f.int('num-requests'), prefixTokens: f.int('prefix-tokens'), timeoutSecs };
  const werr = validateWorkloadFlags(workloadFlags);
  if (werr) throw new ConfigError('bad-flag', werr);
  const wl = f.str('workload');
  let shape = DEFAULT_DISTRIBUTION;
  if (wl !== 'distribution') {
    if (!isPresetName(wl)) throw new ConfigError('bad-flag', `unknown --workload ${showValue(wl)}; valid: distribution, chatbot, contentgen, summarization, multidoc`);
    shape = resolvePreset(wl);
  }
  const custom = wl === 'distribution';
  const prompt = custom
    ? { mean: f.int('prompt-tokens'), stdev: f.int('prompt-tokens-stdev'), min: f.int('prompt-tokens-min'), max: f.int('prompt-tokens-max') }
    : shape.prompt;
  const output = custom
    ? { mean: f.int('output-tokens'), stdev: f.int('output-tokens-stdev'), min: f.int('output-tokens-min'), max: f.int('output-tokens-max') }
    : shape.output;
  if (custom) {
    const derr = validateDistributionParams(prompt, output);
    if (derr) throw new ConfigError('bad-flag', derr);
  }
  const options = {
    rate: workloadFlags.rate,
    numRequests: workloadFlags.numRequests,
    horizon,
    prefixTokens: custom ? workloadFlags.prefixTokens : shape.prefixTokens,
    prompt,
    output,
    // The reference gives every request the 300 s default; corrected semantics apply only an explicit --timeout.
    timeoutUs: timeoutSecs > 0 && (f.changed('timeout') || semanticsFlag(f) !== 'corrected') ? timeoutSecs * 1e6 : 0,
  };
  // Nothing bounding the workload, or more than one run can hold: refused here, before any work.
  return { ...options, total: checkDistributionWorkload(options, false) };
}

/** The distribution workload or a preset, from the run options: generated while the simulation reaches it. */
export function generatedWorkload(f: FlagValues, seed: bigint): RunWorkload {
  const { total, ...opts } = distributionOptions(f);
  // Without a shared prefix its prompts are independent uniform draws: no two share a block (KVStoreConfig.privatePrompts).
  return { requests: distributionWorkloadStream({ seed, ...opts }), streamed: true, total, horizon: opts.horizon, seed, specGoodput: null, sessions: [], followUpBudget: -1, privatePrompts: opts.prefixTokens === 0 };
}

/**
 * `--workload-spec FILE`: the spec's clients (sessions, concurrency users and inference-perf included);
 * --seed/--num-requests/--horizon/--timeout override it when given.
 */
export async function specWorkload(f: FlagValues, env: SimEnv, path: string): Promise<RunWorkload> {
  if (f.int('concurrency') > 0) {
    throw new ConfigError('bad-flag', '--concurrency cannot be used with --workload-spec; define concurrency in the spec file using clients[].concurrency instead');
  }
  const { loadSpecWorkloadForRun } = await import('../workload/spec/index.js');
  const r = loadSpecWorkloadForRun(env.readText(path, '--workload-spec'), path, {
    ...(f.changed('seed') ? { seed: f.bigint('seed') } : {}),
    ...(f.changed('num-requests') ? { numRequests: f.int('num-requests') } : {}),
    ...(f.changed('horizon') ? { horizon: horizonFlag(f) } : {}),
    ...(f.changed('timeout') ? { timeoutSecs: f.int('timeout') } : {}),
    ...(semanticsFlag(f) === 'corrected' ? { corrected: true } : {}),
  }, { onWarning: (m) => env.warn(m), ...(env.readServeGen ? { readServeGen: (dir: string) => env.readServeGen!(dir, 'servegen_data.path') } : {}) });
  return {
    requests: r.requests,
    streamed: false,
    ...(r.maxRequests > 0 ? { expected: r.maxRequests } : {}),
    horizon: r.horizon,
    seed: r.seed,
    specGoodput: r.goodputSloTargets.size > 0 ? r.goodputSloTargets : null,
    sessions: r.sessions,
    followUpBudget: r.followUpBudget,
    adapterRefs: [
      ...r.spec.clients.map((c) => ({ kind: 'client', id: c.id, adapter: c.adapter, model: c.model })),
      ...r.spec.cohorts.map((c) => ({ kind: 'cohort', id: c.id, adapter: c.adapter, model: c.model })),
    ],
  };
}

/** The requests of a workload generated before the run, reporting every 4,096 to `onGenerate`. */
export function materialize(source: Iterable<Request>, expected: number | null, onGenerate: ((done: number, total: number | null) => void) | null): Request[] {
  if (Array.isArray(source) || onGenerate === null) return Array.from(source);
  const out: Request[] = [];
  for (const r of source) {
    out.push(r);
    if ((out.length & 4095) === 0) onGenerate(out.length, expected !== null && expected >= out.length ? expected : null);
  }
  onGenerate(out.length, out.length);
  return out;
}

/**
 * Whether a request's prompt may contain another request's output: only multi-turn sessions build prompts
 * from earlier rounds (their requests carry a session id; closed-loop ones also continue at run time). Other
 * prompts are a shared prefix plus fresh random tokens, so the identity of a KV block filled during decode
 * can never be looked up, and the KV store need not register it (same results, less work).
 */
export function promptsMayRepeatOutputs(requests: Iterable<Request>, closedLoopSessions: boolean, generated = false): boolean {
  if (closedLoopSessions) return true;
  // The distribution workload (streamed) never has sessions.
  if (generated) return false;
  // A stream cannot be looked ahead in: register the identities, as the reference does.
  if (!Array.isArray(requests)) return true;
  return (requests as readonly Request[]).some((r) => r.sessionId !== '');
}
