import { describe, expect, it } from 'vitest';
import { Request } from '../../domain/request.js';
import { MAX_INT64 } from '../../domain/units.js';
import { createBlackboxModel } from '../../latency/blackbox.js';
import { DEFAULT_POLICY_SETUP, runEngine, type EngineSetup } from '../../sim/engine-setup.js';
import { parseWorkloadSpec } from '../spec/parse.js';
import { checkSessionCausality, checkSessionCompleteness } from './invariants.js';
import { SessionManager, type SessionLog } from './manager.js';
import type { SessionState } from './types.js';
import { generateWorkload } from './workload.js';

function req(id: string, session: string, r: number, arrival: number, outcome: Request['outcome']): Request {
  const q = new Request(id, new Int32Array(4), new Int32Array(2), arrival);
  q.sessionId = session;
  q.roundIndex = r;
  q.outcome = outcome;
  return q;
}

function log(state: SessionState, maxRounds: number, done: [Request, number][], delays: [Request, number][] = []): SessionLog {
  return { sessions: new Map([['s', { state, maxRounds, thinkTimeUs: 100 }]]), doneTicks: new Map(done), delays: new Map(delays), followUps: [] };
}

describe('INV-10 session causality (pure)', () => {
  it('accepts arrivals at or after completion + delay (equality at the boundary)', () => {
    const r0 = req('a', 's', 0, 0, 'completed');
    const r1 = req('b', 's', 1, 600, 'completed');
    expect(checkSessionCausality([r1, r0], log('completed', 2, [[r0, 500], [r1, 900]], [[r1, 100]]))).toEqual([]);
  });

  it('flags an early round and a round whose predecessor never finished', () => {
    const r0 = req('a', 's', 0, 0, 'completed');
    const r1 = req('b', 's', 1, 599, 'completed');
    const early = checkSessionCausality([r0, r1], log('completed', 2, [[r0, 500]]));
    expect(early.map((v) => v.invariant)).toEqual(['INV-10']);
    expect(early[0]!.message).toMatch(/arrives at 599 < completion 500 .* delay 100/);
    expect(checkSessionCausality([r0, r1], log('completed', 2, []))[0]!.message).toMatch(/never finished/);
  });
});

describe('INV-11 session completeness (pure)', () => {
  const ok = (state: SessionState, max: number, rounds: Request[]) => checkSessionCompleteness(rounds, log(state, max, []));

  it('accepts each terminal state with consistent rounds, and active sessions whose last round is in flight', () => {
    expect(ok('completed', 2, [req('a', 's', 0, 0, 'completed'), req('b', 's', 1, 9, 'completed')])).toEqual([]);
    expect(ok('cancelled', 5, [req('a', 's', 0, 0, 'completed'), req('b', 's', 1, 9, 'timed_out')])).toEqual([]);
    expect(ok('horizon_interrupted', 5, [req('a', 's', 0, 0, 'completed')])).toEqual([]);
    expect(ok('budget_exhausted', Infinity, [req('a', 's', 0, 0, 'completed')])).toEqual([]);
    expect(ok('active', 5, [req('a', 's', 0, 0, 'completed'), req('b', 's', 1, 9, '')])).toEqual([]);
  });

  it('flags lost rounds, gaps, overruns and inconsistent terminal states', () => {
    const msg = (state: SessionState, max: number, rounds: Request[]) => ok(state, max, rounds).map((v) => v.message).join(' | ');
    expect(msg('active', 5, [req('a', 's', 0, 0, 'rejected')])).toMatch(/still active .* a round was lost/);
    expect(msg('active', 5, [req('a', 's', 0, 0, 'completed'), req('c', 's', 2, 9, '')])).toMatch(/rounds are not 0\.\.1/);
    expect(msg('completed', 1, [req('a', 's', 0, 0, 'completed'), req('b', 's', 1, 9, 'completed')])).toMatch(/exceed max_rounds 1/);
    expect(msg('completed', 3, [req('a', 's', 0, 0, 'completed')])).toMatch(/completed with 1\/3 rounds/);
    expect(msg('cancelled', 3, [req('a', 's', 0, 0, 'timed_out'), req('b', 's', 1, 9, 'timed_out')])).toMatch(/ended 'timed_out' yet has a next round/);
    expect(msg('cancelled', 3, [req('a', 's', 0, 0, '')])).toMatch(/still in flight/);
    expect(msg('budget_exhausted', 3, [req('a', 's', 0, 0, 'dropped_unservable')])).toMatch(/budget_exhausted but/);
    expect(msg('active', 3, [])).toMatch(/no request of this session/);
  });
});

const SPEC = (extra: string) => `version: "2"
seed: 5
aggregate_rate: 40
num_requests: 60
clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 200, std_dev: 50, min: 20, max: 400}}
    output_distribution: {type: gaussian, params: {mean: 40, std_dev: 10, min: 4, max: 80}}
    reasoning:
      multi_turn: {max_rounds: 4, think_time_us: 30000, context_growth: accumulate}
${extra}`;

function setup(over: Partial<EngineSetup> = {}): EngineSetup {
  return {
    numInstances: 2, horizon: MAX_INT64, admissionLatency: 0, routingLatency: 0, maxNumSeqs: 16, maxNumBatchedTokens: 512,
    longPrefillTokenThreshold: 0, maxModelLen: 0, scheduler: 'fcfs', preemptionPolicy: 'fcfs',
    kv: { totalBlocks: 4000, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
    latency: createBlackboxModel({ alpha: [100, 1, 2], beta: [2000, 3, 20] }),
    ...over,
  };
}

function run(yaml: string, over: Partial<EngineSetup> = {}) {
  const wl = generateWorkload(parseWorkloadSpec(yaml, 'w.yaml'), { numRequests: 60, horizon: over.horizon ?? MAX_INT64 });
  const sm = new SessionManager(wl.sessions);
  const cs = runEngine(setup(over), wl.requests, sm.hook);
  const l = sm.log();
  const all = [...wl.requests, ...l.followUps];
  return { cs, all, log: l, violations: [...checkSessionCausality(all, l), ...checkSessionCompleteness(all, l)] };
}

describe('sessions through the cluster', () => {
  it('runs every round of every session, follow-ups entering as cluster arrivals', () => {
    const r = run(SPEC(''));
    expect(r.violations).toEqual([]);
    expect([...r.log.sessions.values()].every((s) => s.state === 'completed')).toBe(true);
    expect(r.all).toHaveLength(r.log.sessions.size * 4);
    expect(r.cs.arrivals).toHaveLength(r.all.length);
    // Accumulated context: each follow-up's input extends its predecessor's.
    const f = r.log.followUps[0]!;
    expect(f.inputLen).toBeGreaterThan(r.all.find((q) => q.sessionId === f.sessionId && q.roundIndex === 0)!.inputLen);
  });

  it('cancels sessions whose round times out, and whose round is rejected at admission', () => {
    const timedOut = run(SPEC('    timeout: 1500\n'));
    expect(timedOut.violations).toEqual([]);
    expect([...timedOut.log.sessions.values()].some((s) => s.state === 'cancelled')).toBe(true);

    const rejected = run(SPEC(''), { policy: { ...DEFAULT_POLICY_SETUP, admissionPolicy: 'reject-all' } });
    expect(rejected.violations).toEqual([]);
    expect([...rejected.log.sessions.values()].every((s) => s.state === 'cancelled')).toBe(true);
  });

  it('stops sessions at the horizon (interrupted, or still active with a round in flight)', () => {
    const r = run(SPEC(''), { horizon: 400_000 });
    expect(r.violations).toEqual([]);
    const states = new Set([...r.log.sessions.values()].map((s) => s.state));
    expect(states.has('horizon_interrupted') || states.has('active')).toBe(true);
  });
});
