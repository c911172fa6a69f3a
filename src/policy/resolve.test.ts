import { describe, expect, it } from 'vitest';
import { parsePolicyBundle } from './bundle.js';
import { PolicyConfigError } from './errors.js';
import { DEFAULT_SCORERS } from './names.js';
import { POLICY_FLAG_DEFAULTS, resolvePolicySettings } from './resolve.js';
import type { PolicyFlags, ResolvedPolicySettings, SourceKey } from './resolve.js';

const FILE = 'policy.yaml';
const bundleOf = (text: string) => parsePolicyBundle(text, FILE);

function errorOf(fn: () => unknown): PolicyConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PolicyConfigError) return e;
    throw e;
  }
  throw new Error('expected a PolicyConfigError');
}

/** One flag-backed setting: the flag, how the bundle sets it, a bundle value, a flag value, and the reader. */
interface FlagBacked {
  readonly flag: keyof PolicyFlags;
  readonly source: SourceKey;
  readonly yaml: string;
  readonly bundleValue: string | number;
  readonly flagValue: string | number;
  readonly read: (r: ResolvedPolicySettings) => string | number;
}

const FLAG_BACKED: readonly FlagBacked[] = [
  { flag: 'admission-policy', source: 'admissionPolicy', yaml: 'admission: {policy: reject-all}', bundleValue: 'reject-all', flagValue: 'tier-shed', read: (r) => r.admission.policy },
  { flag: 'token-bucket-capacity', source: 'tokenBucketCapacity', yaml: 'admission: {token_bucket_capacity: 555}', bundleValue: 555, flagValue: 42, read: (r) => r.admission.tokenBucketCapacity },
  { flag: 'token-bucket-refill-rate', source: 'tokenBucketRefillRate', yaml: 'admission: {token_bucket_refill_rate: 7.5}', bundleValue: 7.5, flagValue: 3, read: (r) => r.admission.tokenBucketRefillRate },
  { flag: 'routing-policy', source: 'routingPolicy', yaml: 'routing: {policy: always-busiest}', bundleValue: 'always-busiest', flagValue: 'least-loaded', read: (r) => r.routing.policy },
  { flag: 'scheduler', source: 'scheduler', yaml: 'scheduler: sjf', bundleValue: 'sjf', flagValue: 'reverse-priority', read: (r) => r.scheduler },
  { flag: 'preemption-policy', source: 'preemptionPolicy', yaml: 'preemption: {policy: priority}', bundleValue: 'priority', flagValue: 'fcfs', read: (r) => r.preemptionPolicy },
];

describe('resolvePolicySettings: flag-backed settings (explicit flag > bundle > default)', () => {
  for (const f of FLAG_BACKED) {
    const def = POLICY_FLAG_DEFAULTS[f.flag];
    const flagSet = (explicit: boolean, value: string | number = f.flagValue): PolicyFlags => ({ [f.flag]: { value, explicit } });
    const rows: [string, string | null, PolicyFlags, string | number, string][] = [
      ['no bundle, flag absent → default', null, {}, def as string | number, 'default'],
      ['no bundle, flag explicit → flag', null, flagSet(true), f.flagValue, 'flag'],
      ['bundle sets it, flag absent → bundle', f.yaml, {}, f.bundleValue, 'bundle'],
      ['bundle sets it, flag given but not explicit → bundle', f.yaml, flagSet(false, def as string | number), f.bundleValue, 'bundle'],
      ['bundle sets it, flag explicit → flag', f.yaml, flagSet(true), f.flagValue, 'flag'],
      ['bundle sets it, flag explicit at its default → flag', f.yaml, flagSet(true, def as string | number), def as string | number, 'flag'],
      ['bundle leaves it out → default', 'priority: {policy: constant}', {}, def as string | number, 'default'],
    ];
    for (const [label, yaml, flags, want, source] of rows) {
      it(`--${f.flag}: ${label}`, () => {
        const r = resolvePolicySettings(yaml === null ? null : bundleOf(`${yaml}\n`), flags);
        expect(f.read(r)).toBe(want);
        expect(r.sources[f.source]).toBe(source);
      });
    }
  }
});

describe('resolvePolicySettings: bundle-only admission settings', () => {
  it('defaults without a bundle', () => {
    const r = resolvePolicySettings(null, {});
    expect(r.admission).toEqual({
      policy: 'always-admit', tokenBucketCapacity: 10000, tokenBucketRefillRate: 1000, tierShedThreshold: 0,
      tierShedMinPriority: 0, gaieQdThreshold: 5, gaieKvThreshold: 0.8,
    });
    expect(r.tenantBudgets).toBeNull();
    expect(r.sloPriorityOverrides).toBeNull();
    expect(r.sloTargets).toBeNull();
    expect(r.warnings).toEqual([]);
    expect(Object.keys(r.sources).sort()).toEqual([
      'admissionPolicy', 'gaieKvThreshold', 'gaieQdThreshold', 'preemptionPolicy', 'routingPolicy', 'routingScorers', 'scheduler',
      'sloPriorityOverrides', 'sloTargets', 'tenantBudgets', 'tierShedMinPriority', 'tierShedThreshold', 'tokenBucketCapacity',
      'tokenBucketRefillRate',
    ]);
    expect(Object.values(r.sources).every((s) => s === 'default')).toBe(true);
  });

  it('takes tier-shed, GAIE, tenant and SLO settings from the bundle', () => {
    const r = resolvePolicySettings(bundleOf(`
admission:
  policy: gaie-legacy
  tier_shed_threshold: 9
  tier_shed_min_priority: -2
  gaie_qd_threshold: 3
  gaie_kv_threshold: 0.6
  slo_priorities: {batch: 2}
  slo_targets: {critical: 5000}
tenant_budgets: {t: 0.4}
`), {});
    expect(r.admission).toMatchObject({ tierShedThreshold: 9, tierShedMinPriority: -2, gaieQdThreshold: 3, gaieKvThreshold: 0.6 });
    expect(r.sloPriorityOverrides).toEqual(new Map([['batch', 2]]));
    expect(r.sloTargets).toEqual(new Map([['critical', 5000]]));
    expect(r.tenantBudgets).toEqual(new Map([['t', 0.4]]));
    expect(r.sources).toMatchObject({ tierShedThreshold: 'bundle', gaieKvThreshold: 'bundle', tenantBudgets: 'bundle', sloPriorityOverrides: 'bundle' });
  });

  it('tier_shed_min_priority defaults to 3 only when the bundle itself picks tier-shed', () => {
    const fromBundle = resolvePolicySettings(bundleOf('admission: {policy: tier-shed}\n'), {});
    expect(fromBundle.admission.tierShedMinPriority).toBe(3);
    expect(fromBundle.warnings).toEqual([]);
    // The flag overriding the policy does not undo the bundle-triggered default.
    const overridden = resolvePolicySettings(bundleOf('admission: {policy: tier-shed}\n'), { 'admission-policy': { value: 'always-admit', explicit: true } });
    expect(overridden.admission).toMatchObject({ policy: 'always-admit', tierShedMinPriority: 3 });
  });

  it('tier-shed picked by the flag alone keeps min priority 0 and warns', () => {
    for (const bundle of [null, bundleOf('admission: {policy: always-admit}\n')]) {
      const r = resolvePolicySettings(bundle, { 'admission-policy': { value: 'tier-shed', explicit: true } });
      expect(r.admission).toMatchObject({ policy: 'tier-shed', tierShedMinPriority: 0, tierShedThreshold: 0 });
      expect(r.warnings.some((w) => w.includes('tier_shed_min_priority 0'))).toBe(true);
    }
  });

  it('keeps an empty tenant_budgets mapping (decorator on, no budgets) distinct from none', () => {
    expect(resolvePolicySettings(bundleOf('tenant_budgets: {}\n'), {}).tenantBudgets).toEqual(new Map());
  });
});

describe('resolvePolicySettings: SLO targets', () => {
  const bundle = bundleOf('admission: {slo_targets: {critical: 100}}\n');
  it('ignores --slo-targets without flow control', () => {
    const r = resolvePolicySettings(bundle, { 'slo-targets': { value: 'critical=5', explicit: true } });
    expect(r.sloTargets).toEqual(new Map([['critical', 100]]));
    expect(r.sources.sloTargets).toBe('bundle');
  });
  it('lets --slo-targets replace the bundle when flow control is on', () => {
    const r = resolvePolicySettings(bundle, {
      'flow-control': { value: true, explicit: true },
      'dispatch-order': { value: 'slo-deadline', explicit: true },
      'slo-targets': { value: ' standard = 7 , critical=9', explicit: true },
    });
    expect(r.sloTargets).toEqual(new Map([['standard', 7], ['critical', 9]]));
    expect(r.sources.sloTargets).toBe('flag');
    expect(r.warnings).toEqual([]);
  });
  it('warns when targets are set but the dispatch order is not slo-deadline', () => {
    const r = resolvePolicySettings(bundle, { 'flow-control': { value: true, explicit: true } });
    expect(r.warnings).toEqual(['SLO targets have no effect without --dispatch-order slo-deadline']);
  });
  it('rejects malformed --slo-targets under flow control', () => {
    const flags: PolicyFlags = { 'flow-control': { value: true, explicit: true }, 'slo-targets': { value: 'critical=0', explicit: true } };
    const e = errorOf(() => resolvePolicySettings(null, flags));
    expect(e.message).toBe('--slo-targets: target for "critical" must be a positive integer (µs), got 0; give the TTFT target in whole microseconds');
  });
});

describe('resolvePolicySettings: weighted-routing scorers', () => {
  const weighted: PolicyFlags = { 'routing-policy': { value: 'weighted', explicit: true } };
  const bundleScorers = 'routing:\n  scorers:\n    - {name: load-balance, weight: 3}\n';
  it('uses the default profile when nothing gives one', () => {
    const r = resolvePolicySettings(null, weighted);
    expect(r.routing.scorers).toEqual(DEFAULT_SCORERS);
    expect(r.sources.routingScorers).toBe('default');
  });
  it('takes the bundle list', () => {
    const r = resolvePolicySettings(bundleOf(bundleScorers), weighted);
    expect(r.routing.scorers).toEqual([{ name: 'load-balance', weight: 3 }]);
    expect(r.sources.routingScorers).toBe('bundle');
  });
  it('lets a non-empty --routing-scorers beat the bundle', () => {
    const r = resolvePolicySettings(bundleOf(bundleScorers), { ...weighted, 'routing-scorers': { value: 'queue-depth:2, vllm-dp:1', explicit: true } });
    expect(r.routing.scorers).toEqual([{ name: 'queue-depth', weight: 2 }, { name: 'vllm-dp', weight: 1 }]);
    expect(r.sources.routingScorers).toBe('flag');
  });
  it('appends lora-affinity for an explicit --lora-scorer-weight, over the default profile if needed', () => {
    const r = resolvePolicySettings(null, { ...weighted, 'lora-scorer-weight': { value: 0.5, explicit: true } });
    expect(r.routing.scorers).toEqual([...DEFAULT_SCORERS, { name: 'lora-affinity', weight: 0.5 }]);
  });
  it('rejects lora-affinity given twice, and a non-positive LoRA weight', () => {
    const twice = { ...weighted, 'routing-scorers': { value: 'lora-affinity:1', explicit: true }, 'lora-scorer-weight': { value: 1, explicit: true } };
    expect(errorOf(() => resolvePolicySettings(null, twice)).field).toBe('--lora-scorer-weight');
    const zero = { ...weighted, 'lora-scorer-weight': { value: 0, explicit: true } };
    expect(errorOf(() => resolvePolicySettings(null, zero)).message).toMatch(/^--lora-scorer-weight: weight must be a finite positive number, got 0;/);
  });
  it('rejects a bad --routing-scorers under weighted routing', () => {
    const e = errorOf(() => resolvePolicySettings(null, { ...weighted, 'routing-scorers': { value: 'queue-depth=2', explicit: true } }));
    expect(e.message).toMatch(/^--routing-scorers: invalid scorer entry "queue-depth=2" \(expected name:weight\);/);
  });
  it('ignores scorers (with warnings for flags) when routing is not weighted', () => {
    const r = resolvePolicySettings(bundleOf(bundleScorers), {
      'routing-scorers': { value: 'not a list', explicit: true },
      'lora-scorer-weight': { value: 2, explicit: true },
    });
    expect(r.routing).toEqual({ policy: 'round-robin', scorers: [] });
    expect(r.warnings).toHaveLength(2);
    expect(r.warnings[0]).toMatch(/^--routing-scorers has no effect when the routing policy is "round-robin"/);
  });
});

describe('resolvePolicySettings: checks on merged values', () => {
  it('token-bucket needs capacity > 0, citing the bundle line when the value came from there', () => {
    const b = bundleOf('admission:\n  policy: token-bucket\n  token_bucket_capacity: 0\n');
    const e = errorOf(() => resolvePolicySettings(b, {}));
    expect(e.message).toBe('policy.yaml:3:26: admission.token_bucket_capacity: token-bucket capacity must be a finite value > 0, got 0; give the bucket size in input tokens, e.g. 10000');
    // An explicit flag supersedes the bad bundle value.
    expect(resolvePolicySettings(b, { 'token-bucket-capacity': { value: 10, explicit: true } }).admission.tokenBucketCapacity).toBe(10);
  });
  it('token-bucket needs refill rate > 0, citing the flag when it came from there', () => {
    const flags: PolicyFlags = { 'admission-policy': { value: 'token-bucket', explicit: true }, 'token-bucket-refill-rate': { value: -1, explicit: true } };
    expect(errorOf(() => resolvePolicySettings(null, flags)).field).toBe('--token-bucket-refill-rate');
  });
  it('does not check token-bucket values for other admission policies', () => {
    expect(() => resolvePolicySettings(bundleOf('admission: {token_bucket_capacity: 0}\n'), {})).not.toThrow();
  });
  it('rejects unknown names coming from flags', () => {
    const e = errorOf(() => resolvePolicySettings(bundleOf('scheduler: sjf\n'), { scheduler: { value: 'edf', explicit: true } }));
    expect(e.code).toBe('POLICY_FLAG');
    expect(e.message).toBe('--scheduler: unknown scheduler "edf"; use one of: fcfs, priority-fcfs, reverse-priority, sjf');
  });
  it('passes the bundle warnings through first', () => {
    const r = resolvePolicySettings(bundleOf('priority: {policy: inverted-slo}\n'), {});
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^policy\.yaml:1:20: priority\.policy:/);
  });
});
