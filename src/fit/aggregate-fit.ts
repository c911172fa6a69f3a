/**
 * Fitting corrected-physics coefficients on aggregate measurements (a run's mean TTFT, mean E2E and ITL
 * percentile) instead of per-request ones: what public benchmark results give, and what `npm run fidelity`
 * uses for its leave-one-out fitted model. Each run is a replay configuration (the library's `simulate()`
 * config, mode `replay`, with its trace in `files`).
 */
import { BlisError } from '../domain/errors.js';
import type { Request } from '../domain/request.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, CORRECTED_PHYSICS_DEFAULTS, createCorrectedPhysicsModel, type CorrectedPhysicsCoefficient } from '../latency/corrected-physics.js';
import { ConfigError } from '../sim/config-error.js';
import type { EngineSetup } from '../sim/engine-setup.js';
import type { SimEnv } from '../sim/env.js';
import { parseSimulationConfig, type SimulationConfig } from '../sim/simulate.js';
import { buildReplayRequests, defaultReplayHorizon } from '../workload/replay.js';
import { fitCoefficients, type FitDataset, type FitTarget } from './fit.js';
import { readFitTrace, resolveFitEngine } from './prepare.js';
import { FIT_NEEDS } from './trace-fit.js';

/** Measured aggregates of one run, in ms (omit what was not measured). */
export interface AggregateMeasurements {
  readonly ttftMeanMs?: number;
  readonly e2eMeanMs?: number;
  readonly itlP90Ms?: number;
}

export interface AggregateRun {
  readonly label: string;
  readonly config: SimulationConfig;
  readonly measured: AggregateMeasurements;
  /** Leave the first requests out of the simulated means (a cache warm-up a shortened trace over-weights). */
  readonly skipFirst?: number;
}

export interface AggregateFitOptions {
  /** Coefficients to fit; default every one the runs exercise. */
  readonly params?: readonly CorrectedPhysicsCoefficient[];
  readonly start?: Partial<Record<CorrectedPhysicsCoefficient, number>>;
  readonly maxIterations?: number;
  readonly onIteration?: (iteration: number, c: readonly number[], loss: number) => void;
}

export interface AggregateFitResult {
  readonly coefficients: Record<CorrectedPhysicsCoefficient, number>;
  /** Standard error of each fitted coefficient (0 for fixed ones); a few aggregates pin some only loosely. */
  readonly standardErrors: Record<CorrectedPhysicsCoefficient, number>;
  readonly iterations: number;
  readonly converged: boolean;
}

const TYPICAL: Readonly<Record<CorrectedPhysicsCoefficient, number>> = { compute: 1, weight_read: 1, kv_read: 1, comm: 1, step_us: 100, request_us: 10, frontend_us: 1000 };
const LOWER: Readonly<Record<CorrectedPhysicsCoefficient, number>> = { compute: 0.05, weight_read: 0.05, kv_read: 0, comm: 0, step_us: 0, request_us: 0, frontend_us: 0 };

async function dataset(run: AggregateRun): Promise<{ ds: FitDataset; comm: boolean }> {
  const { mode, values, files } = parseSimulationConfig(run.config);
  if (mode !== 'replay') throw new ConfigError('bad-config', `${run.label}: an aggregate fit replays traces; use mode "replay"`);
  const env: SimEnv = {
    readText: (p, option) => {
      const t = files[p];
      if (t === undefined) throw new ConfigError('missing-file', `${run.label}: ${option}: "${p}" is not in config.files`);
      return t;
    },
    warn: () => undefined,
  };
  const { setup, latency, seed } = await resolveFitEngine(values, env);
  const trace = await readFitTrace(env, values.str('trace-header'), values.str('trace-data'));
  const mc = latency.modelConfig;
  const hw = latency.hardwareConfig;
  if (mc === null || hw === null) throw new ConfigError('bad-config', `${run.label}: corrected-physics needs a model and GPU`);
  const dp = values.int('dp');
  const ep = values.bool('enable-expert-parallel');
  const targets: FitTarget[] = [];
  const m = run.measured;
  const skip = run.skipFirst ?? 0;
  if (m.ttftMeanMs !== undefined) targets.push({ kind: 'mean-ttft', y: m.ttftMeanMs * 1000, w: 1, split: 'train', skip });
  if (m.e2eMeanMs !== undefined) targets.push({ kind: 'mean-e2e', y: m.e2eMeanMs * 1000, w: 1, split: 'train', skip });
  if (m.itlP90Ms !== undefined) targets.push({ kind: 'itl-quantile', q: 0.9, y: m.itlP90Ms * 1000, w: 1, split: 'train' });
  const records = trace.records;
  const horizon = values.changed('horizon') ? Number(values.bigint('horizon')) : defaultReplayHorizon(buildReplayRequests(records, seed));
  const names = CORRECTED_PHYSICS_COEFFICIENTS;
  return {
    comm: latency.tp > 1 || dp > 1,
    ds: {
      label: run.label,
      targets,
      requests: (): Request[] => buildReplayRequests(records, seed),
      setup: (c: readonly number[]): EngineSetup => ({
        ...setup,
        horizon,
        latency: createCorrectedPhysicsModel({ model: mc, hardware: hw, tp: latency.tp, dp, expertParallel: ep, coefficients: Object.fromEntries(names.map((n, i) => [n, c[i] as number])) }),
      }),
    },
  };
}

/** Fits the coefficients that make the runs' simulated aggregates match their measurements. */
export async function fitAggregateRuns(runs: readonly AggregateRun[], opts: AggregateFitOptions = {}): Promise<AggregateFitResult> {
  if (runs.length === 0) throw new BlisError('FIT_NO_DATA', 'fitAggregateRuns: no runs given');
  const built = await Promise.all(runs.map(dataset));
  const names = CORRECTED_PHYSICS_COEFFICIENTS;
  const anyComm = built.some((b) => b.comm);
  const params = opts.params ?? names.filter((n) => n !== 'comm' || anyComm);
  const start = names.map((n) => opts.start?.[n] ?? CORRECTED_PHYSICS_DEFAULTS[n]);
  const res = fitCoefficients(built.map((b) => b.ds), {
    names,
    start,
    lower: names.map((n) => LOWER[n]),
    fixed: names.map((n) => !params.includes(n)),
    typical: names.map((n) => TYPICAL[n]),
    needs: FIT_NEEDS,
    ttftOffset: names.indexOf('frontend_us'),
    checkStandardErrors: false,
    // A handful of run-level aggregates: percent-level agreement is all they can say.
    tolerance: 5e-3,
    acceptSlack: 1e-3,
    maxIterations: opts.maxIterations ?? 8,
    ...(opts.onIteration !== undefined ? { onIteration: opts.onIteration } : {}),
  });
  return {
    coefficients: Object.fromEntries(names.map((n, i) => [n, res.coefficients[i] as number])) as Record<CorrectedPhysicsCoefficient, number>,
    standardErrors: Object.fromEntries(names.map((n, i) => [n, res.standardErrors[i] as number])) as Record<CorrectedPhysicsCoefficient, number>,
    iterations: res.iterations,
    converged: res.converged,
  };
}
