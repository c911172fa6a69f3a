/**
 * Child processes for the end-to-end tests: the built CLI (rebuilt when any source is newer than dist/), a
 * `blis serve` started on a free port, and bounded CLI runs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BLIS = join(ROOT, 'bin', 'blis.js');

function newestSource(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newestSource(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

/**
 * Builds dist/ when it is missing or older than src/ (the child processes run the built CLI: the one-file bundle
 * dist/cli.cjs with its code cache, or dist/cli/main.js).
 */
export function ensureBuilt(): void {
  const main = join(ROOT, 'dist', 'cli', 'main.js');
  const bundled = ['cli.cjs', 'cli.cjs.cache'].every((f) => existsSync(join(ROOT, 'dist', f)));
  if (bundled && existsSync(main) && statSync(main).mtimeMs >= newestSource(join(ROOT, 'src'))) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.js')], { cwd: ROOT, stdio: 'pipe', timeout: 180_000 });
  } catch (e) {
    // The bundle is still written when some unrelated file has type errors; only a missing CLI is fatal here.
    if (!existsSync(main) || statSync(main).mtimeMs < newestSource(join(ROOT, 'src')) - 1000) throw e;
  }
}

/**
 * Best effort: timing-critical children run ahead of the test runner's other workers (which share the CPUs
 * when the whole suite runs). Needs privileges; without them the children keep the default priority.
 */
function prioritise(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) setPriority(child.pid, -10);
  } catch {
    // not permitted: run at normal priority
  }
}

export interface ServeChild {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `blis serve ARGS --port 0` and resolves with its URL once it listens (or rejects within 30 s). */
export function startServeChild(args: readonly string[]): Promise<ServeChild> {
  const child = spawn(process.execPath, [BLIS, 'serve', ...args, '--port', '0', '--log', 'error'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  prioritise(child);
  let out = '';
  let err = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  return new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`blis serve did not start within 30 s: ${out} ${err}`));
    }, 30_000);
    child.stderr?.on('data', (d: Buffer) => void (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolveUrl({ url: m[1] as string, child, stop });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`blis serve exited with ${String(code)}: ${err}`));
    });
  });
}

/** Runs the CLI to completion (killed after `timeoutMs`, prioritised); returns exit code, stdout and stderr. */
export function runCli(args: readonly string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [BLIS, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    prioritise(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => void (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => void (stderr += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolveRun({ code, stdout, stderr });
    });
  });
}
