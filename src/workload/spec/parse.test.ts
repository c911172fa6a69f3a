import { describe, expect, it } from 'vitest';
import { WorkloadSpecError } from './errors.js';
import type { WorkloadSpecErrorCode } from './errors.js';
import { parseWorkloadSpec } from './parse.js';

const CLIENT = `  - id: a
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 5}}
    output_distribution: {type: constant, params: {value: 5}}
`;
/** A valid spec; `extra` is appended to the (only) client's keys. */
const spec = (extra = '', top = 'aggregate_rate: 10\n'): string => `version: "2"\n${top}clients:\n${CLIENT}${extra}`;

function parseError(text: string): WorkloadSpecError {
  try {
    parseWorkloadSpec(text, 'w.yaml');
  } catch (e) {
    if (e instanceof WorkloadSpecError) return e;
    throw e;
  }
  throw new Error('expected a WorkloadSpecError');
}

/** Asserts the code, the `w.yaml:line:col:` prefix, the field path and a fragment of the message. */
function expectError(text: string, code: WorkloadSpecErrorCode, line: number, col: number, field: string, fragment: string): void {
  const e = parseError(text);
  expect(e.message).toContain(fragment);
  expect({ code: e.code, line: e.line, col: e.col, field: e.field }).toEqual({ code, line, col, field });
  const where = field === '' ? '' : ` ${field}:`;
  expect(e.message.startsWith(`w.yaml:${line}:${col}:${where}`)).toBe(true);
  expect(e.message).not.toContain('\n');
}

describe('parseWorkloadSpec: valid specs', () => {
  it('maps every field, with zero values and nulls for absent ones', () => {
    const s = parseWorkloadSpec(
      `version: "2"
seed: 9223372036854775807
category: language
aggregate_rate: 12.5
horizon: 60000000
num_requests: 1e3
goodput_slo_targets:
  critical: {ttft_ms: 200, e2e_ms: 8000}
  batch:
    e2e_ms: 60000
clients:
  - id: chat
    tenant_id: t
    slo_class: critical
    model: m
    rate_fraction: 0.4
    streaming: yes
    prefix_group: g
    prefix_length: 64
    timeout: 0
    slo_target_us: 1500
    closed_loop: false
    network: {rtt_ms: 3, bandwidth_mbps: 100}
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: empirical, params: {100: 0.5, "200": 0.5}}
    output_distribution: {type: exponential, params: {mean: 90, min: ~}}
    lifecycle:
      windows:
        - {start_us: 0, end_us: 1000, trace_rate: 2}
  - id: batch
    slo_class: batch
    rate_fraction: 0.6
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 9}}
    output_distribution: {type: constant, params: {value: 9}}
`,
      'w.yaml',
    );
    expect(s.seed).toBe(9223372036854775807n);
    expect(s.numRequests).toBe(1000);
    expect([...s.goodputSloTargets]).toEqual([
      ['critical', { ttftMs: 200, itlMs: 0, e2eMs: 8000 }],
      ['batch', { ttftMs: 0, itlMs: 0, e2eMs: 60000 }],
    ]);
    const [chat, batch] = s.clients;
    expect(chat).toMatchObject({ id: 'chat', streaming: true, timeout: 0, sloTargetUs: 1500, closedLoop: false, prefixLength: 64 });
    expect(chat?.arrival).toEqual({ process: 'gamma', cv: 2, shape: null, scale: null });
    expect([...(chat?.inputDist.params.keys() ?? [])]).toEqual(['100', '200']);
    expect(chat?.outputDist.params.get('min')).toBe(0);
    expect(chat?.lifecycle?.windows[0]).toEqual({ startUs: 0, endUs: 1000, traceRate: 2, arrival: null, inputDist: null, outputDist: null });
    expect(batch).toMatchObject({ timeout: null, sloTargetUs: null, closedLoop: null, lifecycle: null, network: null, streaming: false });
  });

  it('takes any scalar as text for string fields, like yaml.v3 (version: 2 is "2")', () => {
    const s = parseWorkloadSpec(spec('    tenant_id: 007\n').replace('version: "2"', 'version: 2'), 'w.yaml');
    expect(s.version).toBe('2');
    expect(s.clients[0]?.tenantId).toBe('007');
  });

  it('upgrades v1 specs: version "" or "1" becomes "2" and client SLO classes are renamed', () => {
    const warnings: string[] = [];
    const text = spec('    slo_class: realtime\n').replace('version: "2"\n', '') + CLIENT.replace('id: a', 'id: b') + '    slo_class: interactive\n';
    const s = parseWorkloadSpec(text, 'w.yaml', { onWarning: (w) => warnings.push(w) });
    expect(s.version).toBe('2');
    expect(s.clients.map((c) => c.sloClass)).toEqual(['critical', 'standard']);
    expect(warnings).toHaveLength(2);
    // Version 2 keeps v1 names, which are then invalid.
    expectError(spec('    slo_class: realtime\n'), 'WORKLOAD_SPEC_VALUE', 9, 16, 'clients[0].slo_class', 'unknown slo_class "realtime"');
  });

  it('expands anchors, aliases and merge keys (explicit keys win)', () => {
    const s = parseWorkloadSpec(
      `aggregate_rate: 10
clients:
  - &base
    id: a
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: &len {type: constant, params: {value: 5}}
    output_distribution: *len
  - <<: *base
    id: b
`,
      'w.yaml',
    );
    expect(s.clients.map((c) => c.id)).toEqual(['a', 'b']);
    expect(s.clients[1]?.outputDist.params.get('value')).toBe(5);
  });
});

describe('parseWorkloadSpec: each error class names file:line:col, the field and the fix', () => {
  it('a seed above int64 is refused, not wrapped', () => {
    const e = parseError('seed: 99999999999999999999\naggregate_rate: 1\n');
    expect(e.message).toMatch(/^w\.yaml:1:7: seed: must fit in int64 .*use a smaller seed/);
    expect(parseError('seed: -9223372036854775809\naggregate_rate: 1\n').message).toMatch(/int64/);
  });
  it('YAML syntax errors and duplicate keys', () => {
    expectError('aggregate_rate: 10\nclients: [1\n', 'WORKLOAD_SPEC_YAML', 3, 1, '', 'invalid YAML');
    expectError(spec('    id: b\n'), 'WORKLOAD_SPEC_YAML', 9, 5, 'clients[0].id', 'duplicate key "id"');
    expectError('', 'WORKLOAD_SPEC_YAML', 1, 1, '', 'empty');
  });

  it('unknown keys, with a spelling suggestion', () => {
    expectError(spec('', 'aggregate_rat: 10\n'), 'WORKLOAD_SPEC_UNKNOWN_KEY', 2, 1, 'aggregate_rat', 'did you mean "aggregate_rate"');
    expectError(spec('    rate_fractoin: 2\n'), 'WORKLOAD_SPEC_UNKNOWN_KEY', 9, 5, 'clients[0].rate_fractoin', 'did you mean "rate_fraction"');
    expectError(
      spec().replace('{process: poisson}', '{process: poisson, burst: 2}'),
      'WORKLOAD_SPEC_UNKNOWN_KEY',
      6,
      33,
      'clients[0].arrival.burst',
      'valid keys here: process, cv, shape, scale',
    );
  });

  it('wrong types', () => {
    expectError(spec('', 'aggregate_rate: fast\n'), 'WORKLOAD_SPEC_TYPE', 2, 17, 'aggregate_rate', 'expected a number, got text "fast"');
    expectError(spec('    streaming: maybe\n'), 'WORKLOAD_SPEC_TYPE', 9, 16, 'clients[0].streaming', 'expected true or false');
    expectError(spec('    prefix_length: 1.5\n'), 'WORKLOAD_SPEC_TYPE', 9, 20, 'clients[0].prefix_length', 'expected an integer, got 1.5');
    expectError('aggregate_rate: 3\nclients: {a: 1}\n', 'WORKLOAD_SPEC_TYPE', 2, 10, 'clients', 'expected a list, got a mapping');
    expectError(spec('', 'aggregate_rate: .nan\n'), 'WORKLOAD_SPEC_TYPE', 2, 17, 'aggregate_rate', 'must be a finite number');
    expectError('- 1\n- 2\n', 'WORKLOAD_SPEC_TYPE', 1, 1, '', 'must be a mapping');
  });

  it('negative or missing rates', () => {
    expectError(spec('', 'aggregate_rate: -5\n'), 'WORKLOAD_SPEC_RATE', 2, 17, 'aggregate_rate', 'must be positive, got -5.000000');
    expectError(spec().replace('rate_fraction: 1', 'rate_fraction: -0.5'), 'WORKLOAD_SPEC_RATE', 5, 20, 'clients[0].rate_fraction', 'must be positive');
    expectError(spec().replace('    rate_fraction: 1\n', ''), 'WORKLOAD_SPEC_RATE', 4, 5, 'clients[0].rate_fraction', 'is missing');
    expectError(
      spec('    lifecycle: {windows: [{start_us: 0, end_us: 10, trace_rate: -1}]}\n'),
      'WORKLOAD_SPEC_RATE',
      9,
      65,
      'clients[0].lifecycle.windows[0].trace_rate',
      'must be non-negative',
    );
    expectError(spec('', 'aggregate_rate: 0\n'), 'WORKLOAD_SPEC_RATE', 2, 17, 'aggregate_rate', 'has no lifecycle windows with trace_rate');
  });

  it('no clients', () => {
    expectError('version: "2"\naggregate_rate: 10\n', 'WORKLOAD_SPEC_EMPTY', 1, 1, 'clients', 'at least one client');
    expectError('aggregate_rate: 10\nclients: []\n', 'WORKLOAD_SPEC_EMPTY', 2, 10, 'clients', 'at least one client');
  });

  it('rate fractions summing to 0', () => {
    const zero = spec().replace('rate_fraction: 1', 'rate_fraction: 0') + CLIENT.replace('id: a', 'id: b').replace('rate_fraction: 1', 'rate_fraction: 0');
    expectError(zero, 'WORKLOAD_SPEC_RATE_SUM', 5, 20, 'clients[0].rate_fraction', 'sum to 0');
  });

  it('bad distributions', () => {
    const withInput = (d: string): string => spec().replace('input_distribution: {type: constant, params: {value: 5}}', `input_distribution: ${d}`);
    expectError(withInput('{type: gaussian, params: {mean: 5, std_dev: 1, min: 1}}'), 'WORKLOAD_SPEC_DISTRIBUTION', 7, 50, 'clients[0].input_distribution.params', 'requires parameter "max"');
    expectError(withInput('{type: zipf}'), 'WORKLOAD_SPEC_DISTRIBUTION', 7, 32, 'clients[0].input_distribution.type', 'unknown distribution type "zipf"');
    expectError(withInput('{params: {value: 1}}'), 'WORKLOAD_SPEC_DISTRIBUTION', 7, 25, 'clients[0].input_distribution.type', 'type is missing');
    expectError(
      withInput('{type: lognormal, params: {mu: 1, sigma: 1, min: 9, max: 3}}'),
      'WORKLOAD_SPEC_DISTRIBUTION',
      7,
      69,
      'clients[0].input_distribution.params.min',
      'min (9) must be <= max (3)',
    );
    expectError(withInput('{type: empirical, params: {"ten": 1}}'), 'WORKLOAD_SPEC_DISTRIBUTION', 7, 52, 'clients[0].input_distribution.params.ten', 'not an integer');
    expectError(withInput('{type: exponential, params: {mean: x}}'), 'WORKLOAD_SPEC_TYPE', 7, 60, 'clients[0].input_distribution.params.mean', 'expected a number');
  });

  it('invalid values', () => {
    expectError(spec('    slo_class: gold\n'), 'WORKLOAD_SPEC_VALUE', 9, 16, 'clients[0].slo_class', 'unknown slo_class "gold"');
    expectError(spec().replace('{process: poisson}', '{process: bursty}'), 'WORKLOAD_SPEC_VALUE', 6, 24, 'clients[0].arrival.process', 'unknown arrival process "bursty"');
    expectError(spec().replace('{process: poisson}', '{process: weibull, cv: 20}'), 'WORKLOAD_SPEC_VALUE', 6, 37, 'clients[0].arrival.cv', 'weibull CV must be in [0.01, 10.4]');
    expectError(spec('    lifecycle: {windows: [{start_us: 5, end_us: 5}]}\n'), 'WORKLOAD_SPEC_VALUE', 9, 49, 'clients[0].lifecycle.windows[0].end_us', 'must be greater than start_us');
    expectError(spec('', 'aggregate_rate: 1\ncategory: video\n'), 'WORKLOAD_SPEC_VALUE', 3, 11, 'category', 'unknown category "video"');
    expectError(spec('    timeout: -1\n'), 'WORKLOAD_SPEC_VALUE', 9, 14, 'clients[0].timeout', 'must be non-negative');
  });

  it('conflicting settings', () => {
    const second = CLIENT.replace('id: a', 'id: b');
    expectError(spec('    slo_class: critical\n') + second, 'WORKLOAD_SPEC_CONFLICT', 10, 5, 'clients[1]', 'slo_class is missing here');
    expectError(spec('    concurrency: 3\n'), 'WORKLOAD_SPEC_CONFLICT', 5, 5, 'clients[0].rate_fraction', 'mutually exclusive');
    expectError(spec('', 'aggregate_rate: 1\ninference_perf: {stages: []}\n'), 'WORKLOAD_SPEC_CONFLICT', 3, 1, 'inference_perf', 'mutually exclusive');
  });

  it('servegen_data is a source of its own (expanded to cohorts when generated)', () => {
    expect(parseWorkloadSpec('servegen_data: {path: x, window_duration_secs: 60}\n', 'w.yaml').servegenData).toMatchObject({ path: 'x', windowDurationSecs: 60 });
  });

  it('cohort rules, and cohorts keep v1 class names (the reference upgrades clients only)', () => {
    const cohort = (extra: string): string =>
      `aggregate_rate: 5\ncohorts:\n  - id: c\n    population: 2\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 5}}\n    output_distribution: {type: constant, params: {value: 5}}\n${extra}`;
    expect(parseWorkloadSpec(cohort('    diurnal: {peak_hour: 3, peak_to_trough_ratio: 2}\n'), 'w.yaml').cohorts).toHaveLength(1);
    expectError(cohort('    slo_class: realtime\n'), 'WORKLOAD_SPEC_VALUE', 9, 16, 'cohorts[0].slo_class', 'unknown slo_class "realtime"');
    expectError(cohort('    diurnal: {peak_hour: 24, peak_to_trough_ratio: 2}\n'), 'WORKLOAD_SPEC_VALUE', 9, 26, 'cohorts[0].diurnal.peak_hour', 'must be 0-23');
    expectError(cohort('    prefix_sharing: per_member\n'), 'WORKLOAD_SPEC_VALUE', 9, 21, 'cohorts[0].prefix_sharing', 'requires prefix_group');
    expectError(cohort('').replace('population: 2', 'population: 0'), 'WORKLOAD_SPEC_VALUE', 4, 17, 'cohorts[0].population', 'must be positive');
    expectError(
      cohort('    spike: {start_time_us: 0, duration_us: 10}\n').replace('aggregate_rate: 5', 'aggregate_rate: 0'),
      'WORKLOAD_SPEC_RATE',
      9,
      12,
      'cohorts[0].spike',
      'the spike has no trace_rate',
    );
  });
});
