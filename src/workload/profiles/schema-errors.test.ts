/**
 * Malformed `load_profile:` / `misbehavior:` blocks: one error naming `file:line:col`, the field and the fix,
 * pointing at the offending value (or key), like every other spec error.
 */
import { describe, expect, it } from 'vitest';
import { clientYaml, specError, specYaml } from '../../../test/fixtures/workload-profiles.js';

/** `line:col` (1-based) of the first occurrence of `needle` at or after the first occurrence of `after`. */
function pos(text: string, needle: string, after = ''): string {
  const at = text.indexOf(needle, after === '' ? 0 : text.indexOf(after));
  if (at < 0) throw new Error(`"${needle}" not in the spec`);
  const before = text.slice(0, at).split('\n');
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

function expectLocated(yaml: string, code: string, field: string, where: string, problem: RegExp): void {
  const e = specError(yaml);
  expect(e.code).toBe(code);
  expect(e.field).toBe(field);
  expect(`${e.line}:${e.col}`).toBe(where);
  expect(e.message.startsWith(`bad.yaml:${where}: ${field}: `)).toBe(true);
  expect(e.message).toMatch(problem);
}

const withProfile = (segments: string, extra = ''): string =>
  specYaml({ rate: 10, top: `load_profile:\n${extra}  segments:\n${segments}`, clients: [clientYaml('a')] });

const withMisbehavior = (block: string, more: string[] = []): string =>
  specYaml({ rate: 10, clients: [clientYaml('a', `    misbehavior: ${block}`), ...more] });

describe('load_profile errors', () => {
  it('an unknown segment key, with a did-you-mean hint', () => {
    const y = withProfile('    - {start_s: 0, end_s: 10, kind: constant, multiplyer: 2}\n');
    expectLocated(y, 'WORKLOAD_SPEC_UNKNOWN_KEY', 'load_profile.segments[0].multiplyer', pos(y, 'multiplyer'), /unknown key "multiplyer".*did you mean "multiplier"/);
  });

  it('an unknown top-level profile key', () => {
    const y = withProfile('    - {start_s: 0, end_s: 10, kind: constant, multiplier: 2}\n', '  repeat: true\n');
    expectLocated(y, 'WORKLOAD_SPEC_UNKNOWN_KEY', 'load_profile.repeat', pos(y, 'repeat'), /valid keys here: default_multiplier, segments/);
  });

  it('an unknown kind', () => {
    const y = withProfile('    - {start_s: 0, end_s: 10, kind: sawtooth}\n');
    expectLocated(y, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0].kind', pos(y, 'sawtooth'), /unknown segment kind "sawtooth".*constant, step, ramp, diurnal, spike/);
  });

  it('a missing kind or bound', () => {
    const y = withProfile('    - {start_s: 0, end_s: 10, multiplier: 2}\n');
    expectLocated(y, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0]', pos(y, '{start_s'), /segment has no kind/);
    const z = withProfile('    - {start_s: 5, kind: constant, multiplier: 2}\n');
    expectLocated(z, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0]', pos(z, '{start_s'), /segment has no end_s/);
  });

  it('a required parameter missing for the kind', () => {
    const y = withProfile('    - start_s: 0\n      end_s: 10\n      kind: ramp\n      from: 1\n');
    expectLocated(y, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0]', pos(y, 'start_s: 0'), /a ramp segment requires "to"/);
  });

  it('a parameter of another kind, reported at its key', () => {
    const y = withProfile('    - start_s: 0\n      end_s: 10\n      kind: constant\n      multiplier: 1\n      levels: [1, 2]\n');
    expectLocated(y, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0].levels', pos(y, 'levels'), /"levels" is not a parameter of a constant segment.*constant takes multiplier/);
  });

  it('overlapping segments, an empty segment, negative multipliers', () => {
    const over = withProfile('    - {start_s: 0, end_s: 10, kind: constant, multiplier: 1}\n    - {start_s: 8, end_s: 20, kind: constant, multiplier: 2}\n');
    expectLocated(over, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[1].start_s', pos(over, '8'), /before the previous segment ends \(10 s\)/);
    const empty = withProfile('    - {start_s: 10, end_s: 10, kind: constant, multiplier: 1}\n');
    expectLocated(empty, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0].end_s', pos(empty, '10, kind'), /end_s \(10\) must be greater than start_s \(10\)/);
    const neg = withProfile('    - {start_s: 0, end_s: 10, kind: step, levels: [1, -2]}\n');
    expectLocated(neg, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0].levels[1]', pos(neg, '-2'), /must be >= 0, got -2/);
    const dflt = withProfile('    - {start_s: 0, end_s: 10, kind: constant, multiplier: 1}\n', '  default_multiplier: -1\n');
    expectLocated(dflt, 'WORKLOAD_SPEC_VALUE', 'load_profile.default_multiplier', pos(dflt, '-1'), /must be >= 0/);
  });

  it('wrong value types', () => {
    const y = withProfile('    - {start_s: 0, end_s: 10, kind: constant, multiplier: high}\n');
    expectLocated(y, 'WORKLOAD_SPEC_TYPE', 'load_profile.segments[0].multiplier', pos(y, 'high'), /expected a number, got text "high"/);
    const z = withProfile('    - {start_s: 0, end_s: 10, kind: step, levels: 3}\n');
    expectLocated(z, 'WORKLOAD_SPEC_TYPE', 'load_profile.segments[0].levels', pos(z, '3}'), /expected a list/);
  });

  it('diurnal peak below trough, a spike outside its segment', () => {
    const d = withProfile('    - {start_s: 0, end_s: 10, kind: diurnal, peak: 1, trough: 2}\n');
    expectLocated(d, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0].peak', pos(d, '1, trough'), /peak \(1\) must be >= trough \(2\)/);
    const s = withProfile('    - {start_s: 0, end_s: 10, kind: spike, peak: 5, at_s: 12}\n');
    expectLocated(s, 'WORKLOAD_SPEC_VALUE', 'load_profile.segments[0].at_s', pos(s, '12'), /at_s \(12\) must lie in the segment \[0, 10\)/);
  });

  it('conflicts with the per-window generation path', () => {
    const y = specYaml({
      rate: 10,
      top: 'load_profile:\n  segments:\n    - {start_s: 0, end_s: 10, kind: constant, multiplier: 2}\n',
      clients: [clientYaml('a', '    lifecycle: {windows: [{start_us: 0, end_us: 1000000, trace_rate: 3}]}')],
    });
    expectLocated(y, 'WORKLOAD_SPEC_CONFLICT', 'load_profile', pos(y, 'load_profile'), /per-window generation path/);
  });
});

describe('misbehavior errors', () => {
  it('an unknown or missing kind', () => {
    const y = withMisbehavior('{kind: greedy}');
    expectLocated(y, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior.kind', pos(y, 'greedy'), /unknown misbehavior kind "greedy".*bursty, abusive, adversarial/);
    const z = withMisbehavior('{rate_multiplier: 2}');
    expectLocated(z, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior', pos(z, '{rate_multiplier'), /misbehavior has no kind/);
  });

  it('an unknown key, a parameter of another kind, a missing required one', () => {
    const y = withMisbehavior('{kind: bursty, burst_rate_multiplier: 3, mean_on_s: 1, mean_off_s: 2, pareto_alfa: 2}');
    expectLocated(y, 'WORKLOAD_SPEC_UNKNOWN_KEY', 'clients[0].misbehavior.pareto_alfa', pos(y, 'pareto_alfa'), /did you mean "pareto_alpha"/);
    const z = withMisbehavior('{kind: abusive, rate_multiplier: 2, burst_size: 5}');
    expectLocated(z, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior.burst_size', pos(z, 'burst_size'), /"burst_size" is not a parameter of a abusive misbehavior/);
    const w = withMisbehavior('{kind: bursty, burst_rate_multiplier: 3, mean_on_s: 1}');
    expectLocated(w, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior', pos(w, '{kind'), /a bursty misbehavior requires "mean_off_s"/);
  });

  it('out-of-range values', () => {
    const a = withMisbehavior('{kind: bursty, burst_rate_multiplier: 3, mean_on_s: 1, mean_off_s: 2, pareto_alpha: 1}');
    expectLocated(a, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior.pareto_alpha', pos(a, '1}'), /must be > 1/);
    const f = withMisbehavior('{kind: abusive, input_multiplier: 2, fraction: 1.5}');
    expectLocated(f, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior.fraction', pos(f, '1.5'), /must be in \(0, 1\]/);
    const j = withMisbehavior('{kind: adversarial, group: g, period_s: 1, burst_size: 3, jitter_ms: 1000}');
    expectLocated(j, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior.jitter_ms', pos(j, '1000'), /must be shorter than period_s/);
    const t = withMisbehavior('{kind: abusive, fixed_input_tokens: 1.5}');
    expectLocated(t, 'WORKLOAD_SPEC_TYPE', 'clients[0].misbehavior.fixed_input_tokens', pos(t, '1.5'), /expected an integer/);
  });

  it('conflicting abusive settings, and an effect-less one', () => {
    const y = withMisbehavior('{kind: abusive, input_multiplier: 2, fixed_input_tokens: 9000}');
    expectLocated(y, 'WORKLOAD_SPEC_CONFLICT', 'clients[0].misbehavior.fixed_input_tokens', pos(y, 'fixed_input_tokens'), /mutually exclusive/);
    const z = withMisbehavior('{kind: abusive}');
    expectLocated(z, 'WORKLOAD_SPEC_VALUE', 'clients[0].misbehavior', pos(z, '{kind'), /needs at least one effect/);
  });

  it('adversarial clients of one group that disagree on the shared instants', () => {
    const y = withMisbehavior('{kind: adversarial, group: g, period_s: 10, burst_size: 3}', [
      clientYaml('b', '    misbehavior: {kind: adversarial, group: other, period_s: 7, burst_size: 3}'),
      clientYaml('c', '    misbehavior: {kind: adversarial, group: g, period_s: 12, burst_size: 3}'),
    ]);
    expectLocated(y, 'WORKLOAD_SPEC_CONFLICT', 'clients[2].misbehavior.period_s', pos(y, '12'), /period_s differs from clients\[0\] in adversarial group "g" \(12 vs 10\)/);
  });

  it('multi-turn clients cannot misbehave', () => {
    const y = specYaml({
      rate: 10,
      clients: [
        clientYaml(
          'a',
          '    reasoning:\n      reason_ratio_distribution: {type: constant, params: {value: 0}}\n      multi_turn: {max_rounds: 2, think_time_us: 10}\n    misbehavior: {kind: abusive, rate_multiplier: 2}',
        ),
      ],
    });
    expectLocated(y, 'WORKLOAD_SPEC_CONFLICT', 'clients[0].misbehavior', pos(y, 'misbehavior'), /open-loop rate-based clients only/);
  });
});
