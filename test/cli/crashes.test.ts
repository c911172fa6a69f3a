/**
 * Inputs that used to crash after (or instead of) the work — an `internal` stack trace, exit 1 or 70 — each end
 * with one clear `error:` line and exit 2, or are handled. And the per-request files, built only when asked,
 * are written in chunks with exactly the bytes the whole-string renderers produce.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { goJsonArrayChunks, goJsonIndent, goJsonIndentChunks } from '../../src/gocompat/go-format.js';
import { parseSimulationConfig } from '../../src/sim/simulate.js';
import { simulateReplay, simulateRun } from '../../src/sim/run.js';
import { BLIS, ROOT, ensureBuilt } from '../io/processes.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const dir = mkdtempSync(path.join(tmpdir(), 'blis-crashes-'));
const p = (name: string): string => path.join(dir, name);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const quiet = { stdout: () => undefined, warn: () => undefined, error: (t: string) => void process.stderr.write(`${t}\n`) };

beforeAll(async () => {
  expect(await main(['run', ...M, '--num-requests', '6', '--trace-output', p('t'), '--log', 'error'], quiet)).toBe(0);
});

async function refused(argv: string[]): Promise<string> {
  let out = '';
  const errs: string[] = [];
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => void errs.push(t) });
  expect(errs).toHaveLength(1);
  expect(errs[0]).not.toMatch(/^internal:/);
  expect(code).toBe(2);
  expect(out).toBe('');
  return errs[0] as string;
}

describe('no crash after the work, no internal error for bad input', () => {
  it('--num-requests 0 without a horizon', async () => {
    expect(await refused(['run', ...M, '--num-requests', '0'])).toMatch(/nothing bounds the workload: --num-requests 0 .* give --num-requests N > 0 or a --horizon/);
  });

  it('--num-requests 0 with a horizon runs what arrives before it', async () => {
    let out = '';
    expect(await main(['run', ...M, '--num-requests', '0', '--horizon', '2000000', '--rate', '5', '--log', 'error'], { ...quiet, stdout: (t) => (out += t) })).toBe(0);
    expect((JSON.parse(out) as { simulation_metrics: { injected_requests: number } }).simulation_metrics.injected_requests).toBe(9);
  });

  it('a trace CSV with a header row and no records', async () => {
    const header = readFileSync(p('t.csv'), 'utf8').split('\n')[0] as string;
    writeFileSync(p('empty.csv'), `${header}\n`);
    expect(await refused(['replay', ...M, '--trace-header', p('t.yaml'), '--trace-data', p('empty.csv')])).toMatch(/^--trace-data: .*empty\.csv has a header row but no records/);
  });

  it('input_tokens 99999999999 in a trace', async () => {
    const lines = readFileSync(p('t.csv'), 'utf8').split('\n');
    const cols = (lines[0] as string).split(',');
    const row = (lines[1] as string).split(',');
    row[cols.indexOf('input_tokens')] = '99999999999';
    writeFileSync(p('huge.csv'), `${lines[0]}\n${row.join(',')}\n`);
    expect(await refused(['replay', ...M, '--trace-header', p('t.yaml'), '--trace-data', p('huge.csv')])).toMatch(/huge\.csv:2: column "input_tokens": 99999999999 tokens exceed the largest request blis-ts simulates \(10,000,000 tokens\)/);
  });

  it('a spec whose lengths cannot be held', async () => {
    writeFileSync(p('long.yaml'), 'version: "2"\nseed: 1\naggregate_rate: 1\nnum_requests: 2\nclients:\n  - {id: a, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 99999999999}}, output_distribution: {type: constant, params: {value: 5}}}\n');
    expect(await refused(['run', ...M, '--workload-spec', p('long.yaml')])).toMatch(/long\.yaml:6:\d+: clients\[0\]\.input_distribution\.params\.value: .* tokens exceed the largest request blis-ts simulates \(10,000,000 tokens\)/);
  });
});

describe('stdout that cannot be written', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('run > /dev/full: one error line, exit 2, no stack trace', () => {
    const full = openSync('/dev/full', 'w');
    try {
      const r = spawnSync(process.execPath, [BLIS, 'run', ...M, '--num-requests', '5', '--log', 'error'], { cwd: ROOT, stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toBe('error: cannot write to stdout: ENOSPC: no space left on device, write\n');
    } finally {
      closeSync(full);
    }
  }, 60_000);

  it('a reader that closes the pipe before blis writes: one error line, exit 2', async () => {
    const child = spawn(process.execPath, [BLIS, 'policies'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    // Closing our end at once: the child's first write meets a closed pipe (EPIPE).
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr).toBe('error: stdout was closed before the output was written (EPIPE)\n');
  }, 60_000);
});

describe('per-request files: built only when asked, streamed, same bytes', () => {
  it('the metrics file and replay results, as chunks, equal the whole-string renderings', async () => {
    const run = parseSimulationConfig({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', numRequests: 40, numInstances: 2, rate: 30, routingPolicy: 'round-robin', outputs: { metrics: true } });
    const env = { readText: (f: string) => readFileSync(f, 'utf8'), warn: () => undefined };
    const out = await simulateRun(run.values, env);
    const chunks = [...out.metricsFileChunks()];
    expect(chunks.join('')).toBe(out.metricsFile);
    // One chunk per request row (plus head and tail): no chunk holds the whole array.
    expect(chunks.length).toBeGreaterThanOrEqual(40);
    const replay = parseSimulationConfig({ mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', traceHeader: p('t.yaml'), traceData: p('t.csv'), outputs: { results: true } });
    const rep = await simulateReplay(replay.values, env);
    expect([...rep.resultsChunks()!].join('')).toBe(rep.results);
  });

  it('goJsonIndentChunks / goJsonArrayChunks render exactly what goJsonIndent does', () => {
    const rows = [{ a: 1, s: '<&>' }, { b: [1, 2, { c: null }] }, {}];
    const doc = { x: 1, rows: [] as unknown[], y: 'z' };
    expect([...goJsonIndentChunks(doc, 'rows', rows, rows.length)].join('')).toBe(goJsonIndent({ ...doc, rows }));
    expect([...goJsonArrayChunks(rows, rows.length, 0)].join('')).toBe(goJsonIndent(rows));
    expect([...goJsonArrayChunks([], 0, 0)].join('')).toBe(goJsonIndent([]));
  });

  it('without --metrics-path the per-request document is never rendered', async () => {
    const run = parseSimulationConfig({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', numRequests: 10 });
    const out = await simulateRun(run.values, { readText: () => '', warn: () => undefined });
    // Rendered on read only: a getter, not a string computed with the run.
    expect(typeof Object.getOwnPropertyDescriptor(out, 'metricsFile')?.get).toBe('function');
    expect(typeof Object.getOwnPropertyDescriptor(out, 'results')?.get).toBe('function');
    expect(out.metricsFile).toBeNull();
    expect(out.results).toBeNull();
  });
});
