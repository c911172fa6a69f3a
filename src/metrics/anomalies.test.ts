import { describe, expect, it } from 'vitest';
import {
  ANOMALY_TYPES,
  DEFAULT_ANOMALY_THRESHOLDS,
  detectAnomalies,
  type AnomalyEvent,
  type AnomalyInputs,
  type AnomalyRequestRecord,
  type AnomalyType,
} from './anomalies/index.js';

/** Deterministic LCG for test data (no Math.random). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function shuffle<T>(xs: readonly T[], rnd: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

function inputs(over: Partial<AnomalyInputs> = {}): AnomalyInputs {
  return {
    requests: [],
    sloTargets: null,
    priorityScheduling: false,
    preemptions: [],
    routings: [],
    kvSamples: [],
    scaleEvents: [],
    pdQueueSamples: [],
    ...over,
  };
}

function req(id: string, over: Partial<AnomalyRequestRecord> = {}): AnomalyRequestRecord {
  return { id, instance: 'i0', sloClass: '', arrivalUs: 0, scheduledUs: null, ttftUs: null, itlMeanUs: null, e2eUs: null, priority: 0, sloTargetUs: 0, ...over };
}

function ofType(evs: readonly AnomalyEvent[], t: AnomalyType): AnomalyEvent[] {
  return evs.filter((e) => e.type === t);
}

function onlyCount(counts: Readonly<Record<AnomalyType, number>>): Partial<Record<AnomalyType, number>> {
  return Object.fromEntries(Object.entries(counts).filter(([, v]) => v !== 0));
}

describe('API constants', () => {
  it('lists the types in table order and the documented defaults', () => {
    expect(ANOMALY_TYPES).toEqual(['priority_inversion', 'slo_violation', 'cache_thrashing', 'shadow_divergence', 'scale_oscillation', 'pd_backpressure', 'preemption_storm']);
    expect(DEFAULT_ANOMALY_THRESHOLDS).toEqual({
      windowUs: 1_000_000,
      preemptionStormCount: 10,
      thrashingReloads: 32,
      thrashingReloadShare: 0.5,
      scaleOscillationFlips: 2,
      pdBackpressureQueue: 16,
      maxRequestsPerEvent: 10,
      maxEventsPerType: 100,
    });
  });
  it('reports zero counts for every type on empty input', () => {
    const r = detectAnomalies(inputs());
    expect(r.events).toEqual([]);
    expect(Object.keys(r.counts)).toEqual([...ANOMALY_TYPES]);
    expect(Object.values(r.counts).every((v) => v === 0)).toBe(true);
  });
  it('rejects invalid thresholds', () => {
    expect(() => detectAnomalies(inputs(), { windowUs: 0 })).toThrow(RangeError);
    expect(() => detectAnomalies(inputs(), { maxRequestsPerEvent: 1.5 })).toThrow(RangeError);
    expect(() => detectAnomalies(inputs(), { preemptionStormCount: Number.NaN })).toThrow(RangeError);
  });
});

describe('priority_inversion', () => {
  const base = [
    req('a', { priority: 0, arrivalUs: 0, scheduledUs: 300 }),
    req('b', { priority: 5, arrivalUs: 50, scheduledUs: 100 }),
    req('c', { priority: 5, arrivalUs: 60, scheduledUs: 200 }),
    req('d', { priority: 0, arrivalUs: 150, scheduledUs: 250 }),
  ];
  it('one event per victim at the first jumper, severity = number of jumpers', () => {
    const r = detectAnomalies(inputs({ requests: base, priorityScheduling: true }));
    expect(onlyCount(r.counts)).toEqual({ priority_inversion: 2 });
    expect(r.events.map((e) => [e.timestampUs, e.requests, e.severity])).toEqual([
      [100, ['a', 'b', 'c'], 2],
      [200, ['d', 'c'], 1],
    ]);
    expect(r.events[0]?.description).toContain('request a (priority 0, arrived 0) was scheduled at 300; 2 less urgent');
  });
  it('is not reported when the scheduler does not promise priority order', () => {
    expect(detectAnomalies(inputs({ requests: base })).counts.priority_inversion).toBe(0);
  });
  it('needs the victim waiting (arrival <= jumper scheduled; equal counts) and strictly later scheduling', () => {
    const late = detectAnomalies(inputs({ priorityScheduling: true, requests: [req('a', { priority: 0, arrivalUs: 101, scheduledUs: 300 }), req('b', { priority: 5, scheduledUs: 100 })] }));
    expect(late.counts.priority_inversion).toBe(0);
    const edge = detectAnomalies(inputs({ priorityScheduling: true, requests: [req('a', { priority: 0, arrivalUs: 100, scheduledUs: 300 }), req('b', { priority: 5, scheduledUs: 100 })] }));
    expect(edge.counts.priority_inversion).toBe(1);
    const same = detectAnomalies(inputs({ priorityScheduling: true, requests: [req('a', { priority: 0, scheduledUs: 100 }), req('b', { priority: 5, scheduledUs: 100 })] }));
    expect(same.counts.priority_inversion).toBe(0);
    const equalPrio = detectAnomalies(inputs({ priorityScheduling: true, requests: [req('a', { priority: 5, scheduledUs: 300 }), req('b', { priority: 5, arrivalUs: 10, scheduledUs: 100 })] }));
    expect(equalPrio.counts.priority_inversion).toBe(0);
  });
  it('counts never-scheduled victims and keeps instances apart', () => {
    const r = detectAnomalies(
      inputs({
        priorityScheduling: true,
        requests: [
          req('e', { instance: 'i2', priority: 0 }),
          req('f', { instance: 'i2', priority: 1, arrivalUs: 5, scheduledUs: 10 }),
          req('g', { instance: 'i3', priority: 9, scheduledUs: 1 }),
        ],
      }),
    );
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ timestampUs: 10, requests: ['e', 'f'], severity: 1 });
    expect(r.events[0]?.description).toContain('instance i2: request e');
    expect(r.events[0]?.description).toContain('was never scheduled');
  });
  it('matches a naive O(n^2) reference on random data', () => {
    const rnd = lcg(7);
    const reqs: AnomalyRequestRecord[] = [];
    for (let i = 0; i < 600; i++) {
      const arrivalUs = Math.floor(rnd() * 1000);
      const sched = rnd() < 0.1 ? null : arrivalUs + Math.floor(rnd() * 200);
      reqs.push(req(`r${i}`, { instance: `i${Math.floor(rnd() * 3)}`, arrivalUs, scheduledUs: sched, priority: Math.floor(rnd() * 4) }));
    }
    const want = new Map<string, { sev: number; ts: number }>();
    for (const a of reqs) {
      let sev = 0;
      let ts = Infinity;
      for (const b of reqs) {
        if (b.instance !== a.instance || b.scheduledUs === null || !(a.priority < b.priority) || !(a.arrivalUs <= b.scheduledUs)) continue;
        if (a.scheduledUs !== null && !(b.scheduledUs < a.scheduledUs)) continue;
        sev++;
        ts = Math.min(ts, b.scheduledUs);
      }
      if (sev > 0) want.set(a.id, { sev, ts });
    }
    const r = detectAnomalies(inputs({ requests: reqs, priorityScheduling: true }), { maxEventsPerType: 1e6 });
    expect(r.counts.priority_inversion).toBe(want.size);
    expect(want.size).toBeGreaterThan(50);
    for (const e of r.events) {
      const w = want.get(e.requests[0] as string);
      expect(w).toBeDefined();
      expect([e.severity, e.timestampUs]).toEqual([w?.sev, w?.ts]);
      expect(e.requests.length).toBe(Math.min(10, (w?.sev ?? 0) + 1));
    }
  });
});

describe('slo_violation', () => {
  const targets = new Map([
    ['gold', { ttftMs: 100, itlMs: 10, e2eMs: 1000 }],
    ['default', { ttftMs: 0, itlMs: 0, e2eMs: 500 }],
  ]);
  it('one event per (class, window) with counts and the worst ratio; exact-at-target is met', () => {
    const r = detectAnomalies(
      inputs({
        sloTargets: targets,
        requests: [
          // gold, window [0, 1s): r1 TTFT 1.5x, r2 at every target exactly, r3 ITL 2x
          req('r1', { sloClass: 'gold', ttftUs: 150_000, itlMeanUs: 5_000, e2eUs: 900_000 }),
          req('r2', { sloClass: 'gold', ttftUs: 100_000, itlMeanUs: 10_000, e2eUs: 999_999 }),
          req('r3', { sloClass: 'gold', arrivalUs: 10, ttftUs: 50_000, itlMeanUs: 20_000, e2eUs: 800_000 }),
          // gold, finished in [2s, 3s): E2E 2.5x
          req('r4', { sloClass: 'gold', arrivalUs: 0, ttftUs: 10, e2eUs: 2_500_000 }),
          // default class ("" → "default"): E2E 1.2x, window [0, 1s)
          req('r5', { ttftUs: 1_000_000_000, e2eUs: 600_000 }),
          // class without targets, own TTFT target 1000 µs, TTFT 4000 µs; unfinished → window of first token
          req('r6', { sloClass: 'bronze', arrivalUs: 1_500_000, ttftUs: 4_000, sloTargetUs: 1_000 }),
          // no outcome at all: ignored
          req('r7', { sloClass: 'gold', arrivalUs: 5 }),
        ],
      }),
    );
    expect(onlyCount(r.counts)).toEqual({ slo_violation: 4 });
    expect(r.events.map((e) => [e.timestampUs, e.requests, e.severity])).toEqual([
      [0, ['r5'], 1.2],
      // by outcome time: r3 finishes at 800010, r1 at 900000
      [0, ['r3', 'r1'], 2],
      [1_000_000, ['r6'], 4],
      [2_000_000, ['r4'], 2.5],
    ]);
    expect(r.events[1]?.description).toBe('class gold: 2/3 requests with an outcome in [0, 1000000) missed their SLO; worst ITL 2x target (request r3)');
    expect(r.events[2]?.description).toContain('class bronze: 1/1');
    expect(r.events[2]?.description).toContain('request TTFT target');
  });
  it('nothing without targets, or when just within them', () => {
    expect(detectAnomalies(inputs({ requests: [req('x', { ttftUs: 1e12, e2eUs: 1e12 })] })).counts.slo_violation).toBe(0);
    const r = detectAnomalies(inputs({ sloTargets: targets, requests: [req('x', { sloClass: 'gold', ttftUs: 100_000, itlMeanUs: 10_000, e2eUs: 1_000_000, sloTargetUs: 100_000 })] }));
    expect(r.counts.slo_violation).toBe(0);
  });
});

describe('cache_thrashing', () => {
  const kv = (timeUs: number, offloads: number, reloads: number, instance = 'i0') => ({ timeUs, instance, offloads, reloads });
  it('fires at the reload threshold with enough reload share; the first sample is a baseline', () => {
    const r = detectAnomalies(inputs({ kvSamples: [kv(0, 1000, 1000), kv(500_000, 1040, 1032)] }));
    expect(r.events).toEqual([
      { type: 'cache_thrashing', timestampUs: 0, description: 'instance i0: 32 CPU->GPU reloads and 40 GPU->CPU offloads in [0, 1000000)', requests: [], severity: 1 },
    ]);
  });
  it('stays quiet just below the reload count or the share', () => {
    expect(detectAnomalies(inputs({ kvSamples: [kv(0, 0, 0), kv(500_000, 40, 31)] })).counts.cache_thrashing).toBe(0);
    expect(detectAnomalies(inputs({ kvSamples: [kv(0, 0, 0), kv(500_000, 65, 32)] })).counts.cache_thrashing).toBe(0);
    expect(detectAnomalies(inputs({ kvSamples: [kv(0, 0, 0), kv(500_000, 64, 32)] })).counts.cache_thrashing).toBe(1);
  });
  it('attributes a delta to the window of the later sample and sums within a window', () => {
    const r = detectAnomalies(
      inputs({
        kvSamples: [kv(900_000, 0, 0), kv(1_100_000, 10, 20), kv(1_900_000, 20, 40), kv(2_100_000, 20, 60), kv(0, 0, 0, 'i1'), kv(10, 0, 5, 'i1')],
      }),
    );
    expect(r.events.map((e) => [e.timestampUs, e.severity])).toEqual([[1_000_000, 40 / 32]]);
  });
});

describe('shadow_divergence', () => {
  const rt = (timeUs: number, requestId: string, expectedHit: boolean, actualHit: boolean, instance = 'i0') => ({ timeUs, requestId, instance, expectedHit, actualHit });
  it('one event per (instance, window) with a divergence, severity = divergent share', () => {
    const r = detectAnomalies(
      inputs({
        routings: [
          rt(10, 'a', true, false),
          rt(20, 'b', true, true),
          rt(30, 'c', false, false),
          rt(40, 'd', false, true),
          rt(1_500_000, 'e', true, true),
          rt(5, 'f', false, false, 'i1'),
        ],
      }),
    );
    expect(r.events).toEqual([
      {
        type: 'shadow_divergence',
        timestampUs: 0,
        description: 'instance i0: 2/4 routings in [0, 1000000) diverged from the ShadowKV prediction (1 predicted hit but missed, 1 predicted miss but hit)',
        requests: ['a', 'd'],
        severity: 0.5,
      },
    ]);
  });
});

describe('scale_oscillation', () => {
  const se = (timeUs: number, from: number, to: number, deployment = 'd') => ({ timeUs, deployment, from, to });
  it('two direction changes less than 4 windows apart are one oscillation', () => {
    const r = detectAnomalies(inputs({ scaleEvents: [se(0, 1, 2), se(1_000_000, 2, 1), se(4_999_999, 1, 2)] }));
    expect(r.events).toEqual([
      {
        type: 'scale_oscillation',
        timestampUs: 1_000_000,
        description: 'deployment d: 2 scale direction changes between 1000000 and 4999999 (replicas 1->2->1->2)',
        requests: [],
        severity: 1,
      },
    ]);
  });
  it('not when the changes are 4 windows apart, or only one change', () => {
    expect(detectAnomalies(inputs({ scaleEvents: [se(0, 1, 2), se(1_000_000, 2, 1), se(5_000_000, 1, 2)] })).counts.scale_oscillation).toBe(0);
    expect(detectAnomalies(inputs({ scaleEvents: [se(0, 1, 2), se(10, 2, 3), se(20, 3, 1)] })).counts.scale_oscillation).toBe(0);
  });
  it('merges overlapping oscillations, ignores no-op events and keeps deployments apart', () => {
    const r = detectAnomalies(
      inputs({
        scaleEvents: [se(0, 1, 2), se(1_000_000, 2, 1), se(1_500_000, 1, 1), se(2_000_000, 1, 2), se(5_000_000, 2, 1), se(1_000_000, 4, 5, 'e'), se(2_000_000, 5, 4, 'e')],
      }),
    );
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ timestampUs: 1_000_000, severity: 1.5 });
    expect(r.events[0]?.description).toBe('deployment d: 3 scale direction changes between 1000000 and 5000000 (replicas 1->2->1->2->1)');
  });
});

describe('pd_backpressure', () => {
  const pd = (timeUs: number, pending: number, requestIds: string[] = [], instance = 'p0') => ({ timeUs, instance, pending, requestIds });
  it('one event per episode at or above the threshold', () => {
    const r = detectAnomalies(
      inputs({
        pdQueueSamples: [pd(0, 10, ['x']), pd(100, 16, ['a', 'b']), pd(200, 20, ['b', 'c']), pd(300, 15, ['c']), pd(400, 17, ['d'])],
      }),
    );
    expect(r.events.map((e) => [e.timestampUs, e.requests, e.severity])).toEqual([
      [100, ['a', 'b', 'c'], 1.25],
      [400, ['d'], 17 / 16],
    ]);
    expect(r.events[0]?.description).toBe('instance p0: prefill->decode KV transfer queue at or above 16 from 100 until 300 (peak 20 pending over 2 sample(s), 3 request(s))');
    expect(r.events[1]?.description).toContain('until the last sample');
  });
  it('not just below the threshold', () => {
    expect(detectAnomalies(inputs({ pdQueueSamples: [pd(0, 15), pd(1, 15.5)] })).counts.pd_backpressure).toBe(0);
  });
});

describe('preemption_storm', () => {
  const burst = (n: number, t0: number, gap: number, instance = 'i0', id = (k: number) => `r${k}`) =>
    Array.from({ length: n }, (_, k) => ({ timeUs: t0 + k * gap, instance, requestId: id(k) }));
  it('fires when the threshold count falls within the window', () => {
    const r = detectAnomalies(inputs({ preemptions: burst(10, 0, 100_000) }));
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ type: 'preemption_storm', timestampUs: 0, severity: 1, requests: burst(10, 0, 0).map((p) => p.requestId) });
    expect(r.events[0]?.description).toBe('instance i0: 10 preemptions of 10 request(s) between 0 and 900000 (peak 10 within 1000000 us)');
  });
  it('not with one fewer, or when spread over a full window', () => {
    expect(detectAnomalies(inputs({ preemptions: burst(9, 0, 1) })).counts.preemption_storm).toBe(0);
    expect(detectAnomalies(inputs({ preemptions: burst(10, 0, 111_112) })).counts.preemption_storm).toBe(0);
    // Exactly W between the first and the last: not "within" the half-open window.
    expect(detectAnomalies(inputs({ preemptions: burst(10, 0, 1_000_000 / 9) })).counts.preemption_storm).toBe(0);
  });
  it('merges overlapping bursts, separates distant ones, lists distinct requests', () => {
    const ps = [...burst(20, 0, 100_000, 'i0', (k) => `r${k % 4}`), ...burst(10, 10_000_000, 1), ...burst(10, 0, 1, 'i1')];
    const r = detectAnomalies(inputs({ preemptions: ps }));
    expect(r.counts.preemption_storm).toBe(3);
    const i0 = r.events.filter((e) => e.description.startsWith('instance i0'));
    expect(i0.map((e) => [e.timestampUs, e.severity, e.requests])).toEqual([
      [0, 2, ['r0', 'r1', 'r2', 'r3']],
      [10_000_000, 1, burst(10, 0, 0).map((p) => p.requestId)],
    ]);
    expect(i0[0]?.description).toBe('instance i0: 20 preemptions of 4 request(s) between 0 and 1900000 (peak 10 within 1000000 us)');
  });
});

/** One input exercising every type. */
function mixed(): AnomalyInputs {
  const requests: AnomalyRequestRecord[] = [];
  for (let i = 0; i < 40; i++) {
    requests.push(req(`q${i}`, { instance: `i${i % 3}`, sloClass: i % 2 ? 'gold' : '', arrivalUs: i * 50_000, scheduledUs: i * 50_000 + ((i * 7919) % 300_000), priority: (i * 31) % 5, ttftUs: 20_000 + ((i * 104_729) % 200_000), e2eUs: 900_000 + i * 10_000 }));
  }
  return inputs({
    priorityScheduling: true,
    requests,
    sloTargets: new Map([['gold', { ttftMs: 100, itlMs: 0, e2eMs: 1000 }]]),
    preemptions: Array.from({ length: 30 }, (_, k) => ({ timeUs: k * 37_000, instance: `i${k % 2}`, requestId: `q${k}` })),
    routings: Array.from({ length: 30 }, (_, k) => ({ timeUs: k * 100_000, requestId: `q${k}`, instance: `i${k % 3}`, expectedHit: k % 3 === 0, actualHit: k % 5 === 0 })),
    kvSamples: Array.from({ length: 20 }, (_, k) => ({ timeUs: k * 300_000, instance: `i${k % 2}`, offloads: k * 10, reloads: k * 30 })),
    scaleEvents: [0, 1, 2, 3, 4].map((k) => ({ timeUs: k * 500_000, deployment: 'd', from: 1 + (k % 2), to: 2 - (k % 2) })),
    pdQueueSamples: Array.from({ length: 10 }, (_, k) => ({ timeUs: k * 10_000, instance: 'p', pending: (k * 7) % 30, requestIds: [`q${k}`] })),
  });
}

describe('report', () => {
  it('sorts events by time, then type order, then description, and covers every type', () => {
    const r = detectAnomalies(mixed());
    for (const t of ANOMALY_TYPES) expect(r.counts[t], t).toBeGreaterThan(0);
    const order = (t: AnomalyType) => ANOMALY_TYPES.indexOf(t);
    for (let i = 1; i < r.events.length; i++) {
      const a = r.events[i - 1] as AnomalyEvent;
      const b = r.events[i] as AnomalyEvent;
      const c = a.timestampUs - b.timestampUs || order(a.type) - order(b.type) || (a.description < b.description ? -1 : a.description > b.description ? 1 : 0);
      expect(c).toBeLessThanOrEqual(0);
    }
    expect(r.events.length).toBe(Object.values(r.counts).reduce((s, v) => s + v, 0));
  });
  it('is independent of input order', () => {
    const m = mixed();
    const want = detectAnomalies(m);
    for (let seed = 1; seed <= 5; seed++) {
      const rnd = lcg(seed);
      const shuffled: AnomalyInputs = {
        ...m,
        requests: shuffle(m.requests, rnd),
        preemptions: shuffle(m.preemptions, rnd),
        routings: shuffle(m.routings, rnd),
        kvSamples: shuffle(m.kvSamples, rnd),
        scaleEvents: shuffle(m.scaleEvents, rnd),
        pdQueueSamples: shuffle(m.pdQueueSamples, rnd),
      };
      expect(detectAnomalies(shuffled)).toEqual(want);
    }
  });
  it('caps the events kept per type (the earliest) and the requests per event, not the counts', () => {
    const preemptions = [0, 1, 2, 3, 4].flatMap((w) => Array.from({ length: 12 }, (_, k) => ({ timeUs: w * 10_000_000 + k, instance: 'i0', requestId: `w${w}r${k}` })));
    const r = detectAnomalies(inputs({ preemptions }), { maxEventsPerType: 2, maxRequestsPerEvent: 3 });
    expect(r.counts.preemption_storm).toBe(5);
    expect(r.events.map((e) => e.timestampUs)).toEqual([0, 10_000_000]);
    expect(r.events[0]?.requests).toEqual(['w0r0', 'w0r1', 'w0r2']);
    expect(r.events[0]?.description).toContain('12 preemptions of 12 request(s)');
    const none = detectAnomalies(inputs({ preemptions }), { maxEventsPerType: 0, maxRequestsPerEvent: 0 });
    expect([none.counts.preemption_storm, none.events.length]).toEqual([5, 0]);
    const pi = detectAnomalies(inputs({ priorityScheduling: true, requests: [req('a', { scheduledUs: 9 }), req('b', { priority: 1, scheduledUs: 1 })] }), { maxRequestsPerEvent: 1 });
    expect(pi.events[0]?.requests).toEqual(['a']);
  });
  it('handles 50k requests', () => {
    const rnd = lcg(42);
    const requests: AnomalyRequestRecord[] = [];
    for (let i = 0; i < 50_000; i++) {
      const arrivalUs = Math.floor(rnd() * 600_000_000);
      requests.push(
        req(`r${i}`, {
          instance: `i${i % 8}`,
          sloClass: ['gold', 'silver', ''][i % 3] as string,
          arrivalUs,
          scheduledUs: rnd() < 0.02 ? null : arrivalUs + Math.floor(rnd() * 2_000_000),
          priority: Math.floor(rnd() * 10),
          ttftUs: 50_000 + Math.floor(rnd() * 500_000),
          itlMeanUs: 5_000 + Math.floor(rnd() * 20_000),
          e2eUs: 1_000_000 + Math.floor(rnd() * 9_000_000),
          sloTargetUs: i % 5 === 0 ? 300_000 : 0,
        }),
      );
    }
    const r = detectAnomalies(
      inputs({
        priorityScheduling: true,
        requests,
        sloTargets: new Map([['gold', { ttftMs: 400, itlMs: 20, e2eMs: 8000 }]]),
        preemptions: requests.slice(0, 20_000).map((q) => ({ timeUs: q.arrivalUs, instance: q.instance, requestId: q.id })),
        routings: requests.map((q, k) => ({ timeUs: q.arrivalUs, requestId: q.id, instance: q.instance, expectedHit: k % 2 === 0, actualHit: k % 7 === 0 })),
      }),
    );
    expect(r.counts.priority_inversion).toBeGreaterThan(1000);
    expect(r.counts.slo_violation).toBeGreaterThan(0);
    for (const t of ANOMALY_TYPES) expect(ofType(r.events, t).length).toBeLessThanOrEqual(100);
  });
});
