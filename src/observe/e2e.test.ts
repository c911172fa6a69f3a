/**
 * End to end across processes: `blis serve` (child) ← `blis observe` (child) → `blis replay` → `blis calibrate`.
 * A server and its load generator in one process distort each other's timing, hence the children.
 * Skip with BLIS_SKIP_E2E=1 (about 35 s, mostly the 200-request observation at 8 req/s).
 */
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { parseTraceCsv } from '../workload/tracev2-csv.js';
import { ensureBuilt, runCli, startServeChild, type ServeChild } from '../../test/io/processes.js';
import { TEST_MODEL } from '../../test/io/engine.js';

const ENGINE = ['--model', TEST_MODEL, '--hardware', 'H100', '--tp', '1'];

// One retry: a scheduler stall of ~100 ms on a loaded machine can take a few requests far off and drag
// Pearson r below the "good" bound without saying anything about the simulator.
// Poisson arrivals at 8 req/s; prompts of 50..8000 tokens give TTFTs from ~20 to ~90 ms, so TTFT varies far
// more than the timing noise and Pearson r is meaningful; outputs of 2..200 tokens give E2Es up to ~2 s.
const SPEC = `version: "2"
seed: 11
aggregate_rate: 8
num_requests: 200
clients:
  - id: chat
    rate_fraction: 1
    streaming: true
    slo_class: standard
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 2500, std_dev: 2000, min: 50, max: 8000}}
    output_distribution: {type: gaussian, params: {mean: 60, std_dev: 40, min: 2, max: 200}}
`;

const quiet = { stdout: () => undefined, warn: () => undefined, error: (t: string) => void process.stderr.write(`${t}\n`), info: () => undefined };

describe.skipIf(process.env['BLIS_SKIP_E2E'] === '1')('serve ← observe → replay → calibrate (separate processes)', () => {
  let serve: ServeChild;
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    serve = await startServeChild(ENGINE);
    dir = mkdtempSync(join(tmpdir(), 'blis-e2e-'));
  }, 240_000);
  afterAll(async () => {
    await serve?.stop();
  });

  it('reproduces the served latencies: TTFT and E2E MAPE under 10%, quality good or better', { timeout: 180_000, retry: 1 }, async () => {
    writeFileSync(join(dir, 'spec.yaml'), SPEC);
    const t = (n: string): string => join(dir, n);
    const obs = await runCli(['observe', '--server-url', serve.url, '--model', TEST_MODEL, '--workload-spec', t('spec.yaml'), '--warmup-requests', '10', '--measure-rtt', '--record-itl',
      '--trace-header', t('trace.yaml'), '--trace-data', t('trace.csv'), '--log', 'error'], 100_000);
    expect(obs.code, obs.stderr).toBe(0);
    const rows = parseTraceCsv(readFileSync(t('trace.csv'), 'utf8'), 'trace.csv');
    expect(rows.length).toBe(190);
    expect(rows.every((r) => r.status === 'ok' && r.serverInputTokens === r.inputTokens)).toBe(true);

    expect(await main(['replay', ...ENGINE, '--trace-header', t('trace.yaml'), '--trace-data', t('trace.csv'), '--results-path', t('results.json')], quiet)).toBe(0);
    expect(await main(['calibrate', '--trace-header', t('trace.yaml'), '--trace-data', t('trace.csv'), '--sim-results', t('results.json'), '--itl-data', t('trace.itl.csv'), '--report', t('report.json')], quiet)).toBe(0);
    type Level = { mape: number; pearson_r: number; quality: string };
    const rep = JSON.parse(readFileSync(t('report.json'), 'utf8')) as { trace_info: { matched_pairs: number; token_mismatches: number }; metrics: Record<string, { request_level: Level }> };
    expect(rep.trace_info).toMatchObject({ matched_pairs: 190, token_mismatches: 0 });
    const ttft = rep.metrics['ttft']?.request_level as Level;
    const e2e = rep.metrics['e2e']?.request_level as Level;
    process.stderr.write(`e2e calibration: TTFT MAPE ${(ttft.mape * 100).toFixed(2)}% r ${ttft.pearson_r.toFixed(3)} ${ttft.quality}; E2E MAPE ${(e2e.mape * 100).toFixed(2)}% r ${e2e.pearson_r.toFixed(3)} ${e2e.quality}\n`);
    // What remains is timing, not modelling: the replay runs the same engine on the recorded send times. Real
    // latencies add the client↔server path (HTTP framing, JSON, loopback, timer wake-ups: ~1–2 ms,
    // which calibrate does not add: blis serve starts each request at its stamp, so observe records
    // no round trip), arrivals shifted by that jitter occasionally land on the
    // other side of a step boundary (±1 step for that request), and scheduler stalls on a busy machine delay
    // single chunks. Measured on a 2-core VM: TTFT MAPE ~5% (r ~0.98), E2E MAPE ~1% (r ~1.0).
    expect(ttft.mape).toBeLessThan(0.1);
    expect(e2e.mape).toBeLessThan(0.1);
    expect(['good', 'excellent']).toContain(ttft.quality);
    expect(['good', 'excellent']).toContain(e2e.quality);
  });

  // The loop as a user first runs it: the default distribution workload, 200 requests at 10 req/s, on the
  // default model (TTFTs of ~30 ms). Requests start at their stated time and the server wakes on a precise
  // timer, so what remains is loopback delivery (~0.1–0.5 ms) and the machine's scheduling stalls.
  it('keeps TTFT MAPE under 5% on the default workload (200 requests at rate 10)', { timeout: 180_000, retry: 2 }, async () => {
    const t = (n: string): string => join(dir, n);
    const obs = await runCli(['observe', '--server-url', serve.url, '--model', TEST_MODEL, '--rate', '10', '--num-requests', '200',
      '--trace-header', t('d.yaml'), '--trace-data', t('d.csv'), '--log', 'error'], 120_000);
    expect(obs.code, obs.stderr).toBe(0);
    expect(await main(['replay', ...ENGINE, '--trace-header', t('d.yaml'), '--trace-data', t('d.csv'), '--results-path', t('d.json')], quiet)).toBe(0);
    expect(await main(['calibrate', '--trace-header', t('d.yaml'), '--trace-data', t('d.csv'), '--sim-results', t('d.json'), '--report', t('d-report.json')], quiet)).toBe(0);
    type Level = { mape: number; pearson_r: number; quality: string };
    const rep = JSON.parse(readFileSync(t('d-report.json'), 'utf8')) as { trace_info: { matched_pairs: number }; metrics: Record<string, { request_level: Level }> };
    expect(rep.trace_info.matched_pairs).toBe(200);
    const ttft = rep.metrics['ttft']?.request_level as Level;
    // What is left is the machine's scheduling: on one so overloaded that processes wait tens of ms for a core
    // (a 1-minute load average over three per core), the loop measures the machine, and only a loose bound holds.
    const load = loadavg()[0] ?? 0;
    const overloaded = load > 3 * availableParallelism();
    process.stderr.write(`default-workload loop: TTFT MAPE ${(ttft.mape * 100).toFixed(2)}% (load average ${load.toFixed(1)}${overloaded ? ', overloaded: bound 20%' : ''})\n`);
    expect(ttft.mape).toBeLessThan(overloaded ? 0.2 : 0.05);
  });

  it('Ctrl-C (SIGINT) ends observe cleanly with the trace of what was dispatched', async () => {
    const t = (n: string): string => join(dir, n);
    const { spawn } = await import('node:child_process');
    const { BLIS, ROOT } = await import('../../test/io/processes.js');
    const child = spawn(process.execPath, [BLIS, 'observe', '--server-url', serve.url, '--model', TEST_MODEL, '--rate', '20', '--num-requests', '1000', '--output-tokens', '300',
      '--output-tokens-stdev', '0', '--output-tokens-min', '300', '--output-tokens-max', '300', '--trace-header', t('int.yaml'), '--trace-data', t('int.csv')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // Interrupt once a dozen requests are in the server (a fixed delay is too short on a loaded machine, where
    // observe's start alone can take seconds).
    for (let waited = 0; waited < 20_000; waited += 100) {
      const text = await (await fetch(`${serve.url}/metrics`)).text();
      const running = /^vllm:num_requests_running\{[^}]*\} (\d+)/m.exec(text);
      if (running !== null && Number(running[1]) >= 12) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(killer);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('interrupted');
    expect(existsSync(t('int.yaml'))).toBe(true);
    const rows = parseTraceCsv(readFileSync(t('int.csv'), 'utf8'), 'int.csv');
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.length).toBeLessThan(1000);
    expect(rows.some((r) => r.status === 'error' && r.errorMessage.startsWith('interrupted'))).toBe(true);
    expect(rows.map((r) => r.requestId)).toEqual(rows.map((_, i) => i));
  }, 60_000);
});
