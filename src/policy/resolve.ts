/**
 * Merges a parsed policy bundle with the policy flags into the settings the cluster is built from, with the
 * reference's precedence (its flag/bundle merge shared by `run` and `replay`):
 * - admission policy, token-bucket capacity and refill rate, routing policy, scheduler, preemption policy:
 *   an explicitly given flag wins, else a value set in the bundle, else the flag's value (its default);
 * - tier-shed threshold and min priority, GAIE thresholds, tenant budgets, SLO priority overrides: bundle only
 *   (there are no flags); tier_shed_min_priority defaults to 3 only when the bundle itself says
 *   `policy: tier-shed`, otherwise it stays 0;
 * - scorers (weighted routing only): non-empty `--routing-scorers` wins, else the bundle's list, else the
 *   default profile; an explicit `--lora-scorer-weight` appends lora-affinity;
 * - SLO targets: the bundle's, replaced by `--slo-targets` only when `--flow-control` is on.
 * Checks that need the merged values (token-bucket > 0, names coming from flags) run after merging, in the
 * reference's order. Nothing is printed: warnings are returned.
 */
import { locateBundle } from './bundle.js';
import type { PolicyBundle } from './bundle.js';
import { PolicyConfigError, goFloatText } from './errors.js';
import type { PolicyPath } from './errors.js';
import { DEFAULT_SCORERS, isKnownName, nameSets } from './names.js';
import type { PolicyNameSets, ScorerSetting } from './names.js';
import { composeLoraScorer, parseScorerFlag } from './scorer-flag.js';
import { parseSloTargetsFlag } from './slo-targets-flag.js';
import { showValue } from '../domain/errors.js';

export interface FlagSetting<T> {
  readonly value: T;
  /** Given on the command line (cobra's Changed), even if equal to the default. */
  readonly explicit: boolean;
}

/** The flags that take part in policy resolution; a missing entry is its default, not explicit. */
export interface PolicyFlags {
  readonly 'admission-policy'?: FlagSetting<string>;
  readonly 'token-bucket-capacity'?: FlagSetting<number>;
  readonly 'token-bucket-refill-rate'?: FlagSetting<number>;
  readonly 'routing-policy'?: FlagSetting<string>;
  readonly 'routing-scorers'?: FlagSetting<string>;
  readonly 'lora-scorer-weight'?: FlagSetting<number>;
  readonly scheduler?: FlagSetting<string>;
  readonly 'preemption-policy'?: FlagSetting<string>;
  readonly 'flow-control'?: FlagSetting<boolean>;
  readonly 'dispatch-order'?: FlagSetting<string>;
  readonly 'slo-targets'?: FlagSetting<string>;
}

type FlagValues = { readonly [K in keyof PolicyFlags]-?: NonNullable<PolicyFlags[K]>['value'] };

/** The reference's flag defaults. */
export const POLICY_FLAG_DEFAULTS: FlagValues = {
  'admission-policy': 'always-admit',
  'token-bucket-capacity': 10000,
  'token-bucket-refill-rate': 1000,
  'routing-policy': 'round-robin',
  'routing-scorers': '',
  'lora-scorer-weight': 0,
  scheduler: 'fcfs',
  'preemption-policy': 'fcfs',
  'flow-control': false,
  'dispatch-order': 'fifo',
  'slo-targets': '',
};

export type SettingSource = 'flag' | 'bundle' | 'default';

export interface ResolvedAdmission {
  /** May be "" when `--admission-policy ""` was given; the cluster treats that as always-admit. */
  readonly policy: string;
  readonly tokenBucketCapacity: number;
  readonly tokenBucketRefillRate: number;
  /** Overload = max instance load > threshold; 0 = any load. */
  readonly tierShedThreshold: number;
  /** Under overload, classes with priority below this are rejected. */
  readonly tierShedMinPriority: number;
  readonly gaieQdThreshold: number;
  readonly gaieKvThreshold: number;
}

export interface ResolvedPolicySettings {
  readonly admission: ResolvedAdmission;
  /** Tenant → capacity fraction; null = no tenant-budget decorator at all. */
  readonly tenantBudgets: ReadonlyMap<string, number> | null;
  /** SLO class → priority overrides applied on top of the default map; null = defaults only. */
  readonly sloPriorityOverrides: ReadonlyMap<string, number> | null;
  /** SLO class → TTFT target (µs) for slo-deadline gateway dispatch; null = none. */
  readonly sloTargets: ReadonlyMap<string, number> | null;
  readonly routing: {
    readonly policy: string;
    /** The effective weighted profile (defaults filled in); empty unless the policy is `weighted`. */
    readonly scorers: readonly ScorerSetting[];
  };
  readonly scheduler: string;
  readonly preemptionPolicy: string;
  /** Where each setting came from, for logging and tests. */
  readonly sources: Readonly<Record<SourceKey, SettingSource>>;
  /** The bundle's warnings followed by the merge's own; print them, in order, once. */
  readonly warnings: readonly string[];
}

export type SourceKey =
  | 'admissionPolicy' | 'tokenBucketCapacity' | 'tokenBucketRefillRate' | 'tierShedThreshold' | 'tierShedMinPriority'
  | 'gaieQdThreshold' | 'gaieKvThreshold' | 'tenantBudgets' | 'sloPriorityOverrides' | 'sloTargets'
  | 'routingPolicy' | 'routingScorers' | 'scheduler' | 'preemptionPolicy';

export interface ResolvePolicyOptions {
  readonly names?: Partial<PolicyNameSets>;
  /**
   * --semantics corrected: tier_shed_min_priority defaults to 3 whenever tier-shed is the effective policy,
   * `--slo-targets` without `--flow-control` is an error, and `--routing-scorers` is parsed (and checked)
   * whatever the routing policy.
   */
  readonly corrected?: boolean;
}

const GAIE_QD_DEFAULT = 5;
const GAIE_KV_DEFAULT = 0.8;
/** What tier-shed protects when the bundle picks it without a min priority: critical (4) and standard (3). */
const TIER_SHED_BUNDLE_MIN_PRIORITY = 3;

export function resolvePolicySettings(
  bundle: PolicyBundle | null,
  flags: PolicyFlags,
  options: ResolvePolicyOptions = {},
): ResolvedPolicySettings {
  const names = nameSets(options.names);
  const corrected = options.corrected === true;
  const warnings: string[] = [...(bundle?.warnings ?? [])];
  const sources = {} as Record<SourceKey, SettingSource>;
  const flag = <K extends keyof PolicyFlags>(k: K): FlagSetting<FlagValues[K]> =>
    (flags[k] as FlagSetting<FlagValues[K]> | undefined) ?? { value: POLICY_FLAG_DEFAULTS[k], explicit: false };
  // Flag-backed setting: explicit flag > bundle value (when set) > the flag's own value.
  const pick = <K extends keyof PolicyFlags>(key: SourceKey, k: K, fromBundle: FlagValues[K] | null): FlagValues[K] => {
    const f = flag(k);
    if (!f.explicit && fromBundle !== null) {
      sources[key] = 'bundle';
      return fromBundle;
    }
    sources[key] = f.explicit ? 'flag' : 'default';
    return f.value;
  };
  const bundleOnly = <T>(key: SourceKey, v: T | null | undefined, fallback: T): T => {
    sources[key] = v === null || v === undefined ? 'default' : 'bundle';
    return v ?? fallback;
  };
  const ba = bundle?.admission;
  const nonEmpty = (s: string | undefined): string | null => (s === undefined || s === '' ? null : s);

  const admissionPolicy = pick('admissionPolicy', 'admission-policy', nonEmpty(ba?.policy));
  const tokenBucketCapacity = pick('tokenBucketCapacity', 'token-bucket-capacity', ba?.tokenBucketCapacity ?? null);
  const tokenBucketRefillRate = pick('tokenBucketRefillRate', 'token-bucket-refill-rate', ba?.tokenBucketRefillRate ?? null);
  const tierShedThreshold = bundleOnly('tierShedThreshold', ba?.tierShedThreshold, 0);
  // The reference keys this on the bundle's own policy, not the merged one: `--admission-policy tier-shed`
  // alone keeps 0. Corrected semantics key it on the policy in effect.
  const minPriDefault = (corrected ? admissionPolicy : ba?.policy) === 'tier-shed' ? TIER_SHED_BUNDLE_MIN_PRIORITY : 0;
  const tierShedMinPriority = bundleOnly('tierShedMinPriority', ba?.tierShedMinPriority, minPriDefault);
  const tenantBudgets = bundleOnly('tenantBudgets', bundle?.tenantBudgets, null);
  const sloPriorityOverrides = bundleOnly('sloPriorityOverrides', ba?.sloPriorities, null);
  let sloTargets = bundleOnly('sloTargets', ba?.sloTargets, null);
  // The bundle cannot hold a zero GAIE threshold (validation), so 0 only ever means "not set".
  const gaieQdThreshold = bundleOnly('gaieQdThreshold', ba?.gaieQdThreshold, GAIE_QD_DEFAULT);
  const gaieKvThreshold = bundleOnly('gaieKvThreshold', ba?.gaieKvThreshold, GAIE_KV_DEFAULT);
  const routingPolicy = pick('routingPolicy', 'routing-policy', nonEmpty(bundle?.routing.policy));
  const scheduler = pick('scheduler', 'scheduler', nonEmpty(bundle?.scheduler));
  const preemptionPolicy = pick('preemptionPolicy', 'preemption-policy', nonEmpty(bundle?.preemption.policy));

  // Where a merged value came from, for error messages: the flag, or the bundle's line:col.
  const origin = (key: SourceKey, flagName: string, path: PolicyPath) => {
    const loc = bundle === null ? undefined : locateBundle(bundle);
    if (sources[key] === 'bundle' && loc !== undefined) return { where: { file: loc.file, pos: loc.position(path) }, field: path.join('.') };
    return { where: null, field: `--${flagName}` };
  };
  const fail = (key: SourceKey, flagName: string, path: PolicyPath, problem: string, fix: string): never => {
    const o = origin(key, flagName, path);
    throw new PolicyConfigError('POLICY_FLAG', o.where, o.field, problem, fix);
  };

  if (admissionPolicy === 'token-bucket') {
    if (!(tokenBucketCapacity > 0 && Number.isFinite(tokenBucketCapacity))) {
      fail('tokenBucketCapacity', 'token-bucket-capacity', ['admission', 'token_bucket_capacity'],
        `token-bucket capacity must be a finite value > 0, got ${goFloatText(tokenBucketCapacity)}`, 'give the bucket size in input tokens, e.g. 10000');
    }
    if (!(tokenBucketRefillRate > 0 && Number.isFinite(tokenBucketRefillRate))) {
      fail('tokenBucketRefillRate', 'token-bucket-refill-rate', ['admission', 'token_bucket_refill_rate'],
        `token-bucket refill rate must be a finite value > 0, got ${goFloatText(tokenBucketRefillRate)}`, 'give tokens per second, e.g. 1000');
    }
  }
  const checkName = (key: SourceKey, flagName: string, path: PolicyPath, value: string, list: readonly string[], what: string): void => {
    if (!isKnownName(list, value)) fail(key, flagName, path, `unknown ${what} ${showValue(value)}`, `use one of: ${list.join(', ')}`);
  };
  checkName('admissionPolicy', 'admission-policy', ['admission', 'policy'], admissionPolicy, names.admission, 'admission policy');
  checkName('routingPolicy', 'routing-policy', ['routing', 'policy'], routingPolicy, names.routing, 'routing policy');
  checkName('scheduler', 'scheduler', ['scheduler'], scheduler, names.schedulers, 'scheduler');
  checkName('preemptionPolicy', 'preemption-policy', ['preemption', 'policy'], preemptionPolicy, names.preemption, 'preemption policy');

  if (corrected && !flag('flow-control').value && flag('slo-targets').value !== '') {
    throw new PolicyConfigError('POLICY_FLAG', null, '--slo-targets', 'has no effect without --flow-control (it sets the gateway queue\'s slo-deadline targets)', 'add --flow-control --dispatch-order slo-deadline, or drop --slo-targets');
  }
  if (flag('flow-control').value) {
    const fromFlag = parseSloTargetsFlag(flag('slo-targets').value);
    if (fromFlag !== null) {
      sloTargets = fromFlag;
      sources.sloTargets = 'flag';
    }
    if (sloTargets !== null && flag('dispatch-order').value !== 'slo-deadline') {
      warnings.push('SLO targets have no effect without --dispatch-order slo-deadline');
    }
  }

  const scorers = resolveScorers(routingPolicy, bundle?.routing.scorers ?? null, flag, names, sources, warnings, corrected);
  if (admissionPolicy === 'tier-shed' && tierShedMinPriority === 0) {
    warnings.push('tier-shed with tier_shed_min_priority 0 rejects only sheddable classes (priority < 0) under overload; ' +
      'set admission.tier_shed_min_priority: 3 in the policy config to protect standard and critical only');
  }
  return {
    admission: {
      policy: admissionPolicy, tokenBucketCapacity, tokenBucketRefillRate, tierShedThreshold, tierShedMinPriority,
      gaieQdThreshold, gaieKvThreshold,
    },
    tenantBudgets,
    sloPriorityOverrides,
    sloTargets,
    routing: { policy: routingPolicy, scorers },
    scheduler,
    preemptionPolicy,
    sources,
    warnings,
  };
}

function resolveScorers(
  routingPolicy: string,
  fromBundle: readonly ScorerSetting[] | null,
  flag: <K extends keyof PolicyFlags>(k: K) => FlagSetting<FlagValues[K]>,
  names: PolicyNameSets,
  sources: Record<SourceKey, SettingSource>,
  warnings: string[],
  corrected: boolean,
): readonly ScorerSetting[] {
  const text = flag('routing-scorers').value;
  const lora = flag('lora-scorer-weight');
  sources.routingScorers = 'default';
  if (routingPolicy !== 'weighted') {
    // The flag text is not even parsed then (reference), so a malformed --routing-scorers is only a warning.
    if (corrected) parseScorerFlag(text, names.scorers);
    if (text !== '') warnings.push(`--routing-scorers has no effect when the routing policy is ${showValue(routingPolicy)} (only weighted uses it)`);
    if (lora.explicit) warnings.push(`--lora-scorer-weight has no effect when the routing policy is ${showValue(routingPolicy)} (only weighted uses it)`);
    return [];
  }
  let profile: readonly ScorerSetting[] = [];
  const parsed = parseScorerFlag(text, names.scorers);
  if (parsed !== null) {
    profile = parsed;
    sources.routingScorers = 'flag';
  } else if (fromBundle !== null && fromBundle.length > 0) {
    profile = fromBundle;
    sources.routingScorers = 'bundle';
  }
  if (lora.explicit) profile = composeLoraScorer(profile, lora.value);
  return profile.length > 0 ? profile.map((s) => ({ ...s })) : DEFAULT_SCORERS.map((s) => ({ ...s }));
}
