/**
 * `blis calibrate --fit`: reads the traces, fits corrected-physics coefficients (src/fit), writes the latency
 * profile, prints the fit report JSON on stdout and a summary on stderr.
 */
import { checkOutputPath, commitOutputs } from './outputs.js';
import { ConfigError } from '../sim/config-error.js';
import type { FlagValues } from '../sim/options.js';
import { formatLatencyProfile } from '../latency/profile.js';
import { fitTraces, parseFitParams, readFitTrace, resolveFitEngine, type SplitErrors } from '../fit/index.js';
import { processEnv } from './commands.js';
import type { CorrectedPhysicsCoefficient } from '../latency/corrected-physics.js';
import type { Io } from './io.js';

function list(f: FlagValues, name: string): string[] {
  const v = f.str(name);
  if (v === '') throw new ConfigError('missing-flag', `--${name} is required with --fit`);
  return v.split(',').map((p) => p.trim()).filter((p) => p !== '');
}

const sig = (x: number): number => Number(x.toPrecision(4));
const r2 = (x: number): number | null => (Number.isFinite(x) ? Math.round(x * 100) / 100 : null);

function errorsJson(e: SplitErrors | null): Record<string, unknown> | null {
  return e === null ? null : { requests: e.requests, ttft_mape_pct: r2(e.ttftMape), itl_mape_pct: r2(e.itlMape), e2e_mape_pct: r2(e.e2eMape) };
}

export async function fitCommand(f: FlagValues, io: Io): Promise<void> {
  for (const name of ['sim-results', 'report', 'itl-data', 'sim-metrics']) {
    if (f.changed(name)) throw new ConfigError('bad-flag', `--${name} does not apply with --fit (the fit simulates the traces itself)`);
  }
  const out = f.str('profile-out');
  if (out === '') throw new ConfigError('missing-flag', '--profile-out is required with --fit (where to write the latency profile)');
  // Checked before the fit runs: a mistyped directory fails at once, not after minutes of fitting.
  const outFile = checkOutputPath('--profile-out', out);
  if (f.str('model') === '') throw new ConfigError('missing-flag', '--model is required with --fit (the model the observed server runs)');
  const headers = list(f, 'trace-header');
  const datas = list(f, 'trace-data');
  if (headers.length !== datas.length) throw new ConfigError('bad-flag', `--trace-header names ${headers.length} file(s) but --trace-data ${datas.length}; give one header per data file, in the same order`);
  const holdout = f.int('holdout-every');
  if (holdout < 0 || holdout === 1) throw new ConfigError('bad-flag', `--holdout-every must be 0 (no held-out requests) or >= 2, got ${holdout}`);
  const rtt = f.int('network-rtt-us');
  if (rtt < -1) throw new ConfigError('bad-flag', `--network-rtt-us must be >= 0 (or -1 for the trace headers'), got ${rtt}`);
  const params = parseFitParams(f.str('fit-params'));
  // Default: every request of the trace runs to completion (an overloaded trace keeps all of them in the fit).
  const horizon = f.changed('horizon') ? Number(f.bigint('horizon')) : 0;
  if (f.changed('horizon') && !(horizon > 0)) throw new ConfigError('bad-flag', `--horizon must be > 0 µs with --fit (or left out: every request runs to completion), got ${f.str('horizon')}`);
  const env = processEnv(io, [outFile]);
  const { setup, latency, seed } = await resolveFitEngine(f, env);
  for (const w of latency.warnings) io.warn(w);
  const traces = [];
  for (let i = 0; i < headers.length; i++) traces.push(await readFitTrace(env, headers[i] as string, datas[i] as string));
  // The fit starts (and is regularised) at the --latency-profile's coefficients over the --engine-profile's
  // overheads, else at the defaults: resolved once with the engine (resolveLatency's correctedCoefficientsOf).
  const start: Partial<Record<CorrectedPhysicsCoefficient, number>> = latency.correctedCoefficients;
  const debug = f.str('log') === 'debug';
  const res = fitTraces({
    traces, setup, latency, dp: f.int('dp'), expertParallel: f.bool('enable-expert-parallel'), seed, params, start, holdoutEvery: holdout, rttUs: rtt, horizonUs: horizon,
    ...(debug ? { onIteration: (i: number, c: readonly number[], loss: number) => io.info?.(`fit iteration ${i}: loss ${loss.toExponential(3)}, coefficients ${c.map((x) => x.toPrecision(5)).join(' ')}`) } : {}),
  });
  const held = Object.fromEntries(res.heldAtDefault.map((h) => [h.name, h.value]));
  const ci = Object.fromEntries(Object.entries(res.confidence95).map(([n, [lo, hi]]) => [n, [sig(lo), sig(hi)]]));
  const provenance = {
    traces: datas,
    fitted: [...res.fitted],
    ...(res.heldAtDefault.length > 0 ? { held_at_default: held } : {}),
    confidence_95: ci,
    requests: { usable: res.requestsUsable, unfinished_in_simulation: res.requestsUnfinished },
    iterations: res.iterations,
    converged: res.converged,
    train: errorsJson(res.train) ?? {},
    ...(res.heldOut !== null ? { held_out: errorsJson(res.heldOut) ?? {} } : {}),
  };
  commitOutputs([[outFile, formatLatencyProfile(res.profile, provenance, ['Latency profile written by blis calibrate --fit; use it with --latency-profile'])]]);
  const report = {
    latency_model: 'corrected-physics',
    model: latency.model,
    hardware: latency.hardware,
    tp: latency.tp,
    coefficients: res.coefficients,
    fitted: res.fitted,
    held_at_default: res.heldAtDefault.map((h) => ({ coefficient: h.name, value: h.value, why: h.why })),
    confidence_95: ci,
    requests_usable: res.requestsUsable,
    requests_unfinished_in_simulation: res.requestsUnfinished,
    fitted_range: { request_rate: res.range.requestRate, batch_size: res.range.batchSize },
    iterations: res.iterations,
    converged: res.converged,
    train: errorsJson(res.train),
    held_out: errorsJson(res.heldOut),
    held_out_before_fit: errorsJson(res.heldOutBefore),
    profile: out,
  };
  io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  const pct = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(1)}%` : 'n/a');
  const line = (label: string, e: SplitErrors | null): string | null => (e === null ? null : `  ${label}: ${e.requests} requests, TTFT MAPE ${pct(e.ttftMape)}, ITL MAPE ${pct(e.itlMape)}, E2E MAPE ${pct(e.e2eMape)}`);
  for (const l of [
    `Fitted ${res.fitted.length > 0 ? res.fitted.join(', ') : 'nothing'} in ${res.iterations} iteration(s)${res.converged ? '' : ' (iteration limit reached)'}; profile written to ${out}`,
    ...res.heldAtDefault.map((h) => `  ${h.name} kept at its default ${sig(h.value)}: ${h.why}`),
    `  ${res.requestsUsable} usable requests${res.requestsUnfinished > 0 ? `, ${res.requestsUnfinished} unfinished in simulation (--horizon)` : ', all simulated to completion'}; fitted on ${res.range.requestRate[0]}–${res.range.requestRate[1]} req/s, decode batches ${res.range.batchSize[0]}–${res.range.batchSize[1]}`,
    line('train', res.train),
    line('held out', res.heldOut),
    line('held out, before the fit', res.heldOutBefore),
  ]) if (l !== null) io.info?.(l);
}
