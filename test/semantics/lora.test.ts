/**
 * `--semantics`: LoRA adapter corrections (docs/reference-differences.md A1, A2, A3). Each test runs the same
 * files through `simulate()` in both modes.
 */
import { describe, expect, it } from 'vitest';
import { BlisError } from '../../src/domain/errors.js';
import { simulate, type SimulationMetrics } from '../../src/sim/simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

/** One client per entry: its adapter ('' = none) and its `model` field ('' = unset). */
function spec(clients: readonly { adapter: string; model?: string }[], n = 40): string {
  return [
    'version: "2"', 'seed: 3', 'aggregate_rate: 20', `num_requests: ${n}`, 'clients:',
    ...clients.flatMap((c, i) => [
      `  - id: c${i}`, '    rate_fraction: 1', ...(c.adapter === '' ? [] : [`    adapter: ${c.adapter}`]), ...(c.model === undefined ? [] : [`    model: ${c.model}`]),
      '    arrival: {process: poisson}',
      '    input_distribution: {type: constant, params: {value: 200}}', '    output_distribution: {type: constant, params: {value: 20}}',
    ]),
  ].join('\n');
}

async function outcome(cfg: Parameters<typeof simulate>[0]): Promise<SimulationMetrics | string> {
  try {
    return (await simulate(cfg)).metrics;
  } catch (e) {
    if (e instanceof BlisError) return e.message;
    throw e;
  }
}

const loads = (m: SimulationMetrics | string): number => (typeof m === 'string' ? -1 : Object.values(m.adapters ?? {}).reduce((s, x) => s + x.load_count, 0));

describe('LoRA adapters under --semantics', () => {
  it('A3: an adapter whose base_model is the simulated model is refused for a client without `model:` (reference) or attaches (corrected)', async () => {
    const lora = `lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: sql, rank: 8, base_model: ${MODEL}}\n    - {id: med, rank: 16, base_model: other-model}\n`;
    const cfg = { mode: 'run' as const, model: MODEL, workloadSpec: 'w.yaml', loraConfig: 'l.yaml', files: { 'l.yaml': lora, 'w.yaml': spec([{ adapter: 'sql' }, { adapter: '' }]) } };
    const ref = await outcome(cfg);
    const cor = await outcome({ ...cfg, semantics: 'corrected' });
    expect(ref).toMatch(/client "c0" has model "" but its LoRA adapter "sql" attaches to base model "meta-llama\/llama-3\.1-8b-instruct"/);
    expect(typeof cor).toBe('object');
    // sql is loaded into the one slot once (the other client needs none) and its requests are attributed to it.
    expect(loads(cor)).toBe(1);
    expect(Object.keys((cor as SimulationMetrics).adapters ?? {})).toEqual(['sql']);
    expect((cor as SimulationMetrics).completed_requests).toBe(40);
    // An adapter for another base model stays refused in corrected mode, naming the model the client runs on.
    const other = { ...cfg, semantics: 'corrected' as const, files: { ...cfg.files, 'w.yaml': spec([{ adapter: 'med' }]) } };
    expect(await outcome(other)).toMatch(/client "c0" runs on the simulated model "meta-llama\/llama-3\.1-8b-instruct" but its LoRA adapter "med" attaches to base model "other-model"/);
  });

  it('A1: adapters without adapter_capacity leave LoRA inert (reference) or get one slot, vLLM\'s --max-loras default (corrected)', async () => {
    const lora = 'lora:\n  adapters:\n    - {id: sql, rank: 8}\n    - {id: legal, rank: 32}\n';
    const cfg = { mode: 'run' as const, model: MODEL, workloadSpec: 'w.yaml', loraConfig: 'l.yaml', files: { 'l.yaml': lora, 'w.yaml': spec([{ adapter: 'sql' }, { adapter: 'legal' }]) } };
    const ref = (await simulate(cfg)).metrics;
    const cor = (await simulate({ ...cfg, semantics: 'corrected' })).metrics;
    const one = (await simulate({ ...cfg, semantics: 'corrected', loraAdapterCapacity: 1 })).metrics;
    // Reference: no slots, no loads; the run is the adapter-free run.
    const none = (await simulate({ ...cfg, loraConfig: '', files: { 'w.yaml': spec([{ adapter: '' }, { adapter: '' }]) } })).metrics;
    expect(loads(ref)).toBe(0);
    expect(ref.ttft_mean_ms).toBe(none.ttft_mean_ms);
    // Corrected: two adapters share one slot, so they load (and evict) repeatedly, and cold loads cost TTFT.
    expect(loads(cor)).toBeGreaterThan(2);
    expect(cor.ttft_mean_ms).toBeGreaterThan(ref.ttft_mean_ms);
    // Exactly what an explicit adapter_capacity of 1 gives.
    expect(cor).toEqual(one);
  });

  it('A2: a replayed row naming an undeclared adapter is replayed with a warning (reference) or refused like a spec client (corrected)', async () => {
    const both = 'lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: sql, rank: 8}\n    - {id: legal, rank: 32}\n';
    const run = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'w.yaml', loraConfig: 'l.yaml', outputs: { trace: true }, files: { 'l.yaml': both, 'w.yaml': spec([{ adapter: 'sql' }, { adapter: 'legal' }]) } });
    const rows = run.files.traceCsv!.split('\n').slice(1).filter((l) => l !== '');
    const firstLegal = rows.find((l) => l.endsWith(',legal'))!.split(',')[0];
    // Replay declaring only sql: the legal rows name an adapter --lora-config does not know.
    const replay = { mode: 'replay' as const, model: MODEL, loraConfig: 'l.yaml', traceHeader: 't.yaml', traceData: 't.csv', files: { 'l.yaml': 'lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: sql, rank: 8}\n', 't.yaml': run.files.traceYaml!, 't.csv': run.files.traceCsv! } };
    const ref = await simulate(replay);
    expect(ref.metrics.completed_requests).toBe(40);
    expect(ref.warnings.join('\n')).toMatch(/the trace names LoRA adapters --lora-config does not declare \(legal\)/);
    // Undeclared, legal still takes the slot (9 loads each, as in the run) but each load costs 1 µs and its
    // steps no overhead: the replay's mean TTFT is 320.6 ms where the run it replays had 375.9 ms.
    expect(loads(ref.metrics)).toBe(loads(run.metrics));
    expect(ref.metrics.ttft_mean_ms).toBeLessThan(run.metrics.ttft_mean_ms - 50);
    // (The library names config keys where the CLI names flags: traceData, loraConfig.)
    expect(await outcome({ ...replay, semantics: 'corrected' })).toMatch(
      new RegExp(`^traceData t\\.csv: request_id "${firstLegal}" uses LoRA adapter "legal", which loraConfig does not declare \\(declared: sql\\); add it or fix the name$`),
    );
  });
});
