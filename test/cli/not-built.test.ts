/**
 * An unbuilt checkout is a set-up error: bin/blis.js (through bin/load-cli.js) prints one `error: blis-ts is not
 * built: ...` line naming the folder to build in and exits 2 (the CLI's set-up exit code, which the Python
 * adapters of integrations/ turn into an exception), instead of Node's ERR_MODULE_NOT_FOUND stack and exit 1.
 * Each case runs the real launcher files copied into a temporary package folder.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../io/processes.js';

const work = mkdtempSync(path.join(tmpdir(), 'blis-not-built-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A package folder holding bin/ and package.json and, when given, these files under dist/. */
function checkout(name: string, dist: Record<string, string> | null): string {
  const root = path.join(work, name);
  mkdirSync(path.join(root, 'bin'), { recursive: true });
  for (const f of ['blis.js', 'load-cli.js', 'package.json']) copyFileSync(path.join(ROOT, 'bin', f), path.join(root, 'bin', f));
  copyFileSync(path.join(ROOT, 'package.json'), path.join(root, 'package.json'));
  if (dist !== null) {
    mkdirSync(path.join(root, 'dist'));
    for (const [file, text] of Object.entries(dist)) {
      mkdirSync(path.dirname(path.join(root, 'dist', file)), { recursive: true });
      writeFileSync(path.join(root, 'dist', file), text);
    }
  }
  return root;
}

function blis(root: string, argv: readonly string[], extra: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of ['NODE_OPTIONS', 'BLIS_NO_CODE_CACHE', 'BLIS_DEBUG_CODE_CACHE']) if (!(k in extra)) delete env[k];
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'blis.js'), ...argv], { cwd: work, env, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const line = (root: string): string => `error: blis-ts is not built: run npm run build (or npm ci, then npm run build) in ${root}\n`;

describe('bin/blis.js in a checkout that is not built', () => {
  it('without dist/: one error line naming the folder, exit 2, for any command', () => {
    const root = checkout('no-dist', null);
    for (const argv of [['--version'], ['evaluate', '--suite', 'routing-prefix-heavy', '--candidate', 'x.js'], ['suites'], []]) {
      const r = blis(root, argv);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(line(root));
      expect(r.stdout).toBe('');
    }
  });

  it('with an empty dist/, or a cache without its bundle and no ESM build: the same', () => {
    for (const [name, dist] of [['empty-dist', {}], ['cache-only', { 'cli.cjs.cache': 'x'.repeat(64) }]] as const) {
      const root = checkout(name, dist);
      const r = blis(root, ['--version']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(line(root));
    }
  });

  it('with an ESM build missing one of its chunks (a partial build): the same', () => {
    const root = checkout('partial', { 'cli/main.js': 'import "../chunks/chunk-GONE.js";\nexport const main = async () => 0;\n' });
    const r = blis(root, ['--version']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(line(root));
  });

  it('BLIS_DEBUG_CODE_CACHE=1 still says what was tried before the error line', () => {
    const root = checkout('debug', null);
    const r = blis(root, ['--version'], { BLIS_DEBUG_CODE_CACHE: '1' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`debug: code cache absent (dist/cli/main.js)\n${line(root)}`);
  });

  it('a build that fails for another reason is not mistaken for a missing build', () => {
    const root = checkout('broken', { 'cli/main.js': 'throw new Error("broken build");\n' });
    const r = blis(root, ['--version']);
    expect(r.code).not.toBe(2);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('broken build');
    expect(r.stderr).not.toContain('is not built');
  });
});
