/**
 * A bug anywhere behind a command — here a dependency that throws a TypeError, injected into the built module
 * by a loader hook (inject-fault.mjs) — ends as one `internal:` line on stderr and exit 70, with the stack only
 * under `--log debug`. Every command is covered, the servers both at start-up and while serving (a fault in a
 * timer callback escapes to the process-level handler of bin/blis.js).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { BLIS, ROOT, ensureBuilt } from '../io/processes.js';

const INJECT = path.join(ROOT, 'test', 'cli', 'inject-fault.mjs');
const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const dir = mkdtempSync(path.join(tmpdir(), 'blis-faults-'));
const p = (name: string): string => path.join(dir, name);

beforeAll(async () => {
  ensureBuilt();
  // Inputs good enough to reach the faulty dependency: a small trace, its replay results, a bundle.
  const quiet = { stdout: () => undefined, warn: () => undefined, error: (t: string) => void process.stderr.write(`${t}\n`) };
  expect(await main(['run', ...M, '--num-requests', '5', '--trace-output', p('t'), '--log', 'error'], quiet)).toBe(0);
  expect(await main(['replay', ...M, '--trace-header', p('t.yaml'), '--trace-data', p('t.csv'), '--results-path', p('results.json'), '--log', 'error'], quiet)).toBe(0);
  writeFileSync(p('bundle.yaml'), 'routing:\n  policy: round-robin\n');
  let result = '';
  expect(await main(['run', ...M, '--num-requests', '5', '--log', 'error'], { ...quiet, stdout: (t: string) => void (result += t) })).toBe(0);
  writeFileSync(p('result.json'), result);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** bin/blis.js runs the one-file CLI bundle; `esm` makes it run the ESM build instead (BLIS_NO_CODE_CACHE=1). */
function blis(fault: string, argv: readonly string[], esm = false): Outcome {
  const r = spawnSync(process.execPath, ['--import', INJECT, BLIS, ...argv], {
    cwd: dir,
    env: { ...process.env, BLIS_FAULT: fault, BLIS_NO_CODE_CACHE: esm ? '1' : '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One `error: internal:` line naming the injected fault, nothing else on stderr, no stack, exit 70. */
function expectInternal(o: Outcome, name: string): void {
  expect(o.code, o.stderr).toBe(70);
  const lines = o.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^error: internal: injected fault in ${name} \\(a bug in blis-ts; rerun with --log debug`));
  expect(o.stderr).not.toMatch(/\n\s+at /);
}

const CASES: readonly [string, string, string, readonly string[]][] = [
  ['run', 'dist/sim/run.js', 'simulateRun', ['run', ...M, '--log', 'error']],
  ['replay', 'dist/sim/run.js', 'simulateReplay', ['replay', ...M, '--trace-header', 't.yaml', '--trace-data', 't.csv', '--log', 'error']],
  ['convert', 'dist/workload/profiles/convert.js', 'convertPreset', ['convert', 'preset', '--name', 'chatbot']],
  ['compose', 'dist/workload/profiles/convert.js', 'composeSpecsYaml', ['compose', '--from', 'bundle.yaml']],
  ['evaluate', 'dist/evaluate/index.js', 'evaluateCandidate', ['evaluate', '--candidate', 'bundle.yaml', '--suite', 'routing-prefix-heavy', '--stage', '1']],
  ['evaluate --serve', 'dist/cli/evaluate-server.js', 'startEvaluationServer', ['evaluate', '--serve', '--suite', 'routing-prefix-heavy']],
  ['policies', 'dist/policy/catalog.js', 'policyCatalog', ['policies']],
  ['report', 'dist/report/index.js', 'renderResultReport', ['report', 'result.json', '-o', 'result.html']],
  ['compare', 'dist/report/index.js', 'compareResults', ['compare', 'result.json', 'result.json']],
  ['suites', 'dist/evaluate/index.js', 'describeSuites', ['suites']],
  ['sweep', 'dist/sweep/index.js', 'loadSweep', ['sweep', 'bundle.yaml']],
  ['search', 'dist/evaluate/search/search.js', 'searchPolicies', ['search', '--template', 'weighted_affinity_routing', '--suite', 'routing-prefix-heavy', '--budget', '1']],
  ['serve', 'dist/serve/index.js', 'startServe', ['serve', ...M, '--port', '0', '--log', 'error']],
  ['observe', 'dist/observe/run.js', 'observe', ['observe', '--server-url', 'http://127.0.0.1:9', '--model', 'm', '--trace-header', 'h.yaml', '--trace-data', 'd.csv', '--rate', '1', '--num-requests', '1', '--log', 'error']],
  ['calibrate', 'dist/calibrate/index.js', 'runCalibration', ['calibrate', '--trace-header', 't.yaml', '--trace-data', 't.csv', '--sim-results', 'results.json', '--report', 'report.json', '--log', 'error']],
];

describe('an internal fault in any command: one internal line, exit 70', () => {
  it.each(CASES)('%s', (_name, module, name, argv) => {
    const o = blis(`${module}#${name}`, argv);
    expectInternal(o, name);
    expect(o.stdout).toBe('');
  }, 60_000);

  // bin/blis.js falls back to the ESM build when the bundle or its cache is missing: the same there.
  it.each(CASES.filter(([name]) => ['run', 'evaluate', 'report', 'serve'].includes(name)))('%s, through the ESM build', (_name, module, name, argv) => {
    const o = blis(`${module}#${name}`, argv, true);
    expectInternal(o, name);
    expect(o.stdout).toBe('');
  }, 60_000);

  it.each([
    ['dist/sim/run.js', 'simulateRun', ['run', ...M]],
    ['dist/policy/catalog.js', 'policyCatalog', ['policies']],
    ['dist/evaluate/index.js', 'evaluateCandidate', ['evaluate', '--candidate', 'bundle.yaml', '--suite', 'routing-prefix-heavy']],
  ])('prints the stack with --log debug (%s#%s)', (module, name, argv) => {
    const o = blis(`${module}#${name}`, [...argv, '--log', 'debug']);
    expect(o.code).toBe(70);
    expect(o.stderr).toMatch(new RegExp(`error: internal: injected fault in ${name}`));
    expect(o.stderr).toMatch(new RegExp(`TypeError: injected fault in ${name}\\n\\s+at `));
  }, 60_000);

  it.each([['the CLI bundle', ''], ['the ESM build', '1']])('serve (%s): a fault while answering a request stops the server the same way', async (_build, esm) => {
    const child = spawn(process.execPath, ['--import', INJECT, BLIS, 'serve', ...M, '--port', '0', '--log', 'error'], {
      cwd: dir,
      // @1: serve calls fullResponse once itself while warming up, before it listens.
      env: { ...process.env, BLIS_FAULT: 'dist/serve/openai.js#fullResponse@1', BLIS_NO_CODE_CACHE: esm },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(stdout);
        if (m) resolve(m[1] as string);
      });
      child.once('exit', () => reject(new Error(`serve exited before listening: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // The response is built when the simulated engine finishes the request, in one of its timer callbacks.
    await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'meta-llama/llama-3.1-8b-instruct', prompt: 'hello there', max_tokens: 2 }) }).catch(() => undefined);
    const code = await exited;
    expectInternal({ code, stdout: '', stderr }, 'fullResponse');
  }, 60_000);
});
