/**
 * What `npm pack` ships and how the bare command behaves: a LICENSE matching package.json, no test helpers, no
 * source maps pointing at sources that are not shipped, `blis --version` / `-V`, and help on stderr with exit 2
 * when no command is given.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { BLIS, ROOT, ensureBuilt } from '../io/processes.js';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; license: string; bin: Record<string, string>; main: string; types: string };

interface PackEntry {
  readonly path: string;
}

describe('the packed package', () => {
  let files: string[] = [];
  beforeAll(() => {
    ensureBuilt();
    // --ignore-scripts: prepack would rebuild dist/ while other test files run the built CLI.
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    files = ((JSON.parse(out) as { files: PackEntry[] }[])[0]?.files ?? []).map((f) => f.path).sort();
  }, 180_000);

  it('ships the license, the readme, the CLI and the library entry points', () => {
    // bin/blis.js loads the one-file CLI bundle with its code cache (bin/load-cli.js), else dist/cli/main.js.
    for (const f of ['LICENSE', 'README.md', 'package.json', pkg.bin['blis'] as string, 'bin/load-cli.js', 'bin/package.json', pkg.main, pkg.types, 'dist/cli/main.js', 'dist/cli.cjs', 'dist/cli.cjs.cache']) {
      expect(files, f).toContain(f.replace(/^\.\//, ''));
    }
  });

  it('the LICENSE is the Apache License 2.0 text package.json names', () => {
    expect(pkg.license).toBe('Apache-2.0');
    const text = readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    expect(text).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(text).toMatch(/TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION/);
    expect(text).toMatch(/END OF TERMS AND CONDITIONS/);
  });

  it('ships no tests, test helpers or fixtures, and nothing outside dist/, bin/ and the top-level files', () => {
    expect(files.filter((f) => /test|fixture/i.test(f))).toEqual([]);
    expect(files.filter((f) => !/^(dist|bin)\//.test(f) && !['LICENSE', 'README.md', 'package.json'].includes(f))).toEqual([]);
  });

  it('ships no source maps and no references to them (the sources are not shipped)', () => {
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    const withMaps = files.filter((f) => /\.(c?js|d\.ts)$/.test(f) && readFileSync(path.join(ROOT, f), 'utf8').includes('sourceMappingURL'));
    expect(withMaps).toEqual([]);
  });
});

describe('the bare command', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('blis --version and -V print the package version', () => {
    for (const flag of ['--version', '-V']) {
      const r = spawnSync(process.execPath, [BLIS, flag], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`${pkg.version}\n`);
      expect(r.stderr).toBe('');
    }
  });

  it('blis with no arguments prints the help on stderr and exits 2', () => {
    const r = spawnSync(process.execPath, [BLIS], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Usage: blis \[options\] \[command\]/);
    expect(r.stderr).toMatch(/\n {2}run \[options\]/);
    expect(r.stderr.trimEnd().split('\n').pop()).toBe('error: a command is required (see the list above, or blis <command> --help)');
  });

  it('in process too: exit 2 and nothing on stdout', async () => {
    let out = '';
    const errs: string[] = [];
    expect(await main([], { stdout: (t) => (out += t), warn: () => undefined, error: (t) => void errs.push(t), info: () => undefined })).toBe(2);
    expect(out).toBe('');
    expect(errs).toEqual(['a command is required (see the list above, or blis <command> --help)']);
  });
});
