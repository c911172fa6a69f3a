/**
 * What `blis evaluate`, `blis search` and `blis suites` do (loaded only when one of them runs; the flags are in
 * evaluate-command.ts).
 * A broken candidate is a scored result (exit 0); only a broken suite, flags or files exit 2.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import {
  candidateFromBundle,
  candidateFromCode,
  candidateFromComponents,
  checkSuite,
  describeSuites,
  evaluateCandidate,
  findSuite,
  fixedControlPoints,
  ResultCache,
  type Candidate,
  type EvaluateHooks,
  type EvaluateOptions,
  type EvaluationResult,
} from '../evaluate/index.js';
import { rankPopulation } from '../evaluate/population.js';
import { MAX_SEEDS } from '../evaluate/suites.js';
import { parseConstraintSpec, parseObjectiveSpec, withObjectives } from '../evaluate/objective-spec.js';
import { EvaluationPool } from '../evaluate/pool.js';
import { IN_THREAD } from '../evaluate/evaluate.js';
import { RunMemo } from '../evaluate/run-memo.js';
import { CONTROL_POINTS, type ControlPoint } from '../policy/view.js';
import { UsageError } from './errors.js';
import { BlisError, showValue } from '../domain/errors.js';
import { parseJson } from '../format/json.js';
import type { Io } from './io.js';
import { checkInputsAndOutputs, checkOutputPath, commitOutputs } from './outputs.js';
import { progressDisplay } from './progress.js';
import { threadCount } from './threads.js';
import { dirCache, int, loadSuite, read } from './evaluate-inputs.js';

/** Code files a bundle names with `file:` (relative to the bundle), read when they exist. */
function bundleFiles(bundlePath: string, text: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const m of text.matchAll(/^\s*"?file"?\s*:\s*["']?([^"'\n,}]+)["']?/gm)) {
    const name = (m[1] as string).trim();
    const full = path.isAbsolute(name) ? name : path.join(path.dirname(bundlePath), name);
    if (existsSync(full)) files[name] = read(full, '--candidate');
  }
  return files;
}

function loadCandidate(file: string, point: ControlPoint, engine: 'fast' | 'strict'): Candidate {
  const text = read(file, '--candidate');
  const label = path.basename(file);
  if (/\.(js|mjs|cjs)$/.test(file)) return candidateFromCode(label, text, point, engine);
  return candidateFromBundle(label, text, bundleFiles(file, text));
}

function parseOnly(values: readonly string[]): NonNullable<EvaluateOptions['only']> | null {
  if (values.length === 0) return null;
  return values.map((v) => {
    const m = /^(.+)@(\d+)$/.exec(v);
    if (m === null) throw new UsageError('bad-flag', `--only ${showValue(v)}: write scenario@seed, e.g. steady@1 (blis suites lists them)`);
    return { scenario: m[1] as string, seed: Number(m[2]) };
  });
}

export interface EvaluateFlags {
  objective: string[];
  constraint: string[];
  seeds?: string;
  candidate?: string;
  components?: string;
  population?: string;
  controlPoint: string;
  engine: string;
  suite: string;
  stage: string;
  only: string[];
  workers: string;
  timeoutS: string;
  cache?: string;
  serve?: boolean;
  watchStdin?: boolean;
  host: string;
  port: string;
  budget: string;
  latencyProfile?: string;
  latencyModel?: string;
  queue?: string;
  queueName: string;
  redisTimeoutS: string;
  workerWaitS: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsInsecure?: boolean;
  report?: string;
  quiet?: boolean;
  semantics?: string;
}

export async function evaluateCommand(o: EvaluateFlags, io: Io): Promise<void> {
  const suite = withObjectives(loadSuite(o.suite, o.semantics, o.latencyProfile, o.latencyModel), o.objective.map(parseObjectiveSpec), o.constraint.map(parseConstraintSpec));
  if (o.stage !== '1' && o.stage !== '2' && o.stage !== 'validate') throw new UsageError('bad-flag', `--stage must be 1, 2 or validate, got ${showValue(o.stage)}`);
  if (!(CONTROL_POINTS as readonly string[]).includes(o.controlPoint)) throw new UsageError('bad-flag', `--control-point must be one of ${CONTROL_POINTS.join(', ')}, got ${showValue(o.controlPoint)}`);
  const fixed = fixedControlPoints(suite).get(o.controlPoint as ControlPoint);
  const codeCandidates = o.candidate !== undefined ? /\.(js|mjs|cjs)$/.test(o.candidate) : o.population !== undefined;
  if (fixed !== undefined && codeCandidates) {
    throw new UsageError('bad-flag', `--control-point ${o.controlPoint}: suite ${suite.name} fixes the ${o.controlPoint} control point (scenario ${fixed.scenario} sets ${fixed.option}), so a candidate may not set it; evolve another control point, or use a suite that leaves ${o.controlPoint} to the candidate`);
  }
  if (o.engine !== 'fast' && o.engine !== 'strict') throw new UsageError('bad-flag', `--engine must be fast or strict, got ${showValue(o.engine)}`);
  const engine = o.engine;
  if (o.watchStdin === true && o.serve !== true) throw new UsageError('bad-flag', '--watch-stdin works with --serve (it stops the server when stdin closes); drop it or add --serve');
  if (o.report !== undefined && (o.serve === true || o.population !== undefined)) throw new UsageError('bad-flag', '--report works with one candidate (--candidate or --components), not with --population or --serve');
  const reportOut = o.report === undefined ? null : checkOutputPath('--report', o.report);
  checkInputsAndOutputs([reportOut], [
    ...(findSuite(o.suite) === undefined ? [{ flag: '--suite', path: o.suite }] : []),
    ...(o.candidate === undefined ? [] : [{ flag: '--candidate', path: o.candidate }]),
    ...(o.components === undefined ? [] : [{ flag: '--components', path: o.components }]),
    ...(o.latencyProfile === undefined ? [] : [{ flag: '--latency-profile', path: o.latencyProfile }]),
  ]);
  const seeds = o.seeds === undefined ? null : int('--seeds', o.seeds, 1);
  if (seeds !== null && seeds > MAX_SEEDS) throw new UsageError('bad-flag', `--seeds must be <= ${MAX_SEEDS} (seeds per scenario), got ${seeds}`);
  let opts: EvaluateOptions = { stage: o.stage === 'validate' ? 'validate' : (Number(o.stage) as 1 | 2), only: parseOnly(o.only), ...(seeds === null ? {} : { seeds }), ...(o.report === undefined ? {} : { reportData: true }) };
  const display = o.serve === true ? null : progressDisplay('evaluate', o.quiet === true);
  let candidatesDone = 0;
  const workers = threadCount('--workers', o.workers);
  const timeoutMs = int('--timeout-s', o.timeoutS, 0) * 1000;
  if (o.queue !== undefined && (o.population === undefined || o.serve === true)) throw new UsageError('bad-flag', '--queue evaluates a --population on the job queue; give --population DIR (a single candidate runs here)');
  if (o.queue !== undefined && (workers !== 1 || timeoutMs !== 0)) throw new UsageError('bad-flag', '--workers and --timeout-s are for local runs; with --queue, give each blis worker --concurrency and --timeout-s');
  // The evaluation's budget also bounds each of its runs in the thread running it (the fast engine's wall-clock
  // backstop); without one, each run with fast-engine code has the default backstop.
  if (timeoutMs > 0) opts = { ...opts, wallClockMs: timeoutMs };
  const cache = o.cache === undefined ? new ResultCache() : dirCache(o.cache, io);
  const pool = workers > 1 || timeoutMs > 0 ? new EvaluationPool({ workers, timeoutMs }) : null;
  const baselines = new Map<string, Promise<EvaluationResult>>();
  // A server lives long: runs it has simulated are not simulated again (stage 2 after stage 1, a re-sent candidate).
  const memo = o.serve === true ? new RunMemo() : null;
  const wrap = (r: typeof IN_THREAD): typeof IN_THREAD => (memo === null ? r : memo.wrap(r));
  const run = async (c: Candidate, evalOpts: EvaluateOptions = opts): Promise<EvaluationResult> => {
    const key = ResultCache.key(c, suite, evalOpts);
    const hit = cache.get(key);
    if (hit !== null) return hit;
    const hooks: EvaluateHooks = {
      ...(o.population === undefined && display !== null ? { onRunDone: (d: number, t: number): void => display.units(d, t) } : {}),
      // The baseline goes through the same cache: evaluated once per suite and runs (candidates evaluated at
      // once wait for the same evaluation), then read back.
      evaluateBaseline: (b, bo) => {
        const key = ResultCache.key(b, suite, bo);
        let p = baselines.get(key);
        if (p === undefined) {
          p = run(b, bo).then((r) => {
            // A wall-clock failure is not kept: the next candidate tries again.
            if (r.error?.code === 'EVAL_TIMEOUT' || r.error?.code === 'EVAL_WORKER_DIED') baselines.delete(key);
            return r;
          });
          baselines.set(key, p);
        }
        return p;
      },
    };
    const r = pool === null ? await evaluateCandidate(c, suite, evalOpts, hooks, wrap(IN_THREAD)) : await pool.run(c, suite, evalOpts, hooks, wrap);
    // Wall-clock failures are not facts about the candidate: never cache them.
    if (r.error?.code !== 'EVAL_TIMEOUT' && r.error?.code !== 'EVAL_WORKER_DIED') cache.set(key, r);
    return r;
  };
  try {
    if (o.serve === true) {
      const { startEvaluationServer } = await import('./evaluate-server.js');
      const server = await startEvaluationServer({
        suite,
        host: o.host,
        port: int('--port', o.port, 0),
        budget: int('--budget', o.budget, 1),
        evaluate: (c, only, stage) => run(c, { stage: stage ?? 2, only }),
        candidateFromComponents: (comp, id) => candidateFromComponents(comp, id, engine),
        ...(memo === null ? {} : { runStats: () => ({ simulated: memo.stats.misses, remembered: memo.stats.hits }) }),
      });
      io.stdout(`listening on ${server.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          void server.close().then(resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        // --watch-stdin: the process that started the server holds its stdin; when that process ends (even
        // killed, without cleaning up), stdin closes and the server stops instead of living on as an orphan.
        if (o.watchStdin === true) {
          process.stdin.on('end', stop);
          process.stdin.on('error', stop);
          process.stdin.resume();
        }
      });
      return;
    }
    const sources = [o.candidate, o.components, o.population].filter((x) => x !== undefined);
    if (sources.length !== 1) throw new UsageError('bad-flag', 'give exactly one of --candidate FILE, --components FILE.json or --population DIR');
    if (o.population !== undefined) {
      const dir = o.population;
      let names: string[];
      try {
        names = readdirSync(dir).filter((n) => /\.(ya?ml|json|js|mjs)$/.test(n)).sort();
      } catch (e) {
        throw new UsageError('io', `--population: cannot read ${dir}: ${(e as Error).message}`);
      }
      if (names.length === 0) throw new UsageError('bad-flag', `--population: ${dir} holds no candidate (.yaml, .yml, .json or .js files)`);
      const cands = names.map((n) => loadCandidate(path.join(dir, n), o.controlPoint as ControlPoint, engine));
      const results = o.queue !== undefined
        ? await (await import('./evaluate-queue.js')).evaluateOnQueue(cands, suite, opts, cache, o, io)
        : await Promise.all(cands.map(async (c) => {
          const r = await run(c);
          display?.units(++candidatesDone, cands.length);
          return r;
        }));
      io.stdout(`${JSON.stringify(rankPopulation(results, suite), null, 2)}\n`);
      return;
    }
    let candidate: Candidate;
    if (o.components !== undefined) {
      let comps: unknown;
      const text = read(o.components, '--components');
      try {
        comps = parseJson(text, o.components);
      } catch (e) {
        if (e instanceof BlisError) throw new UsageError('bad-flag', `--components: ${e.message}`);
        throw e;
      }
      if (comps === null || typeof comps !== 'object' || Array.isArray(comps)) throw new UsageError('bad-flag', '--components must hold a JSON object of name: text');
      try {
        candidate = candidateFromComponents(comps as Record<string, string>, path.basename(o.components), engine);
      } catch (e) {
        throw new UsageError('bad-flag', `--components: ${(e as Error).message}`);
      }
    } else {
      candidate = loadCandidate(o.candidate as string, o.controlPoint as ControlPoint, engine);
    }
    const result = await run(candidate);
    display?.stop();
    if (reportOut === null) {
      io.stdout(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    // The report draws the scenario runs' report data; stdout is the result without it, as without --report.
    const { evaluationView, renderEvaluationReport } = await import('../report/index.js');
    const html = await renderEvaluationReport(evaluationView(JSON.parse(JSON.stringify(result)) as Record<string, unknown>, path.basename(o.candidate ?? o.components ?? 'candidate')));
    const plain = { ...result, scenarios: result.scenarios.map(({ report_data: _, ...rest }) => rest) };
    commitOutputs([[reportOut, html]]);
    io.stdout(`${JSON.stringify(plain, null, 2)}\n`);
  } finally {
    display?.stop();
    await pool?.close();
  }
}

export function printSuites(io: Io): void {
  io.stdout(`${JSON.stringify(describeSuites(), null, 2)}\n`);
}

export interface CheckFlags {
  seedSets: string;
  workers: string;
  semantics?: string;
  quiet?: boolean;
}

/**
 * `blis suites check NAME|FILE`: the suite's baseline, known-good and known-bad policies on held-out seed sets, the
 * paired differences and whether the suite tells them apart (evaluate/suite-check.ts). The figures go to stdout as
 * JSON; a suite that fails its checks is reported on stderr too (exit 0: the figures are the answer).
 */
export async function checkSuiteCommand(name: string, o: CheckFlags, io: Io): Promise<void> {
  const suite = loadSuite(name, o.semantics);
  const sets = int('--seed-sets', o.seedSets, 2);
  if (sets > 100) throw new UsageError('bad-flag', `--seed-sets must be <= 100, got ${sets}`);
  const workers = threadCount('--workers', o.workers);
  const pool = workers > 1 ? new EvaluationPool({ workers, timeoutMs: 0 }) : null;
  const display = progressDisplay('evaluate', o.quiet === true);
  const total = sets * (1 + suite.knownGood.length + suite.knownBad.length);
  let done = 0;
  try {
    const result = await checkSuite(suite, sets, async (c, s, eo) => {
      const r = pool === null ? await evaluateCandidate(c, s, eo) : await pool.run(c, s, eo);
      display?.units(++done, total);
      return r;
    });
    display?.stop();
    if (!result.passed) {
      const failed = result.policies.filter((p) => !p.check.passed).map((p) => `${p.id} (${p.check.requirement})`);
      io.warn(`suite ${suite.name} does not tell its policies apart: ${[...failed, ...(result.saturation.passed ? [] : [`saturated: the best policy scores ${result.saturation.best_mean.toFixed(4)}`])].join('; ')}`);
    }
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    display?.stop();
    await pool?.close();
  }
}
