/**
 * LoRA adapters through the observe loop: `blis serve --lora-config` answers requests whose `model` names a
 * declared adapter (vLLM's convention) and charges its cold load; `blis observe` sends a spec client's adapter
 * as the model and records it in the trace's adapter column; the trace then replays with the adapters on.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { startServe, type RunningServer } from '../serve/index.js';
import { parseTraceCsv } from '../workload/tracev2-csv.js';
import { resolveEngineFlags } from '../sim/resolve-engine.js';
import { parseSimulationConfig } from '../sim/simulate.js';
import { TEST_MODEL } from '../../test/io/engine.js';

const LORA = 'lora:\n  adapter_capacity: 1\n  load_base_latency_us: 200000\n  adapters: [{id: sql, rank: 8}, {id: legal, rank: 16}]\n';
const dir = mkdtempSync(join(tmpdir(), 'blis-obs-lora-'));
const loraFile = join(dir, 'lora.yaml');
writeFileSync(loraFile, LORA);
const quiet = { stdout: () => undefined, warn: () => undefined, error: () => undefined, info: () => undefined };

describe('LoRA adapters through serve and observe', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    const { values } = parseSimulationConfig({ mode: 'run', model: TEST_MODEL, hardware: 'H100', tp: 1, loraConfig: 'lora.yaml' });
    const { setup } = await resolveEngineFlags(values, { readText: () => LORA, warn: () => undefined });
    srv = await startServe({ setup, modelName: TEST_MODEL });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('serve lists the adapters, answers requests naming one (with its cold load), refuses unknown names', async () => {
    const models = (await (await fetch(`${srv.url}/v1/models`)).json()) as { data: { id: string; parent: string | null }[] };
    expect(models.data.map((m) => [m.id, m.parent])).toEqual([[TEST_MODEL, null], ['sql', TEST_MODEL], ['legal', TEST_MODEL]]);
    const post = (model: string): Promise<Response> => fetch(`${srv.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, prompt: 'a b c', max_tokens: 2 }) });
    const t0 = performance.now();
    const res = await post('sql');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('sql');
    // The 200 ms cold load is paid before the first token.
    expect(performance.now() - t0).toBeGreaterThan(190);
    expect((await post('nope')).status).toBe(404);
  });

  it('observe sends adapters as the model, records them, and the trace replays with the adapters loaded', async () => {
    const spec = join(dir, 'w.yaml');
    writeFileSync(spec, [
      'version: "2"', 'seed: 4', 'aggregate_rate: 30', 'num_requests: 12', 'clients:',
      ...['sql', 'legal', ''].flatMap((a, i) => [`  - id: c${i}`, '    rate_fraction: 1', ...(a === '' ? [] : [`    adapter: ${a}`]), '    arrival: {process: poisson}',
        '    input_distribution: {type: constant, params: {value: 20}}', '    output_distribution: {type: constant, params: {value: 3}}']),
    ].join('\n'));
    const header = join(dir, 't.yaml');
    const data = join(dir, 't.csv');
    expect(await main(['observe', '--server-url', srv.url, '--model', TEST_MODEL, '--workload-spec', spec, '--trace-header', header, '--trace-data', data], quiet)).toBe(0);
    const rows = parseTraceCsv(readFileSync(data, 'utf8'), 't.csv');
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
    expect(new Set(rows.map((r) => r.adapter))).toEqual(new Set(['sql', 'legal', '']));
    let out = '';
    const io = { ...quiet, stdout: (t: string) => void (out += t) };
    expect(await main(['replay', '--model', TEST_MODEL, '--trace-header', header, '--trace-data', data, '--lora-config', loraFile], io)).toBe(0);
    const adapters = (JSON.parse(out) as { simulation_metrics: { adapters: Record<string, { load_count: number }> } }).simulation_metrics.adapters;
    expect(adapters['sql']!.load_count + adapters['legal']!.load_count).toBeGreaterThanOrEqual(2);
  });
});
