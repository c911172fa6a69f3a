/**
 * Built-in autoscaling policies behind the {@link AutoScalePolicy} contract. Each is pure: the decision is a
 * function of the context (cooldowns read `timeSinceLastScaleUs`).
 *
 *   threshold           scale up by `step` when mean queue depth or utilization is above its high mark,
 *                       down by `step` when both are below their low marks.
 *   target-utilization  Kubernetes-HPA-like: desired = ceil(current × utilization / target), no change while
 *                       the ratio is within the tolerance, at most half the replicas removed per decision.
 *
 * Utilization here is per replica the larger of KV utilization and batch occupancy: on a large GPU the KV
 * cache of a compute-bound replica stays nearly empty, and KV alone would scale such a deployment to one replica.
 *   saturation          the reference's V2 saturation analyzer and unlimited engine on the deployment's replicas.
 */
import { analyzeSaturation, effectiveSaturationConfig, unlimitedEngine, type SaturationConfig } from './autoscale-saturation.js';
import { clampScaleDecision, type AutoScaleContext, type AutoScalePolicy } from './autoscale.js';

export interface ThresholdParams {
  readonly scaleUpQueueDepth: number;
  readonly scaleDownQueueDepth: number;
  readonly scaleUpUtilization: number;
  readonly scaleDownUtilization: number;
  readonly cooldownUs: number;
  readonly step: number;
}

export const THRESHOLD_DEFAULTS: ThresholdParams = {
  scaleUpQueueDepth: 8, scaleDownQueueDepth: 1, scaleUpUtilization: 0.8, scaleDownUtilization: 0.3, cooldownUs: 60_000_000, step: 1,
};

export function thresholdPolicy(p: ThresholdParams = THRESHOLD_DEFAULTS, name = 'threshold'): AutoScalePolicy {
  return {
    name,
    evaluate(ctx) {
      const m = ctx.metrics;
      if (ctx.timeSinceLastScaleUs < p.cooldownUs) return clampScaleDecision(ctx, ctx.currentReplicas, 'cooling down');
      const util = replicaUtilization(ctx);
      if (m.avgQueueDepth > p.scaleUpQueueDepth || util > p.scaleUpUtilization) {
        return clampScaleDecision(ctx, ctx.currentReplicas + p.step, `queue ${fmt(m.avgQueueDepth)} / utilization ${fmt(util)} above the high marks`);
      }
      if (m.avgQueueDepth < p.scaleDownQueueDepth && util < p.scaleDownUtilization) {
        return clampScaleDecision(ctx, ctx.currentReplicas - p.step, 'queue and utilization below the low marks');
      }
      return clampScaleDecision(ctx, ctx.currentReplicas, 'within the band');
    },
  };
}

export interface TargetUtilizationParams {
  /** Wanted mean utilization per replica, in (0, 1]: per replica the larger of its KV utilization and its batch
   *  occupancy (running / max-num-seqs), so a compute-bound replica with a mostly empty KV cache counts as busy. */
  readonly target: number;
  /** No change while |utilization / target − 1| <= tolerance (the HPA's 0.1). */
  readonly tolerance: number;
  /** Queue depth counted as utilization: each queued request adds this much (0 = no queue term). */
  readonly queueWeight: number;
  /** Largest share of the replicas removed by one decision (the HPA's scale-down rate policy); 1 = no limit. */
  readonly maxScaleDownFraction: number;
  readonly cooldownUs: number;
}

export const TARGET_UTILIZATION_DEFAULTS: TargetUtilizationParams = { target: 0.4, tolerance: 0.1, queueWeight: 0.05, maxScaleDownFraction: 0.5, cooldownUs: 0 };

/** Mean over the replicas of max(KV utilization, batch occupancy). */
export function replicaUtilization(ctx: AutoScaleContext): number {
  if (ctx.replicas.length === 0) return ctx.metrics.avgUtilization;
  let u = 0;
  for (const r of ctx.replicas) u += Math.max(r.kvUtilization, r.maxBatchSize > 0 ? r.batchSize / r.maxBatchSize : 0);
  return u / ctx.replicas.length;
}

export function targetUtilizationPolicy(p: TargetUtilizationParams = TARGET_UTILIZATION_DEFAULTS, name = 'target-utilization'): AutoScalePolicy {
  return {
    name,
    evaluate(ctx) {
      if (ctx.timeSinceLastScaleUs < p.cooldownUs) return clampScaleDecision(ctx, ctx.currentReplicas, 'cooling down');
      const util = replicaUtilization(ctx) + p.queueWeight * ctx.metrics.avgQueueDepth;
      const ratio = util / p.target;
      if (Math.abs(ratio - 1) <= p.tolerance || ctx.currentReplicas === 0) return clampScaleDecision(ctx, ctx.currentReplicas, `utilization ${fmt(util)} within tolerance of ${fmt(p.target)}`);
      const want = Math.max(Math.ceil(ctx.currentReplicas * ratio), 1, Math.ceil(ctx.currentReplicas * (1 - p.maxScaleDownFraction)));
      return clampScaleDecision(ctx, want, `utilization ${fmt(util)} vs target ${fmt(p.target)}: ${want} replicas`);
    },
  };
}

export function saturationPolicy(cfg: Partial<SaturationConfig> = {}, name = 'saturation'): AutoScalePolicy {
  const c = effectiveSaturationConfig(cfg);
  return {
    name,
    evaluate(ctx) {
      const r = analyzeSaturation({ model: ctx.configId, replicas: ctx.replicas, pendingReplicas: ctx.pendingReplicas, pendingCapacityTokens: ctx.pendingCapacityTokens }, c);
      const d = unlimitedEngine([r])[0];
      const delta = d?.delta ?? 0;
      const why = r.requiredCapacity > 0 ? `${fmt(r.requiredCapacity)} tokens of capacity missing` : r.spareCapacity > 0 ? `${fmt(r.spareCapacity)} tokens of capacity spare` : `utilization ${fmt(r.utilization)}`;
      return clampScaleDecision(ctx, ctx.currentReplicas + delta, why);
    },
  };
}

export const AUTOSCALE_POLICIES = ['saturation', 'threshold', 'target-utilization'] as const;
export type AutoscalePolicyName = (typeof AUTOSCALE_POLICIES)[number];

export function isAutoscalePolicyName(name: string): name is AutoscalePolicyName {
  return (AUTOSCALE_POLICIES as readonly string[]).includes(name);
}

/** A built-in policy; `params` overrides its defaults (keys of ThresholdParams / TargetUtilizationParams). */
export function makeAutoscalePolicy(name: AutoscalePolicyName, saturation: Partial<SaturationConfig> = {}, params: Readonly<Record<string, number>> = {}): AutoScalePolicy {
  switch (name) {
    case 'threshold':
      return thresholdPolicy({ ...THRESHOLD_DEFAULTS, ...params });
    case 'target-utilization':
      return targetUtilizationPolicy({ ...TARGET_UTILIZATION_DEFAULTS, ...params });
    case 'saturation':
      return saturationPolicy(saturation);
  }
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(3);
}

export type { AutoScaleContext };
