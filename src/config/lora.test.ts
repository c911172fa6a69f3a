import { describe, expect, it } from 'vitest';
import { adapterReservedBytes, loadLatencyUs, parseLoraConfig, resolveLora } from './lora.js';

const FILE = `lora:
  adapter_capacity: 2
  adapters:
    - {id: sql, rank: 8}
    - {id: legal, rank: 16, base_model: m}
`;

describe('--lora-config', () => {
  it('reads the lora: block; omitted coefficients come from the reference defaults, flags win over both', () => {
    const cfg = parseLoraConfig(FILE, 'l.yaml');
    expect(cfg.adapters).toEqual([{ id: 'sql', rank: 8, baseModel: '' }, { id: 'legal', rank: 16, baseModel: 'm' }]);
    const r = resolveLora(cfg, {}, 'l.yaml')!;
    expect([r.capacity, r.loadBaseLatencyUs, r.loadBandwidthBytesUs, r.footprintBytesPerRank]).toEqual([2, 1500, 2e6, 2e6]);
    expect([...r.stepOverheadTiers]).toEqual([[8, { k6: 0.02, k7: 1 }], [16, { k6: 0.035, k7: 1 }], [32, { k6: 0.06, k7: 1 }]]);
    // 1500 + ceil(2e6 * 16 / 2e6) µs; the reservation is capacity x footprint x largest rank.
    expect(loadLatencyUs(r, 16)).toBe(1516);
    expect(adapterReservedBytes(r)).toBe(2 * 2e6 * 16);
    const f = resolveLora(cfg, { adapterCapacity: 5, loadBaseLatencyUs: 10 }, 'l.yaml')!;
    expect([f.capacity, f.loadBaseLatencyUs]).toEqual([5, 10]);
  });

  it('is inert without adapters, and without a capacity (with a warning)', () => {
    expect(resolveLora(parseLoraConfig('', 'e.yaml'), {}, 'e.yaml')).toBeNull();
    const warnings: string[] = [];
    expect(resolveLora(parseLoraConfig('lora:\n  adapters: [{id: a, rank: 4}]\n', 'w.yaml'), {}, 'w.yaml', (m) => warnings.push(m))).toBeNull();
    expect(warnings[0]).toMatch(/adapter_capacity is not set/);
  });

  it.each([
    ['lora:\n  adapter_capacity: 0\n  adapters: [{id: a, rank: 4}]\n', /adapter_capacity: must be > 0 when adapters are declared, got 0/],
    ['lora:\n  adapter_capacity: 1\n  adapters: [{id: a, rank: 0}]\n', /adapters\[0\]\.rank: must be > 0/],
    ['lora:\n  adapter_capacity: 1\n  adapters: [{id: a, rank: 4}, {id: a, rank: 8}]\n', /duplicate adapter id "a"/],
    ['lora:\n  adapter_capacity: 1\n  load_bandwidth_bytes_us: 0\n  adapters: [{id: a, rank: 4}]\n', /load_bandwidth_bytes_us: must be finite and > 0/],
    ['lora:\n  adapter_capacity: 1\n  step_overhead_tiers: {8: {k6: 1}}\n  adapters: [{id: a, rank: 4}]\n', /step_overhead_tiers\.8\.k7: must be set/],
  ])('refuses an invalid configuration with one clear error (%#)', (text, msg) => {
    expect(() => resolveLora(parseLoraConfig(text, 'bad.yaml'), {}, '--lora-config bad.yaml')).toThrow(msg);
  });

  it.each([
    ['lora:\n  adapter_capacity: 2\n  slots: 3\n', /bad\.yaml:3:3: lora\.slots: unknown key/],
    ['lora:\n  adapter_capacity: two\n', /bad\.yaml:2:21: lora\.adapter_capacity: must be a finite number/],
    ['lora:\n  adapters:\n    - {id: a, rank: 2.5}\n', /bad\.yaml:3:21: lora\.adapters\[0\]\.rank: must be a whole number/],
    ['adapters: []\n', /bad\.yaml:1:1: \(top level\)\.adapters: unknown key; use one of lora/],
    ['lora: [1, 2]\n', /bad\.yaml:1:7: lora: must be a mapping/],
  ])('points at the bad line and column (%#)', (text, msg) => {
    expect(() => parseLoraConfig(text, 'bad.yaml')).toThrow(msg);
  });
});
