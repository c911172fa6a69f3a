/**
 * bin/blis.js runs the CLI from the one-file bundle dist/cli.cjs with the V8 code cache the build made
 * (bin/load-cli.js). The build writes both; this Node accepts the cache; and the cache changes nothing a user
 * sees: the same exit codes and stdout/stderr bytes from the bundle with its cache, from the bundle compiled from
 * source, and from the ESM build. A damaged, stale or foreign cache is passed over silently (the ESM build runs)
 * and nothing is written at run time.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAscii } from 'node:buffer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../io/processes.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const BUNDLE = path.join(ROOT, 'dist', 'cli.cjs');
const CACHE = `${BUNDLE}.cache`;
const work = mkdtempSync(path.join(tmpdir(), 'blis-code-cache-'));

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of a plain `node` (the cache is made without NODE_OPTIONS) with `extra` set. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['NODE_OPTIONS', 'BLIS_NO_CODE_CACHE', 'BLIS_DEBUG_CODE_CACHE']) delete e[k];
  return Object.assign(e, extra);
}

/** `node [nodeArgs] <root>/bin/blis.js argv` in `cwd`. */
function blis(root: string, argv: readonly string[], extra: Record<string, string> = {}, nodeArgs: readonly string[] = [], cwd = work): Outcome {
  const r = spawnSync(process.execPath, [...nodeArgs, path.join(root, 'bin', 'blis.js'), ...argv], { cwd, env: env(extra), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The `debug: code cache ...` line bin/load-cli.js prints with BLIS_DEBUG_CODE_CACHE=1 (and the run's own stderr). */
function loaded(root: string, nodeArgs: readonly string[] = []): string {
  const o = blis(root, ['--version'], { BLIS_DEBUG_CODE_CACHE: '1' }, nodeArgs);
  expect(o.code, o.stderr).toBe(0);
  return o.stderr;
}

/**
 * A copy of the package whose dist/cli.cjs.cache is `cache` (none when null): bin/ and the bundle copied, the
 * rest of dist/ (the ESM build) and node_modules linked.
 */
function packageWith(name: string, cache: Buffer | null): string {
  const root = path.join(work, name);
  mkdirSync(path.join(root, 'bin'), { recursive: true });
  mkdirSync(path.join(root, 'dist'));
  for (const f of ['blis.js', 'load-cli.js', 'package.json']) copyFileSync(path.join(ROOT, 'bin', f), path.join(root, 'bin', f));
  copyFileSync(path.join(ROOT, 'package.json'), path.join(root, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  for (const e of readdirSync(path.join(ROOT, 'dist'))) {
    if (e === 'cli.cjs.cache') continue;
    if (e === 'cli.cjs') copyFileSync(BUNDLE, path.join(root, 'dist', e));
    else symlinkSync(path.join(ROOT, 'dist', e), path.join(root, 'dist', e));
  }
  if (cache !== null) writeFileSync(path.join(root, 'dist', 'cli.cjs.cache'), cache);
  return root;
}

/** A V8 code cache of some other script, made by a plain `node` (so with this Node's version and flag hashes). */
function otherScriptsCache(): Buffer {
  const r = spawnSync(process.execPath, ['-e', "process.stdout.write(new (require('node:vm').Script)('1 + 1').createCachedData().toString('base64'))"], { env: env({}), encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return Buffer.from(r.stdout, 'base64');
}

const CODE_POLICY = `routing:
  type: code
  language: javascript
  engine: strict
  source: |
    function route(request, state) {
      const least = Math.min(...state.instances.map((x) => x.load));
      const tied = state.instances.filter((x) => x.load === least);
      return { target: tied[state.rng.intn(tied.length)].id, reason: 'least loaded' };
    }
`;

/**
 * Commands whose exit code and bytes must not depend on how the CLI was loaded: help, usage errors, runs, and a
 * report (with the file it writes).
 */
const COMMANDS: readonly { readonly argv: readonly string[]; readonly code: number; readonly file?: string }[] = [
  { argv: ['--help'], code: 0 },
  { argv: ['--version'], code: 0 },
  { argv: [], code: 2 },
  { argv: ['run', '--help'], code: 0 },
  { argv: ['run', ...M, '--no-such-flag'], code: 2 },
  { argv: ['run', ...M, '--num-requests', '0'], code: 2 },
  { argv: ['run', ...M, '--num-requests', '1', '--log', 'error'], code: 0 },
  { argv: ['run', ...M, '--num-requests', '200', '--rate', '60', '--num-instances', '4', '--routing-policy', 'weighted', '--routing-scorers', 'prefix-affinity:3,queue-depth:2,kv-utilization:2', '--prefix-tokens', '256', '--output-format', 'reference'], code: 0 },
  // The strict sandbox: quickjs-wasi, bundled into dist/cli.cjs.
  { argv: ['run', ...M, '--num-requests', '30', '--num-instances', '2', '--policy-config', 'code.yaml', '--log', 'error'], code: 0 },
  // Charts: vega and vega-lite, imported by the bundle from node_modules.
  { argv: ['run', ...M, '--num-requests', '30', '--log', 'error', '--report', 'report.html'], code: 0, file: 'report.html' },
];

/** `blis argv` and the file it wrote (removed afterwards). */
function outcome(root: string, argv: readonly string[], file: string | undefined, extra: Record<string, string> = {}): Outcome & { readonly file?: string } {
  const o = blis(root, argv, extra);
  if (file === undefined) return o;
  const written = readFileSync(path.join(work, file), 'utf8');
  rmSync(path.join(work, file));
  return { ...o, file: written };
}

let sourceCompiled = '';
beforeAll(() => {
  ensureBuilt();
  writeFileSync(path.join(work, 'code.yaml'), CODE_POLICY);
  // The bundle's own hash and a valid checksum, but V8's data of another script: V8 rejects it after our checks.
  const id = /blis-cli-bundle ([0-9a-f]{16})/.exec(readFileSync(BUNDLE, 'latin1').slice(0, 64))?.[1] ?? '';
  const other = otherScriptsCache();
  sourceCompiled = packageWith('source-compiled', Buffer.concat([Buffer.from(`${id} ${crc32(other).toString(16).padStart(8, '0')}\n`, 'latin1'), other]));
}, 180_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the CLI bundle and its code cache', () => {
  it('the build writes dist/cli.cjs (ASCII, strict, its content hash first) and its cache behind that hash and a checksum', () => {
    const bundle = readFileSync(BUNDLE);
    expect(isAscii(bundle)).toBe(true);
    const text = bundle.toString('latin1');
    const first = /^"use strict"; \/\/ blis-cli-bundle ([0-9a-f]{16})\n/.exec(text);
    expect(first).not.toBeNull();
    expect(createHash('sha256').update(text.slice(first![0].length)).digest('hex').slice(0, 16)).toBe(first![1]);
    // Every import() goes through the loader (a vm.Script has none that survives a code cache).
    expect(text).not.toMatch(/(?<![\w$.])import\(["'a-z]/);
    expect(text).toMatch(/__blisEsmImport\("vega"\)/);

    const cache = readFileSync(CACHE);
    const header = /^([0-9a-f]{16}) ([0-9a-f]{8})\n/.exec(cache.toString('latin1', 0, 26));
    expect(header?.[1]).toBe(first![1]);
    expect(crc32(cache.subarray(26)).toString(16).padStart(8, '0')).toBe(header![2]);
    // Well beyond the top level: the build ran commands before taking it.
    expect(cache.length).toBeGreaterThan(256 * 1024);
  });

  it('this Node accepts the cache; BLIS_NO_CODE_CACHE=1 loads the ESM build', () => {
    expect(loaded(ROOT)).toBe('debug: code cache accepted (dist/cli.cjs)\n');
    const o = blis(ROOT, ['--version'], { BLIS_NO_CODE_CACHE: '1', BLIS_DEBUG_CODE_CACHE: '1' });
    expect(o.stderr).toBe('debug: code cache off (dist/cli/main.js)\n');
  });

  it('the same exit codes and bytes from the cached bundle, the bundle compiled from source and the ESM build', () => {
    expect(loaded(sourceCompiled)).toBe('debug: code cache rejected by V8, compiled from source (dist/cli.cjs)\n');
    for (const { argv, code, file } of COMMANDS) {
      const cached = outcome(ROOT, argv, file);
      const esm = outcome(ROOT, argv, file, { BLIS_NO_CODE_CACHE: '1' });
      const source = outcome(sourceCompiled, argv, file);
      const what = `blis ${argv.join(' ')}`;
      expect(cached.code, `${what}: ${cached.stderr}`).toBe(code);
      if (file !== undefined) expect(cached.file, what).toMatch(/<svg/);
      expect(esm, what).toEqual(cached);
      expect(source, what).toEqual(cached);
    }
  }, 300_000);

  it('an unusable cache is passed over silently: the ESM build runs, the output is the same, nothing is written', () => {
    const real = readFileSync(CACHE);
    const flipped = Buffer.from(real);
    for (let i = 0; i < 8; i++) flipped[(real.length >> 1) + i] = real[(real.length >> 1) + i]! ^ 0x5a;
    const otherBundle = Buffer.from(real);
    otherBundle.write('0123456789abcdef', 0, 'latin1');
    const cases: readonly [string, Buffer | null, string][] = [
      ['absent', null, 'absent'],
      ['garbage', Buffer.from('not a code cache\n'.repeat(20)), 'unusable'],
      ['truncated', real.subarray(0, real.length >> 1), 'unusable'],
      // V8 checks no checksum in release builds: these bytes would abort the process.
      ['damaged', flipped, 'unusable'],
      ['stale', otherBundle, 'unusable'],
    ];
    const run = ['run', ...M, '--num-requests', '3', '--log', 'error'];
    const expected = blis(ROOT, run);
    expect(expected.code).toBe(0);
    for (const [name, cache, reason] of cases) {
      const root = packageWith(name, cache);
      const before = readdirSync(path.join(root, 'dist')).map((f) => `${f}:${statSync(path.join(root, 'dist', f)).mtimeMs}`);
      expect(blis(root, run), name).toEqual(expected);
      expect(loaded(root), name).toBe(`debug: code cache ${reason} (dist/cli/main.js)\n`);
      expect(readdirSync(path.join(root, 'dist')).map((f) => `${f}:${statSync(path.join(root, 'dist', f)).mtimeMs}`), name).toEqual(before);
    }
  }, 120_000);

  it('a cache made under other V8 flags (NODE_OPTIONS=--max-old-space-size) is foreign: the ESM build runs, same output', () => {
    const options = { NODE_OPTIONS: '--max-old-space-size=1536' };
    expect(blis(ROOT, ['--version'], { ...options, BLIS_DEBUG_CODE_CACHE: '1' }).stderr).toBe('debug: code cache foreign (dist/cli/main.js)\n');
    expect(loaded(ROOT, ['--stack-size=900'])).toBe('debug: code cache foreign (dist/cli/main.js)\n');
    const run = ['run', ...M, '--num-requests', '3', '--log', 'error'];
    expect(blis(ROOT, run, options)).toEqual(blis(ROOT, run));
  });
});
