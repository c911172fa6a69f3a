/**
 * The autoscaler, node pools and instance lifecycle from `--model-autoscaler-interval-us` and the policy
 * bundle's `autoscaler`, `node_pools` and `instance_lifecycle` sections (reference cmd/root.go): the flag
 * overrides the bundle's interval; the bundle's windows, scrape delay and analyzer apply only when its own
 * interval is > 0. `blis replay` refuses all of them (INV-13): a replay cannot reproduce their effects.
 */
import { nodePoolError, type NodePoolConfig } from '../cluster/autoscaler/infra.js';
import { effectiveSaturationConfig, saturationConfigError } from '../routing/autoscale-saturation.js';
import { ConfigError } from './config-error.js';
import type { ScalingSetup } from './engine-infra.js';
import type { FlagValues } from './options.js';
import type { BundleScaling } from './resolve-policies.js';

export function resolveScaling(
  f: FlagValues,
  bundle: BundleScaling | null,
  mode: 'run' | 'replay',
  kvForGpu: ScalingSetup['kvForGpu'],
): ScalingSetup | null {
  const flagSet = f.has('model-autoscaler-interval-us') && f.changed('model-autoscaler-interval-us');
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
  if (interval <= 0 && pools === null) return null;
  const lc = bundle?.instanceLifecycle;
  return {
    autoscaler: interval > 0 ? { intervalUs: interval, scaleUpWindowUs: up, scaleDownWindowUs: down, hpaScrapeDelay: scrape, saturation: analyzer } : null,
    nodePools: pools,
    loadingDelay: lc === undefined ? { mean: 0, stddev: 0 } : { mean: lc.loadingDelay.mean, stddev: lc.loadingDelay.stddev },
    warmStartInitialInstances: lc?.warmStartInitialInstances ?? false,
    kvForGpu,
  };
}
