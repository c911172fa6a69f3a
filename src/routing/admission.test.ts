/** Admission policies, tenant budgets and the policy registries, with cases from the reference's tests. */
import { describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../domain/slo.js';
import { alwaysAdmit, gaieLegacy, rejectAll, tenantBudget, tierShed, tokenBucket, type TenantBudgetView } from './admission.js';
import { RoutingConfigError } from './errors.js';
import { ADMISSION_POLICY_NAMES, makeAdmissionPolicy, makeRoutingPolicy, ROUTING_POLICY_NAMES, type AdmissionPolicyOptions } from './registry.js';
import { TenantTracker } from './tenant.js';
import { makeRequest, snaps } from './test-fixtures.js';
import type { AdmissionPolicy, RoutingSnapshot } from './types.js';

const ofLen = (n: number, sloClass = '', tenantId = '') => makeRequest('r', new Array<number>(n).fill(1), { sloClass, tenantId });
const at = (p: AdmissionPolicy, n: number, clock: number, snapshots: RoutingSnapshot[] = []) => p.admit(ofLen(n), { snapshots, clock }).admitted;
const cls = (p: AdmissionPolicy, sloClass: string, snapshots: RoutingSnapshot[], tenantId = '') =>
  p.admit(makeRequest('r', [], { sloClass, tenantId }), { snapshots, clock: 0 });
const overloaded = (load: number) => snaps(['inst_0', { queueDepth: load }]);

describe('always-admit and reject-all', () => {
  it('decide unconditionally with the reference reasons', () => {
    expect(alwaysAdmit().admit(ofLen(10_000), { snapshots: [], clock: 5_000_000 })).toEqual({ admitted: true, reason: '' });
    expect(rejectAll().admit(ofLen(0), { snapshots: [], clock: 0 })).toEqual({ admitted: false, reason: 'reject-all' });
  });
});

describe('token-bucket', () => {
  it('charges input tokens and rejects without a partial debit', () => {
    const tb = tokenBucket(10, 0.001);
    expect(at(tb, 10, 0)).toBe(true);
    expect(tb.admit(ofLen(10), { snapshots: [], clock: 0 })).toEqual({ admitted: false, reason: 'insufficient tokens' });
    expect(at(tokenBucket(5, 0.001), 10, 0)).toBe(false);
  });

  it('refills lazily by elapsed × rate / 1e6, capped at capacity', () => {
    const tb = tokenBucket(100, 1_000_000);
    expect(at(tb, 100, 0)).toBe(true);
    expect(at(tb, 100, 50)).toBe(false); // 50 tokens back
    expect(at(tb, 100, 150)).toBe(true); // +100, capped at 100
    const small = tokenBucket(10, 1_000_000);
    expect([at(small, 5, 0), at(small, 5, 1_000_000), at(small, 5, 1_000_000), at(small, 5, 1_000_000)]).toEqual([true, true, true, false]);
  });

  it('measures the first refill from time 0 and keeps fractional tokens', () => {
    // 2 tokens/s; drained at t=1s (the refill from 0 to 1s is capped), 0.75 s later 1.5 tokens are back.
    const tb = tokenBucket(4, 2);
    expect(at(tb, 4, 1_000_000)).toBe(true);
    expect(at(tb, 2, 1_750_000)).toBe(false);
    expect(at(tb, 1, 1_750_000)).toBe(true);
    expect(at(tb, 1, 1_750_000)).toBe(false); // 0.5 left
    expect(at(tb, 1, 2_000_000)).toBe(true); // 0.5 + 0.5
  });

  it('always admits an empty prompt and rejects one longer than the capacity', () => {
    expect(at(tokenBucket(1, 1), 0, 0)).toBe(true);
    expect(at(tokenBucket(10, 1e9), 11, 1e9)).toBe(false);
  });

  it('refuses a non-positive or non-finite capacity or rate', () => {
    for (const [c, r] of [[0, 1], [10, 0], [-1, 1], [NaN, 1], [10, Infinity]] as const) {
      expect(() => tokenBucket(c, r)).toThrow(RoutingConfigError);
    }
  });
});

describe('tier-shed', () => {
  it('admits every class at or under the threshold (strict >)', () => {
    for (const c of ['critical', 'standard', 'sheddable', 'batch', 'background']) expect(cls(tierShed(10, 3), c, overloaded(5)).admitted).toBe(true);
    expect(cls(tierShed(5, 3), 'sheddable', overloaded(5)).admitted).toBe(true);
    expect(cls(tierShed(0, 3), 'sheddable', []).admitted).toBe(true);
  });

  it('under overload sheds classes below the minimum priority; empty class counts as standard', () => {
    const p = tierShed(0, 3);
    for (const c of ['critical', 'standard', '', 'unknown']) expect(cls(p, c, overloaded(10))).toEqual({ admitted: true, reason: '' });
    expect(cls(tierShed(5, 3), 'sheddable', overloaded(6))).toEqual({ admitted: false, reason: 'tier-shed: class=sheddable priority=-2 < min=3 load=6' });
    for (const c of ['batch', 'background']) expect(cls(p, c, overloaded(9999)).admitted).toBe(false);
  });

  it('min priority 0 sheds exactly the sheddable classes; -3 sheds none', () => {
    const zero = tierShed(0, 0);
    expect(['critical', 'standard', 'batch', 'sheddable', 'background'].map((c) => cls(zero, c, overloaded(9999)).admitted)).toEqual([true, true, false, false, false]);
    const all = tierShed(0, -3);
    expect(['critical', 'standard', 'batch', 'sheddable', 'background'].every((c) => cls(all, c, overloaded(9999)).admitted)).toBe(true);
  });

  it('refuses a negative threshold', () => {
    expect(() => tierShed(-1, 3)).toThrow(RoutingConfigError);
  });
});

describe('gaie-legacy', () => {
  const g = gaieLegacy(5, 0.8);

  it('always admits non-sheddable classes', () => {
    for (const c of ['critical', 'standard', '', 'unknown']) expect(cls(g, c, snaps(['i0', { queueDepth: 100, kvUtilization: 1 }])).admitted).toBe(true);
  });

  it('sheds sheddable classes at saturation >= 1 (mean of max(qd/5, kv/0.8))', () => {
    for (const c of ['batch', 'sheddable', 'background']) {
      expect(cls(g, c, snaps(['i0', { queueDepth: 5, kvUtilization: 0.8 }]))).toEqual({ admitted: false, reason: `gaie-saturated: class=${c} saturation=1.00` });
      expect(cls(g, c, snaps(['i0', { queueDepth: 2, kvUtilization: 0.3 }])).admitted).toBe(true);
    }
    expect(cls(g, 'sheddable', snaps(['i0', { queueDepth: 4, kvUtilization: 0.79 }])).admitted).toBe(true);
    expect(cls(g, 'sheddable', snaps(['i0', { kvUtilization: 0.9 }])).admitted).toBe(false);
    const mixed = snaps(['i0', { queueDepth: 2, kvUtilization: 0.3 }], ['i1', { queueDepth: 1, kvUtilization: 0.2 }]);
    expect(cls(g, 'sheddable', mixed).admitted).toBe(true);
  });

  it('treats no instances as saturated', () => {
    expect(cls(g, 'sheddable', [])).toEqual({ admitted: false, reason: 'gaie-saturated: class=sheddable saturation=1.00' });
    expect(cls(g, 'critical', []).admitted).toBe(true);
  });

  it('follows a custom priority map', () => {
    const custom = gaieLegacy(5, 0.8, new SloPriorityMap({ batch: 0 }));
    const sat = snaps(['i0', { queueDepth: 5, kvUtilization: 0.8 }]);
    expect([cls(custom, 'batch', sat).admitted, cls(custom, 'sheddable', sat).admitted]).toEqual([true, false]);
  });

  it('refuses thresholds out of range', () => {
    for (const [qd, kv] of [[0, 0.8], [-1, 0.8], [NaN, 0.8], [Infinity, 0.8], [5, 0], [5, -0.5], [5, 1.1], [5, NaN]] as const) {
      expect(() => gaieLegacy(qd, kv)).toThrow(RoutingConfigError);
    }
  });
});

describe('tenant budgets', () => {
  const stub = (over: boolean): TenantBudgetView => ({ isOverBudget: () => over });
  const inner: AdmissionPolicy = { name: 'inner', admit: () => ({ admitted: true, reason: 'inner-policy-reason' }) };

  it('sheds only sheddable requests of over-budget tenants, otherwise delegates', () => {
    expect(cls(tenantBudget(alwaysAdmit(), stub(true)), 'batch', [], 't1')).toEqual({ admitted: false, reason: 'tenant-budget-shed' });
    expect(cls(tenantBudget(alwaysAdmit(), stub(true)), 'standard', [], 't1').admitted).toBe(true);
    expect(cls(tenantBudget(alwaysAdmit(), stub(false)), 'batch', [], 't1').admitted).toBe(true);
    expect(cls(tenantBudget(rejectAll(), stub(false)), 'standard', [], 't1')).toEqual({ admitted: false, reason: 'reject-all' });
    expect(cls(tenantBudget(inner, stub(false)), 'standard', [], 't1').reason).toBe('inner-policy-reason');
  });

  it('checks the budget before the inner policy runs', () => {
    let calls = 0;
    const counting: AdmissionPolicy = { name: 'counting', admit: () => (calls++, { admitted: true, reason: '' }) };
    cls(tenantBudget(counting, stub(true)), 'sheddable', [], 't1');
    expect(calls).toBe(0);
  });

  it('tracker: over budget only when in-flight strictly exceeds budget × capacity', () => {
    const t = new TenantTracker({ alice: 0.3 }, 10);
    for (let i = 0; i < 3; i++) t.onStart('alice');
    expect(t.isOverBudget('alice')).toBe(false);
    t.onStart('alice');
    expect(t.isOverBudget('alice')).toBe(true);
    t.onComplete('alice');
    expect(t.isOverBudget('alice')).toBe(false);
    expect([t.isOverBudget(''), t.isOverBudget('bob')]).toEqual([false, false]);
  });

  it('tracker: budget 0 admits one at a time, counts never go negative, capacity is at least 1', () => {
    const t = new TenantTracker(new Map([['z', 0]]), 0);
    expect(t.totalCapacity).toBe(1);
    expect(t.isOverBudget('z')).toBe(false);
    t.onStart('z');
    expect(t.isOverBudget('z')).toBe(true);
    t.onComplete('z');
    t.onComplete('z');
    expect(t.inFlightOf('z')).toBe(0);
    t.onStart('');
    expect(t.inFlightOf('')).toBe(0);
  });

  it('tracker: refuses budgets outside [0, 1], naming the tenant', () => {
    expect(() => new TenantTracker({ alice: 1.5 }, 10)).toThrow(/tenant "alice"/);
    expect(() => new TenantTracker({ bob: NaN }, 10)).toThrow(RoutingConfigError);
  });
});

describe('registries', () => {
  const options: AdmissionPolicyOptions = {
    tokenBucketCapacity: 10_000,
    tokenBucketRefillRate: 1000,
    tierShedThreshold: 0,
    tierShedMinPriority: 0,
    gaieQdThreshold: 0,
    gaieKvThreshold: 0,
    priorities: new SloPriorityMap(),
  };

  it('list the reference names, sorted', () => {
    expect(ADMISSION_POLICY_NAMES).toEqual(['always-admit', 'gaie-legacy', 'reject-all', 'tier-shed', 'token-bucket']);
    expect(ROUTING_POLICY_NAMES).toEqual(['always-busiest', 'least-loaded', 'round-robin', 'weighted']);
  });

  it('treat the empty name as the default', () => {
    expect(makeAdmissionPolicy('', options).name).toBe('always-admit');
    expect(makeRoutingPolicy('', { scorers: null, blockSize: 16, rng: null, cachedBlocks: null }).name).toBe('round-robin');
  });

  it('give gaie-legacy its default thresholds when the options hold 0', () => {
    const g = makeAdmissionPolicy('gaie-legacy', options);
    expect(cls(g, 'sheddable', snaps(['i0', { queueDepth: 5 }])).admitted).toBe(false);
    expect(cls(g, 'sheddable', snaps(['i0', { queueDepth: 4, kvUtilization: 0.79 }])).admitted).toBe(true);
  });

  it('refuse unknown names with the valid list', () => {
    expect(() => makeAdmissionPolicy('always_admit', options)).toThrow(
      'unknown admission policy "always_admit"; valid: always-admit, gaie-legacy, reject-all, tier-shed, token-bucket',
    );
    expect(() => makeRoutingPolicy('round-robin ', { scorers: null, blockSize: 16, rng: null, cachedBlocks: null })).toThrow(RoutingConfigError);
  });
});
