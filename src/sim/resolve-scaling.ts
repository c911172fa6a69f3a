/**
 * The autoscaler, node pools and instance lifecycle from `--model-autoscaler-interval-us` and the policy
 * bundle's `autoscaler`, `node_pools` and `instance_lifecycle` sections (reference cmd/root.go): the flag
 * overrides the bundle's interval; the bundle's windows, scrape delay and analyzer apply only when its own
 * interval is > 0. `blis replay` refuses all of them (INV-13): a replay cannot reproduce their effects.
 */
import { LIMITS } from '../domain/limits.js';
import { nodePoolError, type NodePoolConfig } from '../cluster/autoscaler/infra.js';
import { effectiveSaturationConfig, saturationConfigError } from '../routing/autoscale-saturation.js';
import { ConfigError } from './config-error.js';
import type { ScalingSetup } from './engine-infra.js';
import { FlagValues } from './options.js';
import type { DeploymentEngineSetup } from './resolve-deployment.js';
import type { AutoscalerSpec } from '../deploy/spec.js';
import type { AutoscalerSetup } from '../cluster/autoscaler/autoscaler.js';
import { AUTOSCALE_POLICIES, isAutoscalePolicyName, type AutoscalePolicyName } from '../routing/autoscale-policies.js';
import type { BundleScaling } from './resolve-policies.js';

export function resolveScaling(
  f: FlagValues,
  bundle: BundleScaling | null,
  mode: 'run' | 'replay',
  kvForGpu: ScalingSetup['kvForGpu'],
  deployment: DeploymentEngineSetup | null = null,
  evolvableAutoscale = false,
): ScalingSetup | null {
  const ref = resolveReferenceScaling(f, bundle, mode, kvForGpu, deployment, evolvableAutoscale);
  // --gpus-per-node declares multi-node TP: node pools then place a wider TP group on whole nodes (upstream #1537).
  const s = ref !== null && f.has('gpus-per-node') && f.int('gpus-per-node') > 0 ? { ...ref, multiNodePlacement: true } : ref;
  if (s === null || !(f.has('semantics') && f.str('semantics') === 'corrected')) return s;
  // Corrected semantics (docs/reference-differences.md D8, D9, M5): node pools provision nodes; without node pools
  // the saturation pipeline adds unplaced replicas (as deployment files do); the HPA's stabilization rule; the
  // saturation pipeline keeps at least one replica per model, and nothing scales down before one tick interval of
  // observation (with M5 the first tick sees an idle cluster's real capacity and would drain it).
  const a = s.autoscaler;
  const launch = a === null ? undefined : a.launch ?? { provisioningDelay: null, modelLoadTime: null, warmup: null, costPerGpuHourOf: () => 0, unplaced: true };
  return {
    ...s,
    provisionNodes: true,
    autoscaler: a === null || launch === undefined ? null : { ...a, hpaStabilization: true, saturationMinReplicas: 1, scaleDownAfterUs: a.intervalUs, launch: { ...launch, unplacedUntargeted: true } },
  };
}

function resolveReferenceScaling(
  f: FlagValues,
  bundle: BundleScaling | null,
  mode: 'run' | 'replay',
  kvForGpu: ScalingSetup['kvForGpu'],
  deployment: DeploymentEngineSetup | null,
  evolvableAutoscale: boolean,
): ScalingSetup | null {
  const flagSet = f.has('model-autoscaler-interval-us') && f.changed('model-autoscaler-interval-us');
  const policyFlag = f.has('autoscale-policy') ? f.str('autoscale-policy') : '';
  if (policyFlag !== '' && !isAutoscalePolicyName(policyFlag)) throw new ConfigError('bad-flag', `unknown --autoscale-policy "${policyFlag}"; valid: ${AUTOSCALE_POLICIES.join(', ')}`);
  if (deployment?.spec.autoscaler) {
    if (mode === 'replay') throw new ConfigError('bad-flag', `blis replay does not support the autoscaler of ${deployment.file}; remove its autoscaler section or use blis run instead`);
    if (flagSet) throw new ConfigError('bad-flag', `--model-autoscaler-interval-us cannot be combined with the autoscaler of ${deployment.file}; set interval_us there`);
    return deploymentScaling(deployment, bundle, kvForGpu, policyFlag, evolvableAutoscale);
  }
  if (mode === 'replay') {
    if (flagSet) throw new ConfigError('bad-flag', '--model-autoscaler-interval-us is not supported in blis replay; remove this flag or use blis run instead');
    if (bundle !== null && bundle.autoscaler.intervalUs > 0) {
      throw new ConfigError('bad-flag', `blis replay does not support autoscaler config (policy bundle interval_us=${bundle.autoscaler.intervalUs}); remove the autoscaler section from ${bundle.file} or use blis run instead`);
    }
    if (bundle !== null && bundle.nodePools !== null && bundle.nodePools.length > 0) {
      throw new ConfigError('bad-flag', `blis replay does not support node_pools config (${bundle.nodePools.length} pool(s) in ${bundle.file}); remove the node_pools section or use blis run instead`);
    }
    return null;
  }
  let interval = 0;
  let up = 0;
  let down = 0;
  let scrape = { mean: 0, stddev: 0 };
  let analyzer = effectiveSaturationConfig({});
  const as = bundle?.autoscaler;
  if (as !== undefined && as.intervalUs > 0) {
    interval = as.intervalUs;
    up = as.scaleUpStabilizationWindowUs;
    down = as.scaleDownStabilizationWindowUs;
    scrape = { mean: as.hpaScrapeDelay.mean, stddev: as.hpaScrapeDelay.stddev };
    analyzer = effectiveSaturationConfig(as.analyzer);
  }
  if (flagSet) {
    interval = f.float('model-autoscaler-interval-us');
    if (!Number.isFinite(interval) || interval < 0) throw new ConfigError('bad-flag', `--model-autoscaler-interval-us must be a finite number >= 0 (0 = disabled), got ${interval}`);
    if (interval > 0 && interval < LIMITS.autoscalerMinIntervalUs) {
      throw new ConfigError('bad-flag', `--model-autoscaler-interval-us must be 0 (off) or at least ${LIMITS.autoscalerMinIntervalUs} µs, got ${interval}; an autoscaler ticking more often only burns time (docs/usage.md, Limits)`);
    }
  }
  const err = saturationConfigError(analyzer);
  if (err !== null) throw new ConfigError('bad-config', `${bundle?.file ?? '--policy-config'}: autoscaler.analyzer: ${err}`);
  const pools: NodePoolConfig[] | null = bundle?.nodePools && bundle.nodePools.length > 0
    ? bundle.nodePools.map((p) => ({
      name: p.name, gpuType: p.gpuType, gpusPerNode: p.gpusPerNode, gpuMemoryGiB: p.gpuMemoryGiB, initialNodes: p.initialNodes,
      minNodes: p.minNodes, maxNodes: p.maxNodes, provisioningDelay: { mean: p.provisioningDelay.mean, stddev: p.provisioningDelay.stddev }, costPerHour: p.costPerHour,
    }))
    : null;
  const seen = new Set<string>();
  for (const p of pools ?? []) {
    const e = nodePoolError(p);
    if (e !== null) throw new ConfigError('bad-config', `${bundle?.file ?? ''}: node_pools: ${e}`);
    if (seen.has(p.name)) throw new ConfigError('bad-config', `${bundle?.file ?? ''}: node_pools: duplicate pool name "${p.name}"; give each pool its own name`);
    seen.add(p.name);
  }
  const minR = f.has('autoscale-min-replicas') ? f.int('autoscale-min-replicas') : 1;
  const maxR = f.has('autoscale-max-replicas') ? f.int('autoscale-max-replicas') : 0;
  if (minR < 0) throw new ConfigError('bad-flag', `--autoscale-min-replicas must be >= 0, got ${minR}`);
  if (maxR < 0) throw new ConfigError('bad-flag', `--autoscale-max-replicas must be >= 0, got ${maxR}`);
  if (maxR > 0 && minR > maxR) throw new ConfigError('bad-flag', `--autoscale-min-replicas (${minR}) is greater than --autoscale-max-replicas (${maxR}); lower the minimum or raise the maximum`);
  const policyMode = policyFlag !== '' || evolvableAutoscale;
  if (policyMode && interval <= 0) {
    throw new ConfigError('bad-flag', `${policyFlag !== '' ? '--autoscale-policy' : 'the autoscale policy of the bundle'} needs the autoscaler: set --model-autoscaler-interval-us (or autoscaler.interval_us in the bundle)`);
  }
  if (interval <= 0 && pools === null) return null;
  const lc = bundle?.instanceLifecycle;
  const autoscaler: AutoscalerSetup | null = interval > 0
    ? {
      intervalUs: interval, scaleUpWindowUs: up, scaleDownWindowUs: down, hpaScrapeDelay: scrape, saturation: analyzer,
      ...(policyMode ? { launch: { provisioningDelay: null, modelLoadTime: null, warmup: null, costPerGpuHourOf: () => 0, unplaced: maxR > 0 } } : {}),
    }
    : null;
  return {
    autoscaler,
    nodePools: pools,
    loadingDelay: lc === undefined ? { mean: 0, stddev: 0 } : { mean: lc.loadingDelay.mean, stddev: lc.loadingDelay.stddev },
    warmStartInitialInstances: lc?.warmStartInitialInstances ?? false,
    kvForGpu,
    ...(policyMode ? { policy: { name: policyFlag === '' ? null : (policyFlag), targets: null, minReplicas: minR, maxReplicas: maxR } } : {}),
  };
}

/** The autoscaler of a deployment file: its own policy, triggers, delays, warm-up and drain, per pool. */
function deploymentScaling(d: DeploymentEngineSetup, bundle: BundleScaling | null, kvForGpu: ScalingSetup['kvForGpu'], policyFlag: string, evolvable: boolean): ScalingSetup {
  const a = d.spec.autoscaler as AutoscalerSpec;
  const name = policyFlag !== '' ? policyFlag : a.policy !== '' ? a.policy : evolvable ? null : 'saturation';
  const pools = bundle?.nodePools && bundle.nodePools.length > 0 ? resolveScaling(new EmptyFlags(), bundle, 'run', kvForGpu)?.nodePools ?? null : null;
  const byTarget = new Map(d.pools.map((p) => [p.target, p]));
  return {
    autoscaler: {
      intervalUs: a.intervalUs,
      scaleUpWindowUs: a.scaleUpStabilizationWindowUs,
      scaleDownWindowUs: a.scaleDownStabilizationWindowUs,
      hpaScrapeDelay: { mean: 0, stddev: 0 },
      saturation: effectiveSaturationConfig({}),
      triggers: a.triggers,
      drain: a.drain,
      launch: {
        provisioningDelay: a.provisioningDelay,
        modelLoadTime: a.modelLoadTime,
        warmup: a.warmup === null ? null : { curve: a.warmup.curve, durationUs: a.warmup.durationUs, initialFactor: a.warmup.initialPenalty },
        costPerGpuHourOf: (target) => byTarget.get(target)?.costPerGpuHour ?? 0,
        unplaced: pools === null,
      },
    },
    nodePools: pools,
    loadingDelay: { mean: 0, stddev: 0 },
    warmStartInitialInstances: true,
    kvForGpu,
    targetBuild: (target) => {
      const p = byTarget.get(target);
      return p === undefined ? undefined : { tp: p.overrides.tp, maxModelLen: p.overrides.maxModelLen, kvTotalBlocks: p.overrides.kvTotalBlocks, role: p.role };
    },
    policy: {
      name: name as AutoscalePolicyName | null,
      params: policyFlag !== '' && policyFlag !== a.policy ? {} : a.policyParams,
      targets: d.pools.map((p) => ({ id: p.target, model: p.model, gpuType: p.overrides.gpuType, tp: p.overrides.tp, role: p.role, minReplicas: p.minReplicas, maxReplicas: p.maxReplicas })),
      minReplicas: 0,
      maxReplicas: 0,
    },
  };
}

/** No flags set (reading only a bundle's node pools). */
class EmptyFlags extends FlagValues {
  constructor() {
    super({}, new Set());
  }
}
