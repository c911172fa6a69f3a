/**
 * Bridge to the Python integration tests (integrations/tests: the OpenEvolve evaluator, the GEPA adapter and
 * optimize_anything evaluator, and `blis evaluate --serve`): runs `python3 -m unittest discover` from the
 * repository root against the built CLI (`npm test` builds first) and requires that tests ran and passed.
 * Skipped, with the reason printed, when python3 is not installed.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TIMEOUT_MS = 10 * 60 * 1000;

const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
const hasPython = python.error === undefined && python.status === 0;
if (!hasPython) console.warn('test/integrations/python.test.ts: skipped: python3 is not installed (the integrations under integrations/ are Python)');

describe('Python integrations (OpenEvolve, GEPA, evaluation server)', () => {
  it.skipIf(!hasPython)('python3 -m unittest discover -s integrations/tests passes', async () => {
    expect(existsSync(path.join(ROOT, 'dist', 'cli', 'main.js')), 'dist/ is missing: run npm run build first').toBe(true);
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(
        'python3',
        ['-m', 'unittest', 'discover', '-s', 'integrations/tests', '-v'],
        { cwd: ROOT, timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, killSignal: 'SIGKILL' },
        (error, stdout, stderr) => {
          const exit = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
          resolve({ code: exit, output: `${stdout}${stderr}` });
        },
      );
    });
    const ran = /^Ran (\d+) tests? in /m.exec(output);
    expect(ran, `unittest printed no summary:\n${output.slice(-4000)}`).not.toBeNull();
    expect(Number(ran![1]), 'no Python test ran').toBeGreaterThan(0);
    expect(code, `python integration tests failed:\n${output.slice(-8000)}`).toBe(0);
    expect(output).toMatch(/^OK/m);
  }, TIMEOUT_MS + 30_000);
});
