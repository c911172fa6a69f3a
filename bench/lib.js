// Helpers shared by the benchmarks: timed child processes (wall, CPU, peak RSS), paired statistics, formatting.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BLIS = path.join(ROOT, 'bin', 'blis.js');

/** GNU time reports a child's peak RSS and CPU time; without it those figures are "not measured". */
const GNU_TIME = ['/usr/bin/time', '/bin/time'].find((p) => existsSync(p) && spawnSync(p, ['-f', '%M', 'true']).status === 0) ?? null;

const scratch = mkdtempSync(path.join(tmpdir(), 'blis-bench-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs `cmd args` to completion (in `env`) and measures it: wall time (this process's clock around the child),
 * and with GNU time the child's user+system CPU time and peak RSS. Throws when the command fails.
 */
export function timedRun(cmd, args, { cwd = ROOT, label = cmd, env = process.env } = {}) {
  const timeFile = path.join(scratch, 'time.txt');
  const argv = GNU_TIME === null ? [cmd, ...args] : [GNU_TIME, '-f', '%U %S %M', '-o', timeFile, cmd, ...args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${label} failed (exit ${r.status ?? r.signal}): ${r.stderr.toString().trim().split('\n').slice(-3).join(' | ')}`);
  let cpuS = null;
  let rssMiB = null;
  if (GNU_TIME !== null) {
    const [u, s, kib] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
    cpuS = u + s;
    rssMiB = kib / 1024;
  }
  return { wallS, cpuS, rssMiB, stdout: r.stdout };
}

export function median(xs) {
  const v = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = v.length >> 1;
  return v.length % 2 === 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export const fmtS = (x) => (x === null ? 'n/a' : x < 1 ? `${(x * 1000).toFixed(0)} ms` : `${x.toFixed(2)} s`);
export const fmtMiB = (x) => (x === null ? 'n/a' : `${x.toFixed(0)} MiB`);
export const fmtX = (x) => (x === null ? 'n/a' : `${x.toFixed(1)}x`);

/** "met" / "NOT met" for a measured figure, "not measured" otherwise: no target is met without a measurement. */
export function verdict(measured, ok) {
  if (measured === null || measured === undefined || !Number.isFinite(measured)) return 'not measured';
  return ok ? 'met' : 'NOT met';
}

export function argValue(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}
