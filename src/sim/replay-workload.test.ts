import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { simulate } from './simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const SPEC = [
  'version: "2"', 'seed: 5', 'aggregate_rate: 4', 'num_requests: 12', 'clients:', '  - id: chat', '    rate_fraction: 1',
  '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 64}}',
  '    output_distribution: {type: constant, params: {value: 16}}', '    reasoning: {multi_turn: {max_rounds: 3, think_time_us: 200000}}',
].join('\n');

async function traceFiles(): Promise<Record<string, string>> {
  const run = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'w.yaml', files: { 'w.yaml': SPEC }, outputs: { trace: true } });
  return { 't.yaml': run.files.traceYaml!, 't.csv': run.files.traceCsv! };
}

describe('blis replay --session-mode', () => {
  it('closed loop regenerates follow-ups after each round: same count as the run, ids session_<s>_round_<r>_<n>', async () => {
    const files = await traceFiles();
    const closed = await simulate({ mode: 'replay', model: MODEL, traceHeader: 't.yaml', traceData: 't.csv', files, sessionMode: 'closed-loop' as const, thinkTimeMs: 200, horizon: '9223372036854775807', outputs: { metrics: true } });
    const fixed = await simulate({ mode: 'replay', model: MODEL, traceHeader: 't.yaml', traceData: 't.csv', files, horizon: '9223372036854775807' });
    expect(closed.metrics['injected_requests']).toBe(fixed.metrics['injected_requests']);
    const ids = (JSON.parse(closed.files.metrics!) as { requests: { requestID: string }[] }).requests.map((r) => r.requestID);
    const followUps = ids.filter((id) => !id.startsWith('request_'));
    expect(followUps.length).toBeGreaterThan(6);
    expect(followUps.every((id) => /^session_sess_\d+_round_[12]_\d+$/.test(id))).toBe(true);
    expect(closed.referenceText).toContain('=== Session Metrics ===');
  });

  it('a longer think time stretches the sessions', async () => {
    const files = await traceFiles();
    const base = { mode: 'replay' as const, model: MODEL, traceHeader: 't.yaml', traceData: 't.csv', files, sessionMode: 'closed-loop' as const, horizon: '9223372036854775807' };
    const short = await simulate({ ...base, thinkTimeDist: 'constant:value=1ms' });
    const long = await simulate({ ...base, thinkTimeDist: 'constant:value=2s' });
    expect(long.metrics['vllm_estimated_duration_s']).toBeGreaterThan((short.metrics['vllm_estimated_duration_s']) + 3);
  });

  it('refuses bad mode and think-time flags with one error line, exit 2, empty stdout', async () => {
    const files = await traceFiles();
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(`${tmpdir()}/blis-replay-`);
    writeFileSync(`${dir}/t.yaml`, files['t.yaml']!);
    writeFileSync(`${dir}/t.csv`, files['t.csv']!);
    const base = ['replay', '--model', MODEL, '--trace-header', `${dir}/t.yaml`, '--trace-data', `${dir}/t.csv`];
    const cases: [string[], RegExp][] = [
      [['--session-mode', 'open'], /--session-mode must be "fixed", "closed-loop" or "fixed-accumulate", got "open"/],
      [['--think-time-ms', '5'], /--think-time-ms requires --session-mode closed-loop/],
      [['--think-time-dist', 'constant:value=1s'], /--think-time-dist requires --session-mode closed-loop/],
      [['--session-mode', 'closed-loop', '--think-time-dist', 'lognormal:mu=2,sigma=-1'], /--think-time-dist "lognormal:mu=2,sigma=-1": sigma must be a finite positive number/],
      [['--session-mode', 'closed-loop', '--think-time-dist', 'weibull:k=2'], /unsupported type "weibull"/],
      [['--session-mode', 'closed-loop', '--think-time-dist', 'abc'], /^--think-time-dist "abc": missing "type:" prefix; expected lognormal:mu=/],
      [['--session-mode', 'closed-loop', '--think-time-dist', 'constant:value=5parsecs'], /invalid value "5parsecs": not a number with a us, ms or s suffix/],
      [['--session-mode', 'closed-loop', '--think-time-dist', 'constant:value=1s', '--think-time-ms', '3'], /mutually exclusive/],
      [['--session-mode', 'closed-loop', '--think-time-ms', '-1'], /--think-time-ms must be non-negative/],
    ];
    for (const [extra, msg] of cases) {
      let out = '';
      const errs: string[] = [];
      const code = await main([...base, ...extra], { stdout: (t) => (out += t), warn: () => undefined, error: (t) => errs.push(t) });
      expect(code, extra.join(' ')).toBe(2);
      expect(out).toBe('');
      expect(errs).toHaveLength(1);
      expect(errs[0]).toMatch(msg);
    }
  });
});
