/**
 * Cluster policy flags and the optional `--policy-config` bundle -> PolicySetup plus the instance scheduler,
 * preemption policy and SLO priority overrides, with the reference's precedence (an explicit flag beats the
 * bundle, the bundle beats the default) and its checks.
 */
import { resolveFlowControlFlags } from '../cluster/flow-control/flags.js';
import { validateScorerConfigs } from '../routing/scorer-config.js';
import { PREEMPTION_POLICIES, SCHEDULERS, type PreemptionPolicy, type SchedulerName } from '../instance/scheduler.js';
import { ConfigError } from './config-error.js';
import type { PolicySetup } from './setup.js';
import type { FlagValues } from './options.js';
import type { SimEnv } from './env.js';
import type { PolicyMetadata } from '../policy/spec.js';
import type { AutoscalerBundle, InstanceLifecycleBundle, NodePoolBundle } from '../policy/bundle.js';
import { showValue } from '../domain/errors.js';
import { TRACE_LEVELS, type TraceLevel } from './trace-levels.js';

export { TRACE_LEVELS, type TraceLevel } from './trace-levels.js';

export interface ResolvedPolicies {
  readonly policy: PolicySetup;
  /** The candidate's metadata from the bundle (outputs and traces carry it). */
  readonly metadata: PolicyMetadata | null;
  readonly traceLevel: TraceLevel;
  readonly scheduler: SchedulerName;
  readonly preemptionPolicy: PreemptionPolicy;
  readonly sloPriorities: Readonly<Record<string, number>>;
  /** The bundle's autoscaler, node pools and instance lifecycle sections (null without a bundle). */
  readonly scaling: BundleScaling | null;
  /** Some evolvable policy is code run by the fast engine (the run gets its wall-clock backstop). */
  readonly fastCode: boolean;
  /** `--policy-wall-clock-s` in ms (0 = none), and whether it was given. */
  readonly wallClock: { readonly ms: number; readonly explicit: boolean };
  /** `--policy-call-wall-clock-s` in ms (0 = none): the per-call bound of fast-engine code. */
  readonly callWallClockMs: number;
}

export interface BundleScaling {
  readonly file: string;
  readonly autoscaler: AutoscalerBundle;
  readonly nodePools: readonly NodePoolBundle[] | null;
  readonly instanceLifecycle: InstanceLifecycleBundle;
}

export async function resolvePolicyFlags(f: FlagValues, env: SimEnv): Promise<ResolvedPolicies> {
  const io = env;
  // The bundle reader pulls in the YAML library; load it only when it is needed.
  const { parsePolicyBundle, resolvePolicySettings, preparePolicies } = await import('../policy/index.js');
  const path = f.str('policy-config');
  const engineFlag = f.str('policy-engine');
  if (engineFlag !== '' && engineFlag !== 'fast' && engineFlag !== 'strict') throw new ConfigError('bad-flag', `--policy-engine must be fast or strict, got ${showValue(engineFlag)}`);
  const bundleDir = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
  const corrected = f.str('semantics') === 'corrected';
  const bundle = path === '' ? null : parsePolicyBundle(env.readText(path, '--policy-config'), path, {
    corrected,
    // Code files are relative to the bundle's folder (absolute paths stay as they are).
    readFile: (p) => env.readText(p.startsWith('/') ? p : `${bundleDir}${p}`, `--policy-config ${path}: code file`),
  });
  const flag = <T>(name: string, value: T): { value: T; explicit: boolean } => ({ value, explicit: f.changed(name) });
  const r = resolvePolicySettings(bundle, {
    'admission-policy': flag('admission-policy', f.str('admission-policy')),
    'token-bucket-capacity': flag('token-bucket-capacity', f.float('token-bucket-capacity')),
    'token-bucket-refill-rate': flag('token-bucket-refill-rate', f.float('token-bucket-refill-rate')),
    'routing-policy': flag('routing-policy', f.str('routing-policy')),
    'routing-scorers': flag('routing-scorers', f.str('routing-scorers')),
    'lora-scorer-weight': flag('lora-scorer-weight', f.float('lora-scorer-weight')),
    scheduler: flag('scheduler', f.str('scheduler')),
    'preemption-policy': flag('preemption-policy', f.str('preemption-policy')),
    'flow-control': flag('flow-control', f.bool('flow-control')),
    'dispatch-order': flag('dispatch-order', f.str('dispatch-order')),
    'slo-targets': flag('slo-targets', f.str('slo-targets')),
  }, { corrected });
  for (const w of r.warnings) io.warn(w);
  if (!Object.hasOwn(SCHEDULERS, r.scheduler)) throw new ConfigError('bad-flag', `unknown --scheduler ${showValue(r.scheduler)}; valid: ${Object.keys(SCHEDULERS).join(', ')}`);
  if (!Object.hasOwn(PREEMPTION_POLICIES, r.preemptionPolicy)) throw new ConfigError('bad-flag', `unknown --preemption-policy ${showValue(r.preemptionPolicy)}; valid: ${Object.keys(PREEMPTION_POLICIES).join(', ')}`);

  const wallClockS = f.float('policy-wall-clock-s');
  if (!(wallClockS >= 0) || !Number.isFinite(wallClockS)) throw new ConfigError('bad-flag', `--policy-wall-clock-s must be a finite number of seconds >= 0 (0 = none), got ${showValue(String(wallClockS))}`);
  const callWallClockS = f.float('policy-call-wall-clock-s');
  if (!(callWallClockS >= 0) || !Number.isFinite(callWallClockS)) throw new ConfigError('bad-flag', `--policy-call-wall-clock-s must be a finite number of seconds >= 0 (0 = none), got ${showValue(String(callWallClockS))}`);
  const traceLevel = f.str('trace-level');
  if (!(TRACE_LEVELS as readonly string[]).includes(traceLevel)) throw new ConfigError('bad-flag', `unknown --trace-level ${showValue(traceLevel)}; valid: ${TRACE_LEVELS.join(', ')}`);
  const traced = traceLevel === 'decisions' || traceLevel === 'full';
  const k = f.int('counterfactual-k');
  if (k < 0) throw new ConfigError('bad-flag', `--counterfactual-k must be >= 0, got ${k}`);
  if (!traced && k > 0) io.warn(`--counterfactual-k=${k} has no effect without --trace-level decisions`);
  if (!traced && f.bool('summarize-trace')) io.warn('--summarize-trace has no effect without --trace-level decisions');
  const nonNeg = (name: string): number => {
    const v = f.int(name);
    if (v < 0) throw new ConfigError('bad-flag', `--${name} must be >= 0, got ${v}`);
    return v;
  };
  const fc = resolveFlowControlFlags({
    flowControl: f.bool('flow-control'),
    saturationDetector: f.str('saturation-detector'),
    dispatchOrder: f.str('dispatch-order'),
    sloTargets: f.str('slo-targets'),
    maxGatewayQueueDepth: f.int('max-gateway-queue-depth'),
    queueDepthThreshold: f.float('queue-depth-threshold'),
    kvCacheUtilThreshold: f.float('kv-cache-util-threshold'),
    maxConcurrency: f.int('max-concurrency'),
    perBandCapacity: f.int('per-band-capacity'),
    usageLimitThreshold: f.float('usage-limit-threshold'),
    fairnessPolicy: f.str('fairness-policy'),
    requestTtl: f.int('request-ttl'),
    queueShedding: f.bool('queue-shedding'),
    dispatchTickInterval: f.int('dispatch-tick-interval'),
    inFlightEviction: f.bool('in-flight-eviction'),
    bundleSloTargets: bundle === null ? null : r.sloTargets,
  });
  for (const w of fc.warnings) io.warn(w);
  if (!fc.ok) throw new ConfigError('bad-flag', fc.error);
  if (fc.config !== null && r.admission.policy !== 'always-admit') {
    io.warn(`--flow-control replaces the admission policy: admission policy ${showValue(r.admission.policy)} (${f.changed('admission-policy') ? '--admission-policy' : `from ${path}`}) is ignored; drop it, or drop --flow-control`);
  }

  const ev = bundle?.evolvable ?? null;
  if (ev !== null && ev.specs.admission !== undefined && fc.config !== null) {
    throw new ConfigError('bad-flag', `--flow-control replaces the admission policy, but ${path} defines an evolvable admission policy; use one or the other`);
  }
  // An explicit flag beats the bundle (the reference's precedence), evolvable sections included.
  let specs = ev?.specs ?? {};
  for (const [point, flagName] of [['admission', 'admission-policy'], ['routing', 'routing-policy'], ['scheduler', 'scheduler'], ['disaggregation', 'pd-decider'], ['encode', 'encode-decider']] as const) {
    if (specs[point] !== undefined && f.changed(flagName)) {
      io.warn(`--${flagName} overrides the ${point} policy of ${path}`);
      const { [point]: _dropped, ...rest } = specs;
      specs = rest;
    }
  }
  const prepared = ev !== null && Object.keys(specs).length > 0 ? await preparePolicies({ metadata: ev.metadata, specs }, engineFlag === '' ? null : engineFlag, wallClockS * 1000, callWallClockS * 1000) : null;
  const a = r.admission;
  env.info?.(`policies: admission ${fc.config === null ? a.policy : 'flow control'}, routing ${r.routing.policy}, scheduler ${r.scheduler}, preemption ${r.preemptionPolicy}` +
    `${prepared === null ? '' : `, evolvable ${Object.keys(specs).join(', ')}`}${path === '' ? '' : ` (from ${path} and the flags)`}`);
  return {
    metadata: ev?.metadata ?? null,
    scheduler: r.scheduler as SchedulerName,
    preemptionPolicy: r.preemptionPolicy as PreemptionPolicy,
    sloPriorities: Object.fromEntries(r.sloPriorityOverrides ?? []),
    scaling: bundle === null ? null : { file: path, autoscaler: bundle.autoscaler, nodePools: bundle.nodePools, instanceLifecycle: bundle.instanceLifecycle },
    policy: {
      admissionPolicy: a.policy,
      tokenBucketCapacity: a.tokenBucketCapacity,
      tokenBucketRefillRate: a.tokenBucketRefillRate,
      tierShedThreshold: a.tierShedThreshold,
      tierShedMinPriority: a.tierShedMinPriority,
      gaieQdThreshold: a.gaieQdThreshold,
      gaieKvThreshold: a.gaieKvThreshold,
      tenantBudgets: r.tenantBudgets,
      routingPolicy: r.routing.policy,
      routingScorers: r.routing.scorers.length === 0 ? null : validateScorerConfigs(r.routing.scorers),
      snapshotRefreshInterval: nonNeg('snapshot-refresh-interval'),
      cacheSignalDelay: nonNeg('cache-signal-delay'),
      traceDecisions: traced,
      counterfactualK: k,
      flowControl: fc.config,
      evolvable: prepared,
      // The JSON report counts shadow divergences, so the router keeps its ShadowKV whenever it is printed;
      // the reference text format has no use for it.
      routerSignals: traced || f.str('output-format') !== 'reference',
    },
    traceLevel: traceLevel as TraceLevel,
    wallClock: { ms: wallClockS * 1000, explicit: f.changed('policy-wall-clock-s') },
    callWallClockMs: callWallClockS * 1000,
    fastCode: prepared !== null && Object.values(specs).some((sp) => sp?.type === 'code' && (engineFlag === '' ? sp.engine : engineFlag) === 'fast'),
  };
}
