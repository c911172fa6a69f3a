/**
 * `blis evaluate` (one candidate, a population, or GEPA's HTTP evaluation server) and `blis suites`.
 * A broken candidate is a scored result (exit 0); only a broken suite, flags or files exit 2.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import {
  candidateFromBundle,
  candidateFromCode,
  candidateFromComponents,
  describeSuites,
  evaluateCandidate,
  findSuite,
  parseSuite,
  ResultCache,
  BUILTIN_SUITES,
  type Candidate,
  type EvaluateOptions,
  type EvaluationResult,
  type Suite,
} from '../evaluate/index.js';
import { rankPopulation } from '../evaluate/population.js';
import { searchTemplate, templateBundle, withSeedOffset } from '../evaluate/search.js';
import { findTemplate, type ParamValue } from '../policy/templates/catalog.js';
import { EvaluationPool } from '../evaluate/pool.js';
import { CONTROL_POINTS, type ControlPoint } from '../policy/view.js';
import { UsageError } from './errors.js';
import type { Io } from './io.js';

function read(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError('io', `${flag}: cannot read ${file}: ${(e as Error).message}`);
  }
}

function loadSuite(name: string): Suite {
  const builtin = findSuite(name);
  if (builtin !== undefined) return builtin;
  if (!existsSync(name)) {
    throw new UsageError('bad-flag', `--suite: "${name}" is neither a built-in suite (${BUILTIN_SUITES.map((s) => s.name).join(', ')}) nor a file; blis suites lists the built-in ones`);
  }
  return parseSuite(read(name, '--suite'), name);
}

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
    if (m === null) throw new UsageError('bad-flag', `--only "${v}": write scenario@seed, e.g. steady@1 (blis suites lists them)`);
    return { scenario: m[1] as string, seed: Number(m[2]) };
  });
}

interface EvaluateFlags {
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
  host: string;
  port: string;
  budget: string;
}

function int(flag: string, v: string, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError('bad-flag', `${flag} must be an integer >= ${min}, got "${v}"`);
  return n;
}

function dirCache(dir: string): ResultCache {
  mkdirSync(dir, { recursive: true });
  return new ResultCache({
    get: (k) => {
      const f = path.join(dir, `${k}.json`);
      return existsSync(f) ? readFileSync(f, 'utf8') : null;
    },
    set: (k, v) => writeFileSync(path.join(dir, `${k}.json`), v),
  });
}

async function evaluateCommand(o: EvaluateFlags, io: Io): Promise<void> {
  const suite = loadSuite(o.suite);
  if (o.stage !== '1' && o.stage !== '2') throw new UsageError('bad-flag', `--stage must be 1 or 2, got "${o.stage}"`);
  if (!(CONTROL_POINTS as readonly string[]).includes(o.controlPoint)) throw new UsageError('bad-flag', `--control-point must be one of ${CONTROL_POINTS.join(', ')}, got "${o.controlPoint}"`);
  if (o.engine !== 'fast' && o.engine !== 'strict') throw new UsageError('bad-flag', `--engine must be fast or strict, got "${o.engine}"`);
  const engine = o.engine;
  const opts: EvaluateOptions = { stage: Number(o.stage) as 1 | 2, only: parseOnly(o.only) };
  const workers = int('--workers', o.workers, 1);
  const timeoutMs = int('--timeout-s', o.timeoutS, 0) * 1000;
  const cache = o.cache === undefined ? new ResultCache() : dirCache(o.cache);
  const pool = workers > 1 || timeoutMs > 0 ? new EvaluationPool({ workers, timeoutMs }) : null;
  const run = async (c: Candidate, evalOpts: EvaluateOptions = opts): Promise<EvaluationResult> => {
    const key = ResultCache.key(c, suite, evalOpts);
    const hit = cache.get(key);
    if (hit !== null) return hit;
    const r = pool === null ? await evaluateCandidate(c, suite, evalOpts) : await pool.run(c, suite, evalOpts);
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
        evaluate: (c, only) => run(c, { stage: 2, only }),
        candidateFromComponents: (comp, id) => candidateFromComponents(comp, id, engine),
      });
      io.stdout(`listening on ${server.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          void server.close().then(resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
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
      const results = await Promise.all(cands.map((c) => run(c)));
      io.stdout(`${JSON.stringify(rankPopulation(results, suite), null, 2)}\n`);
      return;
    }
    let candidate: Candidate;
    if (o.components !== undefined) {
      let comps: unknown;
      try {
        comps = JSON.parse(read(o.components, '--components'));
      } catch (e) {
        if (e instanceof UsageError) throw e;
        throw new UsageError('bad-flag', `--components: ${o.components} is not JSON: ${(e as Error).message}`);
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
    io.stdout(`${JSON.stringify(await run(candidate), null, 2)}\n`);
  } finally {
    await pool?.close();
  }
}

interface SearchFlags {
  template: string;
  suite: string;
  budget: string;
  randomShare: string;
  seed: string;
  start: string;
  holdoutOffset: string;
  cache?: string;
}

function parseStart(text: string): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  if (text.trim() === '') return out;
  for (const part of text.split(',')) {
    const [k, v] = part.split('=').map((x) => x.trim()) as [string, string | undefined];
    if (k === '' || v === undefined) throw new UsageError('bad-flag', `--start "${part}": write name=value,... (blis policies lists the parameters)`);
    out[k] = v === 'true' ? true : v === 'false' ? false : Number.isFinite(Number(v)) && v !== '' ? Number(v) : v;
  }
  return out;
}

async function searchCommand(o: SearchFlags, io: Io): Promise<void> {
  const suite = loadSuite(o.suite);
  const t = findTemplate(o.template);
  if (t === undefined) throw new UsageError('bad-flag', `--template: unknown template "${o.template}"; blis policies lists them`);
  const budget = int('--budget', o.budget, 1);
  const seed = int('--seed', o.seed, 0);
  const share = Number(o.randomShare);
  if (!(share >= 0 && share <= 1)) throw new UsageError('bad-flag', `--random-share must be in [0, 1], got "${o.randomShare}"`);
  const start = parseStart(o.start);
  for (const k of Object.keys(start)) if (!t.parameters.some((p) => p.name === k)) throw new UsageError('bad-flag', `--start: ${t.name} has no parameter "${k}"; parameters: ${t.parameters.map((p) => p.name).join(', ')}`);
  const cache = o.cache === undefined ? new ResultCache() : dirCache(o.cache);
  const evaluate = async (c: Candidate, evalOpts: EvaluateOptions, s: Suite = suite): Promise<EvaluationResult> => {
    const key = ResultCache.key(c, s, evalOpts);
    const hit = cache.get(key);
    if (hit !== null) return hit;
    const r = await evaluateCandidate(c, s, evalOpts);
    cache.set(key, r);
    return r;
  };
  const result = await searchTemplate(suite, { template: t.name, budget, randomShare: share, seed, start }, (c, eo) => evaluate(c, eo));
  const offset = int('--holdout-offset', o.holdoutOffset, 0);
  let holdout: Record<string, unknown> | null = null;
  if (offset > 0) {
    const held = withSeedOffset(suite, offset);
    const score = async (params: Readonly<Record<string, ParamValue>>, id: string): Promise<number> =>
      (await evaluate(candidateFromBundle(id, templateBundle(t, params, id)), { stage: 2 }, held)).combined_score;
    holdout = { seed_offset: offset, start: await score(result.start.parameters, 'holdout-start'), best: await score(result.best.parameters, 'holdout-best') };
  }
  io.stdout(`${JSON.stringify({ ...result, holdout }, null, 2)}\n`);
}

export function registerEvaluateCommands(root: Command, io: Io): void {
  const sc = root
    .command('search')
    .description('baseline optimiser over one template\'s parameters (random search, then a (1+1)-ES hill-climb) with the evaluator; prints the best bundle')
    .requiredOption('--template <name>', 'the template to tune (blis policies lists them)')
    .requiredOption('--suite <name|file>', 'a built-in suite (blis suites) or a suite file')
    .addOption(new Option('--budget <n>', 'evaluations in all').default('30'))
    .addOption(new Option('--random-share <x>', 'share of the budget spent on random search').default('0.4'))
    .addOption(new Option('--seed <n>', 'seed of the search\'s own draws').default('1'))
    .addOption(new Option('--start <k=v,...>', 'starting parameters (the others at their defaults)').default(''))
    .addOption(new Option('--holdout-offset <n>', 'also score the start and the best on the suite\'s seeds + n (0 = skip)').default('1000'))
    .option('--cache <dir>', 'content-addressed result cache');
  sc.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  sc.action(async (o: SearchFlags) => searchCommand(o, io));

  const c = root
    .command('evaluate')
    .description('score a policy candidate (bundle, .js code or GEPA components) on an evaluation suite: one JSON document with combined_score, objectives, features, per-scenario metrics and reflection artifacts')
    .option('--candidate <file>', 'policy bundle (YAML/JSON) or a .js file with one control point\'s code')
    .option('--components <file>', 'a JSON object of text components: {"bundle": ...} or control points (routing, admission, ...) holding code')
    .option('--population <dir>', 'evaluate every candidate file in the folder and rank them (Pareto fronts, crowding)')
    .addOption(new Option('--control-point <point>', 'control point of a .js candidate').default('routing'))
    .addOption(new Option('--engine <engine>', 'sandbox engine for code candidates: fast or strict').default('fast'))
    .requiredOption('--suite <name|file>', 'a built-in suite (blis suites) or a suite file')
    .addOption(new Option('--stage <n>', '1 = the smoke stage only; 2 = stage 1, then the full suite').default('2'))
    .option('--only <scenario@seed>', 'evaluate only this run (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .addOption(new Option('--workers <n>', 'evaluations in parallel worker threads').default('1'))
    .addOption(new Option('--timeout-s <s>', 'wall-clock budget per evaluation in a worker (0 = none; the instruction budget is the real limit)').default('0'))
    .option('--cache <dir>', 'content-addressed result cache (re-evaluating an unchanged candidate is free)')
    .option('--serve', 'serve GEPA\'s HTTP evaluation protocol (POST /evaluate, /evaluate_examples, /validate; GET /status, /task)')
    .addOption(new Option('--host <host>', 'address to bind with --serve').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port with --serve (0 = any free port)').default('0'))
    .addOption(new Option('--budget <n>', 'evaluations the server grants before answering 429').default('1000'));
  c.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  c.action(async (o: EvaluateFlags) => evaluateCommand(o, io));
  const s = root.command('suites').description('list the built-in evaluation suites (scenarios, seeds, objectives) as JSON');
  s.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  s.action(() => {
    io.stdout(`${JSON.stringify(describeSuites(), null, 2)}\n`);
  });
}
