import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { simulate, type SimulationMetrics } from './simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const LORA = 'lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: sql, rank: 8}\n    - {id: legal, rank: 32}\n    - {id: med, rank: 16, base_model: other-model}\n';
const SPEC = (adapters: readonly string[]): string => [
  'version: "2"', 'seed: 3', 'aggregate_rate: 20', 'num_requests: 120', 'clients:',
  ...adapters.flatMap((a, i) => [
    `  - id: c${i}`, '    rate_fraction: 1', ...(a === '' ? [] : [`    adapter: ${a}`]), '    arrival: {process: poisson}',
    '    input_distribution: {type: constant, params: {value: 200}}', '    output_distribution: {type: constant, params: {value: 20}}',
  ]),
].join('\n');
const files = { 'l.yaml': LORA, 'w.yaml': SPEC(['sql', 'legal', '']) };
const base = { mode: 'run' as const, model: MODEL, workloadSpec: 'w.yaml', loraConfig: 'l.yaml', files };


describe('LoRA adapters in blis run', () => {
  it('loads adapters on demand, evicts with one slot, reports per-adapter metrics; base-model requests stay unattributed', async () => {
    const r = await simulate({ ...base, outputs: { trace: true, metrics: true } });
    const a = r.metrics.adapters!;
    expect(Object.keys(a)).toEqual(['legal', 'sql']);
    expect(a['sql']!.load_count).toBeGreaterThan(1);
    expect(a['sql']!.eviction_count).toBeGreaterThan(0);
    expect(a['legal']!.throughput_tok_per_s).toBeGreaterThan(0);
    // A cold load (>= 1.5 ms) lands in the TTFTs of requests that waited for it.
    expect(a['legal']!.ttft_p50_us).toBeGreaterThan(0);
    const rows = (JSON.parse(r.files.metrics!) as { requests: { adapter?: string }[] }).requests;
    expect(new Set(rows.map((x) => x.adapter ?? ''))).toEqual(new Set(['sql', 'legal', '']));
    expect(r.files.traceCsv!.split('\n')[0]!.endsWith(',adapter')).toBe(true);
  });

  it('costs time: the same workload without LoRA is faster, and more slots mean fewer loads', async () => {
    const off = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'w.yaml', files: { 'w.yaml': SPEC(['', '', '']) } });
    const on = await simulate(base);
    expect(on.metrics.ttft_mean_ms).toBeGreaterThan(off.metrics.ttft_mean_ms);
    const wide = await simulate({ ...base, loraAdapterCapacity: 2 });
    const loads = (m: SimulationMetrics): number => Object.values(m.adapters ?? {}).reduce((s, x) => s + x.load_count, 0);
    expect(loads(wide.metrics)).toBe(2);
    expect(loads(on.metrics)).toBeGreaterThan(2);
  });

  it('a routing tree can follow resident adapters (instance.adapterResident): fewer cold loads than round robin', async () => {
    const tree = 'routing:\n  type: decision_tree\n  tree:\n    route:\n      minimize: instance.load\n      filter: {feature: instance.adapterResident, op: "==", value: true}\n';
    const multi = { ...base, numInstances: 3, files: { ...files, 'p.yaml': tree } };
    const rr = await simulate(multi);
    const pol = await simulate({ ...multi, policyConfig: 'p.yaml' });
    const loads = (m: SimulationMetrics): number => Object.values(m.adapters ?? {}).reduce((s, x) => s + x.load_count, 0);
    expect(loads(pol.metrics)).toBeLessThan(loads(rr.metrics));
  });

  it('replaying the run\'s trace with the same --lora-config reproduces it (INV-13)', async () => {
    const run = await simulate({ ...base, numInstances: 2, routingPolicy: 'weighted', loraScorerWeight: 1, outputs: { trace: true } });
    const replay = await simulate({ mode: 'replay', model: MODEL, numInstances: 2, routingPolicy: 'weighted', loraScorerWeight: 1, loraConfig: 'l.yaml', traceHeader: 't.yaml', traceData: 't.csv', horizon: '9223372036854775807', files: { 'l.yaml': LORA, 't.yaml': run.files.traceYaml!, 't.csv': run.files.traceCsv! } });
    expect(replay.referenceText).toBe(run.referenceText);
  });

  it('P/D pools: requests served whole keep their adapter, disaggregated halves drop it (the reference\'s sub-requests)', async () => {
    const loads = (m: SimulationMetrics): number => Object.values(m.adapters ?? {}).reduce((s, x) => s + x.load_count, 0);
    const pd = { ...base, numInstances: 3, prefillInstances: 1, decodeInstances: 2 };
    const whole = await simulate({ ...pd, pdDecider: 'never' });
    expect(loads(whole.metrics)).toBeGreaterThan(2);
    const split = await simulate({ ...pd, pdDecider: 'always' });
    expect(split.metrics.completed_requests).toBe(120);
    expect(loads(split.metrics)).toBe(0);
  });

  it('a deployment of two configurations gives every instance the adapter slots', async () => {
    const dep = 'models:\n  - name: meta-llama/llama-3.1-8b-instruct\n    configurations:\n      - {name: a, hardware: H100, replicas: 1}\n      - {name: b, hardware: A100-80, replicas: 1}\n';
    const r = await simulate({ ...base, deployment: 'd.yaml', files: { ...files, 'd.yaml': dep } });
    expect(r.metrics.completed_requests).toBe(120);
    expect(Object.values(r.metrics.adapters ?? {}).reduce((s, x) => s + x.load_count, 0)).toBeGreaterThan(2);
  });

  it('refuses bad LoRA input with one error line, exit 2, empty stdout', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(`${tmpdir()}/blis-lora-`);
    const put = (name: string, text: string): string => {
      writeFileSync(`${dir}/${name}`, text);
      return `${dir}/${name}`;
    };
    const lora = put('l.yaml', LORA);
    const spec = (a: string): string => put(`w-${a}.yaml`, SPEC([a]));
    const cases: [string[], RegExp][] = [
      [['--workload-spec', spec('sql'), '--lora-config', lora, '--lora-adapter-capacity', '0'], /adapter_capacity: must be > 0 when adapters are declared, got 0/],
      [['--workload-spec', spec('sql'), '--lora-config', put('z.yaml', 'lora:\n  adapter_capacity: 0\n  adapters: [{id: sql, rank: 8}]\n')], /adapter_capacity: must be > 0/],
      [['--workload-spec', spec('nope'), '--lora-config', lora], /client "c0" uses LoRA adapter "nope", which --lora-config does not declare/],
      [['--workload-spec', spec('med'), '--lora-config', lora], /client "c0" has model "" but its LoRA adapter "med" attaches to base model "other-model"/],
      [['--workload-spec', spec('sql')], /client "c0" uses LoRA adapter "sql" but no adapters are declared/],
      [['--workload-spec', spec('sql'), '--lora-config', put('b.yaml', 'lora:\n  adapters: [{id: sql, rnk: 8}]\n')], /b\.yaml:2:24: lora\.adapters\[0\]\.rnk: unknown key/],
      [['--workload-spec', spec('sql'), '--lora-config', lora, '--routing-policy', 'weighted', '--lora-scorer-weight', '0'], /lora-scorer-weight/],
    ];
    for (const [args, msg] of cases) {
      let out = '';
      const errs: string[] = [];
      const code = await main(['run', '--model', MODEL, ...args], { stdout: (t) => (out += t), warn: () => undefined, error: (t) => errs.push(t) });
      expect(code, args.join(' ')).toBe(2);
      expect(out).toBe('');
      expect(errs).toHaveLength(1);
      expect(errs[0]).toMatch(msg);
    }
  });
});
