/**
 * The admission contract, run against every registered admission policy, bare and wrapped in the tenant
 * budget decorator: a boolean decision with a reason that is empty exactly when admitted (for the built-in
 * policies), no failure without instances, no mutation of its inputs, and determinism for the same sequence.
 */
import { describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../domain/slo.js';
import { tenantBudget } from './admission.js';
import { ADMISSION_POLICY_NAMES, makeAdmissionPolicy, type AdmissionPolicyOptions } from './registry.js';
import { TenantTracker } from './tenant.js';
import { makeRequest, scenarioSnapshots } from './test-fixtures.js';
import type { AdmissionPolicy, RouterState } from './types.js';

const options: AdmissionPolicyOptions = {
  tokenBucketCapacity: 60,
  tokenBucketRefillRate: 200,
  tierShedThreshold: 2,
  tierShedMinPriority: 3,
  gaieQdThreshold: 0,
  gaieKvThreshold: 0,
  priorities: new SloPriorityMap(),
};

interface Subject {
  readonly label: string;
  readonly make: () => AdmissionPolicy;
}

const subjects: Subject[] = ADMISSION_POLICY_NAMES.flatMap((name): Subject[] => [
  { label: name, make: () => makeAdmissionPolicy(name, options) },
  {
    label: `tenant-budget(${name})`,
    make: () => {
      const tracker = new TenantTracker({ alice: 0.01 }, 100);
      for (let i = 0; i < 3; i++) tracker.onStart('alice');
      return tenantBudget(makeAdmissionPolicy(name, options), tracker);
    },
  },
]);

const classes = ['critical', 'standard', '', 'batch', 'sheddable', 'background', 'unknown-class'];
const tenants = ['', 'alice', 'bob'];

/** A deterministic mix of classes, tenants, prompt lengths, loads and clock values. */
function sequence(policy: AdmissionPolicy, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const req = makeRequest(`r${i}`, new Array<number>((i * 13) % 50).fill(7), {
      sloClass: classes[i % classes.length] as string,
      tenantId: tenants[i % tenants.length] as string,
    });
    const snapshots = scenarioSnapshots(i, [i % 3, (i * 2) % 5, 0], true);
    const state: RouterState = Object.freeze({ snapshots: Object.freeze(snapshots.map((s) => Object.freeze(s))), clock: i * 20_000 });
    const d = policy.admit(req, state);
    out.push(`${d.admitted}|${d.reason}`);
  }
  return out;
}

describe.each(subjects)('admission policy contract: $label', ({ make }) => {
  it('returns a boolean decision whose reason is empty exactly when admitted', () => {
    for (const line of sequence(make(), 60)) {
      const [admitted, reason] = line.split('|') as [string, string];
      expect(['true', 'false']).toContain(admitted);
      expect(reason === '').toBe(admitted === 'true');
    }
  });

  it('decides without any instance', () => {
    const p = make();
    for (const sloClass of classes) {
      const d = p.admit(makeRequest('r', [1, 2], { sloClass, tenantId: 'alice' }), { snapshots: [], clock: 0 });
      expect(typeof d.admitted).toBe('boolean');
    }
  });

  it('leaves the request untouched', () => {
    const req = makeRequest('r', [1, 2, 3], { sloClass: 'batch', tenantId: 'alice' });
    make().admit(req, { snapshots: scenarioSnapshots(1, [1, 2, 3], true), clock: 5 });
    expect([req.id, req.sloClass, req.tenantId, req.inputLen, req.outcome]).toEqual(['r', 'batch', 'alice', 3, '']);
  });

  it('is deterministic for the same sequence', () => {
    expect(sequence(make(), 60)).toEqual(sequence(make(), 60));
  });
});
