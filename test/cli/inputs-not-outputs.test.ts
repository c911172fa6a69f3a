/**
 * Inputs are never outputs (issue 27): an output path that resolves to one of the command's inputs — the same
 * path, a symbolic link to it, a hard link, a path through a linked directory — or to another output is refused
 * before any work with one line, exit 2, nothing on stdout, and the input's bytes untouched.
 */
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const M = ['--model', MODEL, '--log', 'error'];
const root = mkdtempSync(path.join(tmpdir(), 'blis-in-out-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
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

/** Runs `argv`, expects the refusal `re`, and that every file in `keep` still holds its bytes. */
async function refused(argv: string[], re: RegExp, keep: readonly string[]): Promise<void> {
  const before = keep.map((f) => readFileSync(f));
  const r = await cli(argv);
  expect(r).toEqual({ code: 2, out: '', errs: [expect.stringMatching(re)] });
  keep.forEach((f, i) => expect(readFileSync(f).equals(before[i] as Buffer)).toBe(true));
}

/** A small trace pair (t.yaml, t.csv) in `d`, and a run's metrics JSON m.json. */
let traceDir = '';
beforeAll(async () => {
  traceDir = fresh();
  const r = await cli(['run', ...M, '--num-requests', '5', '--trace-output', path.join(traceDir, 't'), '--metrics-path', path.join(traceDir, 'm.json')]);
  expect(r.code).toBe(0);
}, 60_000);

function trace(d: string): { yaml: string; csv: string; metrics: string } {
  for (const f of ['t.yaml', 't.csv', 'm.json']) writeFileSync(path.join(d, f), readFileSync(path.join(traceDir, f)));
  return { yaml: path.join(d, 't.yaml'), csv: path.join(d, 't.csv'), metrics: path.join(d, 'm.json') };
}

describe('run and replay', () => {
  it('replay --trace-output onto its own --trace-header/--trace-data', async () => {
    const d = fresh();
    const t = trace(d);
    await refused(['replay', ...M, '--trace-header', t.yaml, '--trace-data', t.csv, '--trace-output', path.join(d, 't')],
      /^--trace-output .*\/t\.yaml is also the --trace-header input; write the output elsewhere$/, [t.yaml, t.csv]);
  });

  it('replay --results-path through a symbolic link to the --trace-data', async () => {
    const d = fresh();
    const t = trace(d);
    symlinkSync(t.csv, path.join(d, 'link.csv'));
    await refused(['replay', ...M, '--trace-header', t.yaml, '--trace-data', t.csv, '--results-path', path.join(d, 'link.csv')],
      /^--results-path .*link\.csv is also the --trace-data input; write the output elsewhere$/, [t.yaml, t.csv]);
  });

  it('replay --metrics-path through a linked directory onto the --trace-header', async () => {
    const d = fresh();
    const t = trace(d);
    symlinkSync(d, path.join(d, 'alias'));
    await refused(['replay', ...M, '--trace-header', t.yaml, '--trace-data', t.csv, '--metrics-path', path.join(d, 'alias', 't.yaml')],
      /^--metrics-path .*alias\/t\.yaml is also the --trace-header input; write the output elsewhere$/, [t.yaml, t.csv]);
  });

  it('run --metrics-path onto a hard link of its --workload-spec', async () => {
    const d = fresh();
    const spec = path.join(d, 'spec.yaml');
    writeFileSync(spec, 'version: "2"\nseed: 1\naggregate_rate: 10\nnum_requests: 5\nclients:\n  - id: a\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 10}}\n    output_distribution: {type: constant, params: {value: 5}}\n');
    linkSync(spec, path.join(d, 'hard.json'));
    await refused(['run', ...M, '--workload-spec', spec, '--metrics-path', path.join(d, 'hard.json')],
      /^--metrics-path .*hard\.json is also the --workload-spec input; write the output elsewhere$/, [spec]);
  });

  it('run --report onto the --timeseries-path output', async () => {
    const d = fresh();
    const r = await cli(['run', ...M, '--num-requests', '5', '--timeseries-path', path.join(d, 's.csv'), '--report', path.join(d, 's.csv')]);
    expect(r).toEqual({ code: 2, out: '', errs: [expect.stringMatching(/^--report .*s\.csv is also the --timeseries-path output; write the output elsewhere$/)] });
  });
});

describe('sweep, compare, report, calibrate, evaluate, observe', () => {
  it('sweep --summary onto the sweep file', async () => {
    const d = fresh();
    const sweep = path.join(d, 'sweep.yaml');
    writeFileSync(sweep, `base: {model: ${MODEL}, numRequests: 5, rate: 10}\naxes:\n  seed: [1, 2]\n`);
    await refused(['sweep', sweep, '--output', path.join(d, 'rows.jsonl'), '--summary', sweep],
      /^--summary .*sweep\.yaml is also the sweep file input; write the output elsewhere$/, [sweep]);
  });

  it('compare --report onto one of its results', async () => {
    const d = fresh();
    const t = trace(d);
    await refused(['compare', t.metrics, t.metrics, '--report', t.metrics],
      /^--report .*m\.json is also the result input; write the output elsewhere$/, [t.metrics]);
  });

  it('report -o onto its result', async () => {
    const d = fresh();
    const t = trace(d);
    await refused(['report', t.metrics, '-o', t.metrics], /^--output .*m\.json is also the result input; write the output elsewhere$/, [t.metrics]);
  });

  it('calibrate --report onto its --trace-data', async () => {
    const d = fresh();
    const t = trace(d);
    await refused(['calibrate', '--trace-header', t.yaml, '--trace-data', t.csv, '--sim-results', t.metrics, '--report', t.csv, '--log', 'error'],
      /^--report .*t\.csv is also the --trace-data input; write the output elsewhere$/, [t.yaml, t.csv, t.metrics]);
  });

  it('calibrate --fit --profile-out onto its --trace-header', async () => {
    const d = fresh();
    const t = trace(d);
    await refused(['calibrate', '--fit', ...M, '--trace-header', t.yaml, '--trace-data', t.csv, '--profile-out', t.yaml],
      /^--profile-out .*t\.yaml is also the --trace-header input; write the output elsewhere$/, [t.yaml, t.csv]);
  });

  it('evaluate --report onto its --candidate', async () => {
    const d = fresh();
    const cand = path.join(d, 'bundle.yaml');
    writeFileSync(cand, 'admission:\n  policy: always-admit\n');
    await refused(['evaluate', '--candidate', cand, '--suite', 'routing-prefix-heavy', '--stage', '1', '--report', cand, '--quiet'],
      /^--report .*bundle\.yaml is also the --candidate input; write the output elsewhere$/, [cand]);
  });

  it('observe --trace-data onto its --workload-spec, before the first request', async () => {
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
      const spec = path.join(d, 'spec.yaml');
      writeFileSync(spec, 'version: "2"\nseed: 1\naggregate_rate: 10\nnum_requests: 5\nclients: []\n');
      await refused(['observe', '--server-url', url, '--model', 'm', '--log', 'error', '--workload-spec', spec, '--trace-header', path.join(d, 'h.yaml'), '--trace-data', spec],
        /^--trace-data .*spec\.yaml is also the --workload-spec input; write the output elsewhere$/, [spec]);
      expect(requests).toBe(0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
