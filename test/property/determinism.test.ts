/**
 * INV-6 determinism of the built CLI: the same command run twice in fresh processes prints byte-identical
 * stdout (so nothing depends on wall-clock time, process state or hash-map order), and that stdout is one
 * valid JSON document by default. The same holds for `blis replay` of the run's exported trace, which with an
 * unbounded horizon also reproduces the run's stdout exactly (INV-13 run/replay parity).
 */
import { execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin', 'blis.js');
const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const RUN = ['run', ...MODEL, '--num-requests', '200', '--rate', '20'];

let scratch = '';

/** stdout of `blis <args>` in a fresh Node process (stderr, e.g. default-TP warnings, is ignored). */
function blis(args: readonly string[]): string {
  return execFileSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

beforeAll(() => {
  // `npm test` builds first; a bare `vitest run` on a fresh clone has no dist/ yet.
  if (!existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) execSync('npm run build', { cwd: ROOT, stdio: 'ignore' });
  scratch = mkdtempSync(path.join(tmpdir(), 'blis-determinism-'));
});

afterAll(() => {
  if (scratch !== '') rmSync(scratch, { recursive: true, force: true });
});

describe('CLI determinism (INV-6)', () => {
  it('blis run prints byte-identical stdout in two processes, as valid JSON', () => {
    const a = blis(RUN);
    const b = blis(RUN);
    expect(b).toBe(a);
    const doc = JSON.parse(a) as { simulation_metrics: Record<string, unknown> };
    expect(doc.simulation_metrics['completed_requests']).toBe(200);
    expect(doc.simulation_metrics['injected_requests']).toBe(200);
  });

  it('blis replay of the exported trace is deterministic and, with an unbounded horizon, matches the run', () => {
    const prefix = path.join(scratch, 'trace');
    const run = blis([...RUN, '--trace-output', prefix]);
    const replay = ['replay', ...MODEL, '--trace-header', `${prefix}.yaml`, '--trace-data', `${prefix}.csv`];
    const a = blis(replay);
    expect(blis(replay)).toBe(a);
    expect(() => JSON.parse(a) as unknown).not.toThrow();
    expect(blis([...replay, '--horizon', '9223372036854775807'])).toBe(run);
  });
});
