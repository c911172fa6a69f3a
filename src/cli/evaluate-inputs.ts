/**
 * What `blis evaluate`, `blis search` and `blis suites check` read the same way: the suite (built-in or a file,
 * under --semantics, --latency-model or --latency-profile), integer flags, and the --cache directory.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  findSuite,
  parseSuite,
  withSemantics,
  ResultCache,
  BUILTIN_SUITES,
  type Scenario,
  type Suite,
} from '../evaluate/index.js';
import { isSemantics, SEMANTICS } from '../domain/semantics.js';
import { UsageError } from './errors.js';
import { parseLatencyProfile } from '../latency/profile.js';
import { LATENCY_BACKENDS } from '../sim/latency-backends.js';
import { showValue } from '../domain/errors.js';
import { parseIntFlag } from '../sim/options.js';
import type { Io } from './io.js';
import { checkOutputPath, commitOutputs } from './outputs.js';
import { readInputFile } from './read-input.js';

export function read(file: string, flag: string): string {
  return readInputFile(file, flag);
}

export function loadSuite(name: string, semantics: string | undefined, latencyProfile?: string, latencyModel?: string): Suite {
  if (semantics !== undefined && !isSemantics(semantics)) throw new UsageError('bad-flag', `--semantics must be ${SEMANTICS.join(' or ')}, got ${showValue(semantics)}`);
  const builtin = findSuite(name);
  if (builtin === undefined && !existsSync(name)) {
    throw new UsageError('bad-flag', `--suite: ${showValue(name)} is neither a built-in suite (${BUILTIN_SUITES.map((s) => s.name).join(', ')}) nor a file; blis suites lists the built-in ones`);
  }
  const parsed = builtin ?? parseSuite(read(name, '--suite'), name);
  const suite = semantics === undefined ? parsed : withSemantics(parsed, semantics);
  if (latencyModel !== undefined && latencyProfile !== undefined) throw new UsageError('bad-flag', '--latency-model and --latency-profile do not go together: a profile is a latency model of its own');
  if (latencyModel !== undefined) return withLatencyModel(suite, latencyModel);
  return latencyProfile === undefined ? suite : withLatencyProfile(suite, latencyProfile);
}

/**
 * Every scenario simulated with latency backend `model` (`--latency-model`): the same suite under other physics,
 * e.g. to check that a policy's gain is not an artefact of one latency model.
 */
function withLatencyModel(suite: Suite, model: string): Suite {
  if (!Object.hasOwn(LATENCY_BACKENDS, model)) throw new UsageError('bad-flag', `--latency-model must be one of ${Object.keys(LATENCY_BACKENDS).join(', ')}, got ${showValue(model)}`);
  const apply = (sc: Scenario): Scenario => {
    for (const k of ['latencyProfile', 'alphaCoeffs', 'betaCoeffs']) {
      if (k in sc.config) throw new UsageError('bad-flag', `--latency-model: scenario "${sc.name}" sets ${k} itself, which fixes its latency model; drop --latency-model`);
    }
    return { ...sc, config: { ...sc.config, latencyModel: model } };
  };
  return { ...suite, stage1: suite.stage1.map(apply), stage2: suite.stage2.map(apply) };
}

const PROFILE_FILE = 'latency-profile.yaml';

/**
 * Every scenario simulated with the fitted profile (checked here, so a bad file is one located error before any
 * evaluation). The profile text becomes part of each scenario, hence of the result cache's key.
 */
function withLatencyProfile(suite: Suite, file: string): Suite {
  const text = read(file, '--latency-profile');
  parseLatencyProfile(text, file);
  const apply = (sc: Scenario): Scenario => {
    for (const k of ['latencyModel', 'latencyProfile', 'alphaCoeffs', 'betaCoeffs']) {
      if (k in sc.config) throw new UsageError('bad-flag', `--latency-profile: scenario "${sc.name}" sets ${k} itself; drop one of them`);
    }
    return { ...sc, config: { ...sc.config, latencyProfile: PROFILE_FILE }, files: { ...sc.files, [PROFILE_FILE]: text } };
  };
  return { ...suite, stage1: suite.stage1.map(apply), stage2: suite.stage2.map(apply) };
}

export function int(flag: string, v: string, min: number): number {
  const n = parseIntFlag(flag, v);
  if (n < min) throw new UsageError('bad-flag', `${flag} must be an integer >= ${min}, got ${n}`);
  return n;
}

/**
 * The `--cache` directory, checked (created when missing) before any evaluation. Entries are written to a
 * temporary name and renamed, so a reader never sees half an entry; an entry that cannot be written costs a
 * warning, not the evaluations already done.
 */
export function dirCache(dir: string, io: Io): ResultCache {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new UsageError('io', `--cache: cannot create the directory ${dir}: ${(e as Error).message}`);
  }
  checkOutputPath('--cache', path.join(dir, 'entry.json'));
  let warned = false;
  return new ResultCache({
    get: (k) => {
      const f = path.join(dir, `${k}.json`);
      return existsSync(f) ? readInputFile(f, '--cache-dir') : null;
    },
    set: (k, v) => {
      try {
        commitOutputs([[checkOutputPath('--cache', path.join(dir, `${k}.json`)), v]]);
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        if (!warned) io.warn(`${e.message}; results are not cached`);
        warned = true;
      }
    },
  });
}
