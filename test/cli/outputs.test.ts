/**
 * Outputs are all or nothing: a bad output path fails before the work with nothing on stdout and no file; files
 * appear only complete and together, stdout last; a trace pair is never half-written; `blis observe` checks its
 * paths before the first request and saves a trace it cannot write under a recovery name.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { checkOutputPath, checkTracePrefix, commitOutputs } from '../../src/cli/outputs.js';
import { parseTraceCsv } from '../../src/workload/tracev2-csv.js';
import { startFaultServer } from '../io/fault-server.js';
import { BLIS, ensureBuilt } from '../io/processes.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--log', 'error'];
const root = mkdtempSync(path.join(tmpdir(), 'blis-outputs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
/** A fresh empty directory per test. */
function fresh(): string {
  const d = path.join(root, `case-${n++}`);
  mkdirSync(d);
  return d;
}

async function cli(argv: string[]): Promise<{ code: number; out: string; errs: string[] }> {
  let out = '';
  const errs: string[] = [];
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => void errs.push(t) });
  return { code, out, errs };
}

describe('run and replay: output paths checked before the simulation', () => {
  it('a --metrics-path in a missing directory: exit 2, empty stdout, no file', async () => {
    const d = fresh();
    const r = await cli(['run', ...M, '--num-requests', '5', '--metrics-path', path.join(d, 'nope', 'm.json')]);
    expect(r).toEqual({ code: 2, out: '', errs: [expect.stringMatching(/^--metrics-path: cannot write .*nope\/m\.json: the directory .*nope does not exist; create it first$/)] });
    expect(readdirSync(d)).toEqual([]);
  });

  it('a --results-path that is a directory: exit 2, empty stdout, no --metrics-path file either', async () => {
    const d = fresh();
    expect((await cli(['run', ...M, '--num-requests', '5', '--trace-output', path.join(d, 't')])).code).toBe(0);
    mkdirSync(path.join(d, 'results'));
    const r = await cli(['replay', ...M, '--trace-header', path.join(d, 't.yaml'), '--trace-data', path.join(d, 't.csv'), '--metrics-path', path.join(d, 'm.json'), '--results-path', path.join(d, 'results')]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.errs).toEqual([expect.stringMatching(/^--results-path: cannot write .*results: it is a directory; give a file name inside it$/)]);
    expect(readdirSync(d).sort()).toEqual(['results', 't.csv', 't.yaml']);
  });

  it('replay --trace-output re-exports the trace (header mode replayed) and its path is checked first', async () => {
    const d = fresh();
    expect((await cli(['run', ...M, '--num-requests', '6', '--trace-output', path.join(d, 't')])).code).toBe(0);
    const args = ['replay', ...M, '--trace-header', path.join(d, 't.yaml'), '--trace-data', path.join(d, 't.csv')];
    const bad = await cli([...args, '--trace-output', `${d}/`]);
    expect(bad.code).toBe(2);
    expect(bad.out).toBe('');
    expect(readdirSync(d).sort()).toEqual(['t.csv', 't.yaml']);
    const r = await cli([...args, '--trace-output', path.join(d, 'again')]);
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(d, 'again.yaml'), 'utf8')).toMatch(/^mode: replayed$/m);
    const rows = parseTraceCsv(readFileSync(path.join(d, 'again.csv'), 'utf8'), 'again.csv');
    expect(rows.map((x) => [x.requestId, x.inputTokens, x.outputTokens, x.status])).toEqual(parseTraceCsv(readFileSync(path.join(d, 't.csv'), 'utf8'), 't.csv').map((x) => [x.requestId, x.inputTokens, x.outputTokens, 'ok']));
  });

  it('a trace pair whose .csv cannot be written leaves no .yaml behind', async () => {
    const d = fresh();
    mkdirSync(path.join(d, 'pair.csv'));
    const r = await cli(['run', ...M, '--num-requests', '5', '--trace-output', path.join(d, 'pair')]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.errs[0]).toMatch(/--trace-output: cannot write .*pair\.csv: it is a directory/);
    expect(readdirSync(d)).toEqual(['pair.csv']);
  });

  it('--trace-output somedir/ is refused instead of writing somedir/.yaml', async () => {
    const d = fresh();
    const r = await cli(['run', ...M, '--num-requests', '5', '--trace-output', `${d}/`]);
    expect(r.code).toBe(2);
    expect(r.errs[0]).toMatch(/--trace-output takes a file prefix \(it writes PREFIX\.yaml and PREFIX\.csv\), but ".*\/" names a directory; give e\.g\. .*\/trace/);
    expect(readdirSync(d)).toEqual([]);
  });

  it('success writes every file complete, leaves no temporary file, and prints stdout', async () => {
    const d = fresh();
    const r = await cli(['run', ...M, '--num-requests', '8', '--metrics-path', path.join(d, 'm.json'), '--trace-output', path.join(d, 'tr')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toHaveProperty('simulation_metrics');
    expect(readdirSync(d).sort()).toEqual(['m.json', 'tr.csv', 'tr.yaml']);
    expect((JSON.parse(readFileSync(path.join(d, 'm.json'), 'utf8')) as { requests: unknown[] }).requests).toHaveLength(8);
    expect(parseTraceCsv(readFileSync(path.join(d, 'tr.csv'), 'utf8'), 'tr.csv')).toHaveLength(8);
  });

  it('two outputs naming the same file are refused before the work', async () => {
    const d = fresh();
    const same = path.join(d, 'same.json');
    const r = await cli(['replay', ...M, '--trace-header', 'x.yaml', '--trace-data', 'x.csv', '--metrics-path', same, '--results-path', same]);
    expect(r.code).toBe(2);
    expect(r.errs).toEqual([expect.stringMatching(/^--results-path .*same\.json is also the --metrics-path output; write the output elsewhere$/)]);
    expect(readdirSync(d)).toEqual([]);
  });

  it('special files are written in place, not replaced', async () => {
    const r = await cli(['run', ...M, '--num-requests', '3', '--metrics-path', '/dev/null']);
    expect(r.code).toBe(0);
    expect(existsSync('/dev/null')).toBe(true);
  });

  it('calibrate --report and evaluate --cache are checked before any work', async () => {
    const d = fresh();
    const cal = await cli(['calibrate', '--trace-header', 'a.yaml', '--trace-data', 'a.csv', '--sim-results', 'r.json', '--report', path.join(d, 'no', 'report.json')]);
    expect(cal.code).toBe(2);
    expect(cal.errs[0]).toMatch(/^--report: cannot write .*: the directory .* does not exist/);
    writeFileSync(path.join(d, 'file'), 'x');
    writeFileSync(path.join(d, 'bundle.yaml'), 'routing:\n  policy: round-robin\n');
    const ev = await cli(['evaluate', '--candidate', path.join(d, 'bundle.yaml'), '--suite', 'routing-prefix-heavy', '--cache', path.join(d, 'file')]);
    expect(ev.code).toBe(2);
    expect(ev.out).toBe('');
    expect(ev.errs[0]).toMatch(/^--cache: cannot create the directory .*file/);
  });
});

describe('commitOutputs', () => {
  it('a file that fails at the end (its directory vanished) leaves no file at all', () => {
    const d = fresh();
    const gone = path.join(d, 'gone');
    mkdirSync(gone);
    const a = checkOutputPath('--a', path.join(d, 'a.txt'));
    const b = checkOutputPath('--b', path.join(gone, 'b.txt'));
    rmSync(gone, { recursive: true });
    expect(() => commitOutputs([[a, 'first'], [b, 'second']])).toThrow(/^--b: cannot write .*gone\/b\.txt: ENOENT/);
    expect(readdirSync(d)).toEqual([]);
  });

  it('replaces an existing file only once the new content is complete', () => {
    const d = fresh();
    const f = path.join(d, 'x.json');
    writeFileSync(f, 'old');
    const out = checkOutputPath('--x', f);
    commitOutputs([[out, (function* () { yield 'new '; yield 'content'; })()]]);
    expect(readFileSync(f, 'utf8')).toBe('new content');
    expect(readdirSync(d)).toEqual(['x.json']);
  });

  it('a failure of the renderer itself is not reported as an output problem', () => {
    const d = fresh();
    const out = checkOutputPath('--x', path.join(d, 'x.json'));
    const broken = (function* (): Generator<string> {
      yield 'a';
      throw new TypeError('renderer bug');
    })();
    expect(() => commitOutputs([[out, broken]])).toThrow(TypeError);
    expect(readdirSync(d)).toEqual([]);
  });

  it('trace prefixes naming a directory are refused; a prefix next to a directory of that name is fine', () => {
    const d = fresh();
    expect(() => checkTracePrefix('--trace-output', `${d}/`)).toThrow(/names a directory/);
    expect(() => checkTracePrefix('--trace-output', '.')).toThrow(/names a directory/);
    mkdirSync(path.join(d, 'trace'));
    expect(checkTracePrefix('--trace-output', path.join(d, 'trace')).map((f) => path.basename(f.path))).toEqual(['trace.yaml', 'trace.csv']);
  });
});

describe('observe', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('a mistyped --trace-header directory fails before the first request is sent', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(500);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const d = fresh();
      const r = await cli(['observe', '--server-url', url, '--model', 'm', '--rate', '10', '--num-requests', '5', '--log', 'error',
        '--trace-header', path.join(d, 'typo', 'h.yaml'), '--trace-data', path.join(d, 'd.csv')]);
      expect(r.code).toBe(2);
      expect(r.errs[0]).toMatch(/^--trace-header: cannot write .*typo\/h\.yaml: the directory .*typo does not exist/);
      expect(requests).toBe(0);
      expect(readdirSync(d)).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a trace that cannot be written at the end is saved under a recovery name in the current directory', async () => {
    const fs = await startFaultServer(200);
    try {
      const cwd = fresh();
      const out = path.join(cwd, 'out');
      mkdirSync(out);
      const child = spawn(process.execPath, [BLIS, 'observe', '--server-url', fs.url, '--model', 'm', '--rate', '8', '--num-requests', '12', '--timeout', '1', '--log', 'error',
        '--prompt-tokens', '8', '--prompt-tokens-stdev', '0', '--prompt-tokens-min', '8', '--prompt-tokens-max', '8',
        '--output-tokens', '2', '--output-tokens-stdev', '0', '--output-tokens-min', '2', '--output-tokens-max', '2',
        '--trace-header', path.join(out, 't.yaml'), '--trace-data', path.join(out, 't.csv')], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const closed = new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
      // The directory disappears while the server is being observed (after the paths were checked).
      while (fs.served.size === 0) await new Promise((r) => setTimeout(r, 10));
      rmSync(out, { recursive: true });
      const code = await closed;
      expect(code).toBe(2);
      expect(stdout).toBe('');
      const lines = stderr.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error: --trace-header: cannot write .*out\/t\.yaml: ENOENT.*; the observed trace was saved instead to .*blis-observe-recovery-\S+\.yaml, .*blis-observe-recovery-\S+\.csv$/);
      const saved = readdirSync(cwd).filter((f) => f.startsWith('blis-observe-recovery-')).sort();
      expect(saved).toHaveLength(2);
      const rows = parseTraceCsv(readFileSync(path.join(cwd, saved.find((f) => f.endsWith('.csv'))!), 'utf8'), 'recovered.csv');
      expect(rows).toHaveLength(12);
      expect(readFileSync(path.join(cwd, saved.find((f) => f.endsWith('.yaml'))!), 'utf8')).toMatch(/mode: real/);
    } finally {
      await fs.close();
    }
  }, 60_000);
});
