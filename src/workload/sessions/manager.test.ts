import { describe, expect, it } from 'vitest';
import { Request, RequestState } from '../../domain/request.js';
import { GoRand } from '../../gocompat/go-rand.js';
import { ConstantSampler } from '../spec/length.js';
import { randomTokenIds } from '../tokens.js';
import { SessionManager } from './manager.js';
import type { SessionBlueprint } from './types.js';

function blueprint(over: Partial<SessionBlueprint> = {}): SessionBlueprint {
  return {
    sessionId: 's1',
    clientId: 'c',
    maxRounds: 3,
    unlimitedRounds: false,
    contextGrowth: '',
    thinkTimeUs: 1000,
    timeout: null,
    horizon: 1_000_000_000,
    inputSampler: new ConstantSampler(10),
    outputSampler: new ConstantSampler(5),
    rng: new GoRand(42n),
    thinkTimeSampler: null,
    toolCall: null,
    prefix: null,
    tenantId: 't',
    sloClass: 'standard',
    model: 'm',
    sloTargetUs: 0,
    adapter: '',
    ...over,
  };
}

/** A finished round: completed with its whole output produced unless told otherwise. */
function round(r: number, input: Int32Array, output: Int32Array, over: { state?: RequestState; progress?: number; outcome?: Request['outcome']; session?: string } = {}): Request {
  const req = new Request(`r${r}`, input, output, 0, output.length);
  req.sessionId = over.session ?? 's1';
  req.roundIndex = r;
  req.state = over.state ?? RequestState.Completed;
  req.outcome = over.outcome ?? (req.state === RequestState.Completed ? 'completed' : req.state === RequestState.TimedOut ? 'timed_out' : 'dropped_unservable');
  req.progressIndex = over.progress ?? input.length + output.length;
  return req;
}

const ids = (n: number, seed = 7n): Int32Array => randomTokenIds(new GoRand(seed), n);

describe('SessionManager follow-ups', () => {
  it('emits round r+1 at completion tick + think time, tagged and numbered like the reference', () => {
    const sm = new SessionManager([blueprint()]);
    const [next] = sm.onComplete(round(0, ids(10), ids(5)), 5000);
    expect(next).toBeDefined();
    expect(next!.id).toBe('session_s1_round_1_1');
    expect(next!.arrivalTime).toBe(6000);
    expect(next!.roundIndex).toBe(1);
    expect([next!.sessionId, next!.clientId, next!.tenantId, next!.sloClass, next!.model]).toEqual(['s1', 'c', 't', 'standard', 'm']);
    expect(next!.deadline).toBe(6000 + 300_000_000); // session default timeout
    expect(next!.maxOutputLen).toBe(5);
    expect(next!.prefixGroup).toBe('');
    expect(sm.state('s1')).toBe('active');
  });

  it('draws input length, output length, input ids, output ids from the session stream in that order', () => {
    const sm = new SessionManager([blueprint({ rng: new GoRand(99n) })]);
    const [next] = sm.onComplete(round(0, ids(10), ids(5)), 0);
    const rng = new GoRand(99n); // constant samplers draw nothing
    expect([...next!.inputTokens]).toEqual([...randomTokenIds(rng, 10)]);
    expect([...next!.outputTokens]).toEqual([...randomTokenIds(rng, 5)]);
  });

  it('numbers follow-ups with one counter across sessions', () => {
    const sm = new SessionManager([blueprint(), blueprint({ sessionId: 's2', rng: new GoRand(1n) })]);
    expect(sm.onComplete(round(0, ids(10), ids(5), { session: 's2' }), 0)[0]!.id).toBe('session_s2_round_1_1');
    expect(sm.onComplete(round(0, ids(10), ids(5)), 0)[0]!.id).toBe('session_s1_round_1_2');
  });

  it('ends sessions in exactly one terminal state', () => {
    const timedOut = new SessionManager([blueprint()]);
    expect(timedOut.onComplete(round(0, ids(10), ids(5), { state: RequestState.TimedOut }), 10)).toEqual([]);
    expect(timedOut.state('s1')).toBe('cancelled');
    // A duplicate report after the session ended produces nothing.
    expect(timedOut.onComplete(round(0, ids(10), ids(5)), 20)).toEqual([]);

    const dropped = new SessionManager([blueprint()]);
    expect(dropped.onComplete(round(0, ids(10), ids(5), { state: RequestState.Queued }), 10)).toEqual([]);
    expect(dropped.state('s1')).toBe('cancelled');

    const rejected = new SessionManager([blueprint()]);
    expect(rejected.onComplete(round(0, ids(10), ids(5), { state: RequestState.Queued, outcome: 'rejected' }), 10)).toEqual([]);
    expect(rejected.state('s1')).toBe('cancelled');

    const evicted = new SessionManager([blueprint()]);
    expect(evicted.onComplete(round(0, ids(10), ids(5), { outcome: 'gateway_evicted' }), 10)).toEqual([]);
    expect(evicted.state('s1')).toBe('cancelled');

    const done = new SessionManager([blueprint({ maxRounds: 1 })]);
    expect(done.onComplete(round(0, ids(10), ids(5)), 10)).toEqual([]);
    expect(done.state('s1')).toBe('completed');

    const late = new SessionManager([blueprint({ horizon: 5999 })]);
    expect(late.onComplete(round(0, ids(10), ids(5)), 5000)).toEqual([]);
    expect(late.state('s1')).toBe('horizon_interrupted');
    // Arriving exactly at the horizon is still allowed.
    expect(new SessionManager([blueprint({ horizon: 6000 })]).onComplete(round(0, ids(10), ids(5)), 5000)).toHaveLength(1);
  });

  it('stops at the follow-up budget (budget_exhausted), counting across sessions', () => {
    const sm = new SessionManager([blueprint({ unlimitedRounds: true, maxRounds: 0 }), blueprint({ sessionId: 's2', unlimitedRounds: true, maxRounds: 0 })]);
    sm.setFollowUpBudget(1);
    expect(sm.onComplete(round(0, ids(10), ids(5)), 0)).toHaveLength(1);
    expect(sm.onComplete(round(0, ids(10), ids(5), { session: 's2' }), 0)).toEqual([]);
    expect(sm.state('s2')).toBe('budget_exhausted');
  });

  it('runs unlimited sessions past max_rounds and rejects limited ones without rounds', () => {
    const sm = new SessionManager([blueprint({ unlimitedRounds: true, maxRounds: 0 })]);
    let req = round(0, ids(10), ids(5));
    for (let r = 1; r <= 5; r++) {
      const [next] = sm.onComplete(req, r * 100);
      expect(next!.roundIndex).toBe(r);
      req = round(r, next!.inputTokens, next!.outputTokens);
    }
    expect(() => new SessionManager([blueprint({ maxRounds: 0 })])).toThrow(RangeError);
  });

  it('ignores requests of no session or an unknown session', () => {
    const sm = new SessionManager([blueprint()]);
    expect(sm.onComplete(round(0, ids(10), ids(5), { session: '' }), 0)).toEqual([]);
    expect(sm.onComplete(round(0, ids(10), ids(5), { session: 'other' }), 0)).toEqual([]);
  });

  it('uses a think-time sampler and the agentic tool latency when set', () => {
    const sm = new SessionManager([blueprint({ thinkTimeSampler: new ConstantSampler(250), toolCall: { latency: new ConstantSampler(40) } })]);
    const [next] = sm.onComplete(round(0, ids(10), ids(5)), 1000);
    expect(next!.arrivalTime).toBe(1290);
    expect(sm.log().delays.get(next!)).toBe(290);
  });

  it('applies an explicit timeout (0 = none)', () => {
    expect(new SessionManager([blueprint({ timeout: 0 })]).onComplete(round(0, ids(10), ids(5)), 0)[0]!.deadline).toBe(0);
    expect(new SessionManager([blueprint({ timeout: 50 })]).onComplete(round(0, ids(10), ids(5)), 0)[0]!.deadline).toBe(1050);
  });
});

describe('SessionManager context', () => {
  it('without accumulation, each round is the prefix plus fresh input', () => {
    const prefix = ids(4, 3n);
    const sm = new SessionManager([blueprint({ prefix })]);
    const [next] = sm.onComplete(round(0, ids(14), ids(5)), 0);
    expect(next!.inputLen).toBe(14);
    expect([...next!.inputTokens.subarray(0, 4)]).toEqual([...prefix]);
  });

  it('accumulates prefix, the conversation and the output each round actually produced', () => {
    const prefix = ids(4, 3n);
    const sm = new SessionManager([blueprint({ contextGrowth: 'accumulate', prefix })]);
    const in0 = new Int32Array([...prefix, ...ids(10, 5n)]);
    const out0 = ids(5, 6n);
    // A normal completion stops one token short of the oracle output (progress = input + output − 1).
    const [r1] = sm.onComplete(round(0, in0, out0, { progress: in0.length + 4 }), 100);
    expect(r1!.inputLen).toBe(14 + 4 + 10);
    expect([...r1!.inputTokens.subarray(0, 14)]).toEqual([...in0]);
    expect([...r1!.inputTokens.subarray(14, 18)]).toEqual([...out0.subarray(0, 4)]);
    const [r2] = sm.onComplete(round(1, r1!.inputTokens, r1!.outputTokens), 200);
    expect(r2!.inputLen).toBe(28 + 5 + 10);
    expect([...r2!.inputTokens.subarray(0, 28)]).toEqual([...r1!.inputTokens]);
  });

  it('treats a round 0 shorter than the prefix wholly as conversation', () => {
    const sm = new SessionManager([blueprint({ contextGrowth: 'accumulate', prefix: ids(20) })]);
    const [r1] = sm.onComplete(round(0, ids(8), ids(5)), 0);
    expect(r1!.inputLen).toBe(20 + 8 + 5 + 10);
  });

  it('refuses a round whose input is not the session buffer, and cancels on more output than the oracle', () => {
    const sm = new SessionManager([blueprint({ contextGrowth: 'accumulate' })]);
    const [r1] = sm.onComplete(round(0, ids(10), ids(5)), 0);
    expect(() => sm.onComplete(round(1, ids(3), r1!.outputTokens), 10)).toThrow(/session buffer/);

    const drift = new SessionManager([blueprint({ contextGrowth: 'accumulate' })]);
    expect(drift.onComplete(round(0, ids(10), ids(5), { progress: 16 }), 0)).toEqual([]);
    expect(drift.state('s1')).toBe('cancelled');
  });
});
