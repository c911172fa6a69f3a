/**
 * Shared conventions of the fuzz suites in test/fuzz/ (every file here follows them):
 *
 * - **Seeded, printed, repeatable.** Every property run takes its settings from {@link fuzzParams}, which prints
 *   one line `fuzz <name>: <cases> cases, seed <seed>` and returns `{ seed, numRuns }` for `fc.assert`. The seed is
 *   `FUZZ_SEED` when set, else a fixed default, so `npm test` runs the same cases every time; a failure prints the
 *   seed and fast-check's counterexample path, and `FUZZ_SEED=<seed> npx vitest run test/fuzz/<file>` repeats it.
 * - **Scaled by FUZZ_RUNS.** Each suite states a base case count sized so that the whole folder stays within about
 *   60 s in `npm test`; `FUZZ_RUNS` (default 1) multiplies every base count (and, through {@link fuzzTimeout},
 *   the test's timeout). `npm run fuzz` runs the long campaign
 *   (FUZZ_RUNS=25 and a fresh random seed unless FUZZ_SEED is given; see scripts/fuzz.js).
 * - **One outcome contract** ({@link assertContract}): exit 0; or exit 2 with exactly one `error:` line (a single
 *   printable line, no raw control bytes, at most {@link MAX_ERROR_CHARS} characters), empty stdout and no new
 *   files; never exit 70 (an internal error), never past the time bound, never past the memory bound.
 * - **In-process where possible.** {@link CliWorker} runs `main(argv, io)` of the built CLI (dist/) in a worker
 *   thread that stays warm between cases: as fast as in-process, yet a case that hangs is terminated at its time
 *   bound and one that allocates without bound hits the worker's heap limit — either is reported as a failure
 *   with its argv. A few cases per suite also run as real child processes ({@link runChild}).
 * - **Files in a sandbox.** Each case writes its inputs into a fresh directory from {@link caseDir}; paths given to
 *   the CLI are absolute and inside it, so "no new files" is a directory listing before and after.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { expect } from 'vitest';
import { BLIS, ROOT, ensureBuilt } from '../io/processes.js';

/** Multiplier of every suite's base case count (`FUZZ_RUNS=25` for a long campaign). */
export function fuzzFactor(): number {
  const raw = process.env.FUZZ_RUNS;
  if (raw === undefined || raw === '') return 1;
  const f = Number(raw);
  if (!Number.isFinite(f) || f <= 0) throw new Error(`FUZZ_RUNS must be a positive number, got "${raw}"`);
  return f;
}

/** The seed of this run: FUZZ_SEED, else a fixed default (CI runs the same cases every time). */
export function fuzzSeed(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return 20_250_611;
  const s = Number(raw);
  if (!Number.isSafeInteger(s)) throw new Error(`FUZZ_SEED must be an integer, got "${raw}"`);
  return s;
}

/** fast-check settings for one property (`fc.assert(prop, fuzzParams('spec files', 60))`); prints them. */
export function fuzzParams(name: string, baseRuns: number): { seed: number; numRuns: number; endOnFailure: true } {
  const numRuns = Math.max(1, Math.round(baseRuns * fuzzFactor()));
  const seed = fuzzSeed();
  console.info(`fuzz ${name}: ${numRuns} cases, seed ${seed}`);
  return { seed, numRuns, endOnFailure: true };
}

/** Timeout of a test (`it(..., fuzzTimeout(60_000))`) whose case count {@link fuzzParams} scales. */
export function fuzzTimeout(baseMs: number): number {
  return Math.round(baseMs * Math.max(1, fuzzFactor()));
}

/** What one CLI invocation did. */
export interface Outcome {
  readonly argv: readonly string[];
  readonly code: number;
  readonly stdout: string;
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
  /** Wall time of the invocation, ms. */
  readonly ms: number;
  /** Files that appeared in the case directory (relative names). */
  readonly newFiles: readonly string[];
  /** Set when the case broke the time or memory bound (the worker was replaced). */
  readonly fault?: string;
}

export const MAX_ERROR_CHARS = 2000;
/** Default bounds per case: generous for a shared 2-core machine, far below what a runaway input takes. */
export const CASE_TIMEOUT_MS = 20_000;
export const CASE_HEAP_MB = 768;

/** Asserts the outcome contract (see the header); `allowed` narrows the accepted exit codes. */
export function assertContract(o: Outcome, allowed: readonly (0 | 2)[] = [0, 2]): void {
  const where = `blis ${o.argv.map((a) => JSON.stringify(a.length > 200 ? `${a.slice(0, 200)}…` : a)).join(' ')}`;
  expect(o.fault, `${where}: ${o.fault ?? ''}`).toBeUndefined();
  expect(allowed, `${where}: exit ${o.code}, stderr ${JSON.stringify(o.errors)}`).toContain(o.code);
  if (o.code === 2) {
    expect(o.errors, `${where}: one error line`).toHaveLength(1);
    const line = o.errors[0]!;
    expect(line.length, `${where}: error line too long`).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    // eslint-disable-next-line no-control-regex
    expect(line, `${where}: raw control bytes in ${JSON.stringify(line)}`).not.toMatch(/[\u0000-\u001f\u007f-\u009f\ufffd]/);
    expect(line, `${where}: internal error`).not.toMatch(/^internal:/);
    expect(o.stdout, `${where}: stdout not empty`).toBe('');
    expect(o.newFiles, `${where}: files written on failure`).toEqual([]);
  } else {
    expect(o.errors, `${where}: error lines on success`).toEqual([]);
  }
}

/** {@link assertContract}, with the case's input files appended to a failure message (so it can be repeated). */
export function checkOutcome(o: Outcome, inputs: Readonly<Record<string, string | Uint8Array>> = {}, allowed: readonly (0 | 2)[] = [0, 2]): void {
  try {
    assertContract(o, allowed);
  } catch (e) {
    const shown = Object.entries(inputs)
      .map(([name, body]) => `--- ${name}\n${typeof body === 'string' ? JSON.stringify(body.slice(0, 3000)) : `base64:${Buffer.from(body).toString('base64').slice(0, 3000)}`}`)
      .join('\n');
    if (e instanceof Error && shown !== '') e.message += `\ninputs:\n${shown}`;
    throw e;
  }
}

let sandboxRoot: string | null = null;
let caseCounter = 0;

/** A fresh empty directory for one case (under one temp root removed by {@link cleanupSandbox}). */
export function caseDir(): string {
  sandboxRoot ??= mkdtempSync(path.join(tmpdir(), 'blis-fuzz-'));
  const d = path.join(sandboxRoot, `c${caseCounter++}`);
  mkdirSync(d);
  return d;
}

export function cleanupSandbox(): void {
  if (sandboxRoot !== null) rmSync(sandboxRoot, { recursive: true, force: true });
  sandboxRoot = null;
}

/** Writes `files` (name -> text or bytes) into `dir`; returns name -> absolute path. */
export function writeFiles(dir: string, files: Readonly<Record<string, string | Uint8Array>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, body] of Object.entries(files)) {
    const p = path.join(dir, name);
    writeFileSync(p, body);
    out[name] = p;
  }
  return out;
}

/** Names under `dir` (recursively for a case directory; the working directory only at its top level). */
function listing(dir: string, recursive = true): Set<string> {
  try {
    return new Set(readdirSync(dir, { recursive }).map(String));
  } catch {
    return new Set();
  }
}

/** Worker body: imports the built CLI once, then runs each posted argv through `main(argv, io)`. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const mainP = import(workerData.mainUrl).then((m) => m.main);
parentPort.on('message', async ({ id, argv }) => {
  const main = await mainP;
  let stdout = '';
  const errors = [], warnings = [];
  const io = { stdout: (t) => { stdout += t; }, warn: (t) => warnings.push(t), error: (t) => errors.push(t), info: () => undefined };
  const t0 = performance.now();
  let code;
  try { code = await main(argv, io); } catch (e) { code = -1; errors.push('escaped main: ' + String(e && e.stack || e)); }
  parentPort.postMessage({ id, code, stdout, errors, warnings, ms: performance.now() - t0 });
});
`;

interface Reply {
  id: number;
  code: number;
  stdout: string;
  errors: string[];
  warnings: string[];
  ms: number;
}

/**
 * The CLI's `main(argv, io)` in a warm worker thread with a heap limit; {@link CliWorker.run} enforces the time
 * bound by terminating the worker (and starting a fresh one for the next case).
 */
export class CliWorker {
  private worker: Worker | null = null;
  private nextId = 0;
  /** Cases by exit code, for the closing line of each suite. */
  private readonly codes = new Map<number, number>();

  constructor(
    private readonly timeoutMs = CASE_TIMEOUT_MS,
    private readonly heapMb = CASE_HEAP_MB,
  ) {
    ensureBuilt();
  }

  private start(): Worker {
    const mainUrl = pathToFileURL(path.join(ROOT, 'dist', 'cli', 'main.js')).href;
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { mainUrl },
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
      stdout: true,
      stderr: true,
    });
    w.unref();
    this.worker = w;
    return w;
  }

  /** Runs one case; `dir` is the case directory checked for new files. */
  async run(argv: readonly string[], dir?: string): Promise<Outcome> {
    const w = this.worker ?? this.start();
    const before = dir === undefined ? new Set<string>() : listing(dir);
    const cwdBefore = listing(process.cwd(), false);
    const id = this.nextId++;
    const t0 = performance.now();
    const reply = await new Promise<Reply | { fault: string }>((resolve) => {
      const timer = setTimeout(() => resolve({ fault: `no answer within ${this.timeoutMs} ms (hang?)` }), this.timeoutMs);
      const onMessage = (m: Reply): void => {
        if (m.id !== id) return;
        done();
        resolve(m);
      };
      const onError = (e: Error): void => {
        done();
        resolve({ fault: `worker died: ${e.message} (memory bound ${this.heapMb} MB?)` });
      };
      const onExit = (c: number): void => {
        done();
        resolve({ fault: `worker exited with ${c}` });
      };
      const done = (): void => {
        clearTimeout(timer);
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
      };
      w.on('message', onMessage);
      w.on('error', onError);
      w.on('exit', onExit);
      w.postMessage({ id, argv: [...argv] });
    });
    const newFiles = dir === undefined ? [] : [...listing(dir)].filter((f) => !before.has(f)).sort();
    const strayInCwd = [...listing(process.cwd(), false)].filter((f) => !cwdBefore.has(f));
    if ('fault' in reply) {
      await this.close();
      return { argv, code: -1, stdout: '', errors: [], warnings: [], ms: performance.now() - t0, newFiles, fault: reply.fault };
    }
    this.codes.set(reply.code, (this.codes.get(reply.code) ?? 0) + 1);
    const fault = strayInCwd.length > 0 ? `wrote into the working directory: ${strayInCwd.join(', ')}` : undefined;
    return { argv, code: reply.code, stdout: reply.stdout, errors: reply.errors, warnings: reply.warnings, ms: reply.ms, newFiles, ...(fault === undefined ? {} : { fault }) };
  }

  /** `N cases: A ran (exit 0), B refused (exit 2)` — printed when a suite ends, to show what was exercised. */
  summary(): string {
    const n = [...this.codes.values()].reduce((a, b) => a + b, 0);
    const parts = [...this.codes.entries()].sort((a, b) => a[0] - b[0]).map(([code, k]) => `${k} exit ${code}`);
    return `${n} cases: ${parts.join(', ')}`;
  }

  async close(label?: string): Promise<void> {
    if (label !== undefined) console.info(`fuzz ${label}: ${this.summary()}`);
    const w = this.worker;
    this.worker = null;
    if (w !== null) await w.terminate();
  }
}

/**
 * The CLI as a real child process (stdin closed, killed at the time bound, heap-limited); stderr lines that
 * start with `error: ` become {@link Outcome.errors}.
 */
export function runChild(argv: readonly string[], dir?: string, timeoutMs = CASE_TIMEOUT_MS, heapMb = CASE_HEAP_MB): Promise<Outcome> {
  ensureBuilt();
  const before = dir === undefined ? new Set<string>() : listing(dir);
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${heapMb}`, BLIS, ...argv], { cwd: dir ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let fault: string | undefined;
    child.stdout.on('data', (d: Buffer) => void (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
    const t = setTimeout(() => {
      fault = `killed after ${timeoutMs} ms (hang?)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(t);
      const lines = stderr.split('\n').filter((l) => l !== '');
      const errors = lines.filter((l) => l.startsWith('error: ')).map((l) => l.slice('error: '.length));
      const warnings = lines.filter((l) => l.startsWith('warning: ')).map((l) => l.slice('warning: '.length));
      // Every stderr line of a failure must be the error line (no stack trace after it).
      const stray = lines.filter((l) => !/^(error|warning|info|debug): /.test(l));
      if (fault === undefined && signal !== null) fault = `killed by ${signal}`;
      if (fault === undefined && code === 2 && stray.length > 0) fault = `stray stderr lines: ${JSON.stringify(stray.slice(0, 3))}`;
      const newFiles = dir === undefined ? [] : [...listing(dir)].filter((f) => !before.has(f)).sort();
      resolve({ argv, code: code ?? -1, stdout, errors, warnings, ms: performance.now() - t0, newFiles, ...(fault === undefined ? {} : { fault }) });
    });
  });
}
