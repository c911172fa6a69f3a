/**
 * Builds control-point implementations from templates (catalog.ts). Each is a pure function of the
 * request, the router state and its parameters (plus the seeded router stream where it says so).
 */
import type { Request } from '../../domain/request.js';
import type { SloPriorityMap } from '../../domain/slo.js';
import type { BatchChoice, InstanceScheduler, SchedulerContext } from '../../instance/scheduler.js';
import { clampScaleDecision, type AutoScaleContext, type AutoScalePolicy } from '../../routing/autoscale.js';
import { prefixThresholdDecider, type DisaggregationDecider } from '../../routing/disaggregation.js';
import type { EncodeDecider, EncodeDecision } from '../../routing/encode-decider.js';
import { clusterView } from '../features.js';
import { prefillStateView, selectedView } from '../pd-view.js';
import { amendDecision, breakTie, decision, requireSnapshots } from '../../routing/policies.js';
import type { ScorerConfig } from '../../routing/scorer-config.js';
import { SCORER_NAMES, type ScorerName } from '../../routing/scorer-registry.js';
import type { AdmissionPolicy, CachedBlocksFn, PriorityPolicy, RouterState, RoutingPolicy, RoutingSnapshot, TieBreakRng } from '../../routing/types.js';
import { effectiveLoad } from '../../routing/types.js';
import { weighted } from '../../routing/weighted.js';
import { inputBlockHashes } from '../../domain/block-hash.js';
import type { ControlPoint } from '../view.js';
import type { TemplateParameters } from './catalog.js';

/** What builders may use besides their parameters. */
export interface PolicyBuildContext {
  readonly blockSize: number;
  /** The router's tie-break stream (partition "router"): shared with the built-in routing policies. */
  readonly routerRng: TieBreakRng & { float64(): number };
  /** A seeded stream per control point for policies that draw (code policies' `state.rng`). */
  readonly rngFor: (point: ControlPoint) => { intn(n: number): number; float64(): number };
  readonly cachedBlocks: CachedBlocksFn | null;
  readonly priorities: SloPriorityMap;
}

const n = (p: TemplateParameters, k: string): number => p[k] as number;

/** Keeps instances passing `keep`; all of them when none pass. */
function filtered(state: RouterState, keep: (s: RoutingSnapshot) => boolean): { state: RouterState; out: string[] } {
  const pass = state.snapshots.filter(keep);
  if (pass.length === 0 || pass.length === state.snapshots.length) return { state, out: [] };
  return { state: { ...state, snapshots: pass }, out: state.snapshots.filter((s) => !keep(s)).map((s) => s.id) };
}

function weightedFrom(name: string, scorers: ScorerConfig[], ctx: PolicyBuildContext, threshold: number): RoutingPolicy {
  const inner = weighted({ scorers, rng: ctx.routerRng, blockSize: ctx.blockSize, cachedBlocks: ctx.cachedBlocks });
  return {
    name,
    route(req, state) {
      const f = threshold < 1 ? filtered(state, (s) => s.kvUtilization <= threshold) : { state, out: [] };
      const d = inner.route(req, f.state);
      return f.out.length > 0 ? amendDecision(d, { filteredOut: f.out }) : d;
    },
  };
}

export function buildTemplateRouting(template: string, p: TemplateParameters, ctx: PolicyBuildContext): RoutingPolicy {
  const name = `template:${template}`;
  switch (template) {
    case 'weighted_affinity_routing': {
      const scorers: ScorerConfig[] = [];
      const add = (scorer: ScorerName, w: number): void => {
        if (w > 0) scorers.push({ name: scorer, weight: w });
      };
      add('precise-prefix-cache', n(p, 'cache_affinity_weight'));
      add('queue-depth', n(p, 'queue_depth_weight'));
      add('kv-utilization', n(p, 'kv_utilization_weight'));
      add('load-balance', n(p, 'load_balance_weight'));
      return weightedFrom(name, scorers, ctx, n(p, 'utilization_threshold'));
    }
    case 'weighted_scorers': {
      // The default profile's order first (float sums depend on it), then the other scorers alphabetically.
      const first: ScorerName[] = ['precise-prefix-cache', 'queue-depth', 'kv-utilization'];
      const order = [...first, ...SCORER_NAMES.filter((s) => !first.includes(s))];
      const scorers: ScorerConfig[] = order.map((s) => ({ name: s, weight: n(p, s.replace(/-/g, '_')) })).filter((c) => c.weight > 0);
      return weightedFrom(name, scorers, ctx, 1);
    }
    case 'least_loaded_routing': {
      const qw = n(p, 'queue_weight'), bw = n(p, 'batch_weight'), fw = n(p, 'in_flight_weight'), kw = n(p, 'kv_weight');
      const rng = ctx.routerRng;
      return {
        name,
        route(_req, state) {
          const snaps = requireSnapshots(name, state);
          const loads = snaps.map((s) => qw * s.queueDepth + bw * s.batchSize + fw * s.inFlightRequests + kw * s.kvUtilization);
          let min = loads[0] as number;
          for (const l of loads) if (l < min) min = l;
          const tied: number[] = [];
          loads.forEach((l, i) => {
            if (l === min) tied.push(i);
          });
          return decision(snaps, breakTie(tied, rng), `${name} (load=${min})`);
        },
      };
    }
    case 'power_of_d_choices': {
      const d = n(p, 'd');
      const rng = ctx.routerRng;
      return {
        name,
        route(_req, state) {
          const snaps = requireSnapshots(name, state);
          const k = Math.min(d, snaps.length);
          const idx = snaps.map((_, i) => i);
          // Partial Fisher-Yates: the first k positions are a uniform sample without replacement.
          for (let i = 0; i < k; i++) {
            const j = i + rng.intn(idx.length - i);
            const t = idx[i] as number;
            idx[i] = idx[j] as number;
            idx[j] = t;
          }
          let best = idx[0] as number;
          for (let i = 1; i < k; i++) {
            const c = idx[i] as number;
            if (effectiveLoad(snaps[c] as RoutingSnapshot) < effectiveLoad(snaps[best] as RoutingSnapshot)) best = c;
          }
          return decision(snaps, best, `${name} (d=${k})`);
        },
      };
    }
    case 'prefix_affinity_threshold': {
      const ratio = n(p, 'min_match_ratio'), gap = n(p, 'max_load_gap');
      const rng = ctx.routerRng;
      const cached = ctx.cachedBlocks;
      return {
        name,
        route(req, state) {
          const snaps = requireSnapshots(name, state);
          const loads = snaps.map(effectiveLoad);
          const minLoad = Math.min(...loads);
          const blocks = inputBlockHashes(req, ctx.blockSize).length;
          if (cached !== null && blocks > 0) {
            let best = -1;
            let bestBlocks = 0;
            snaps.forEach((s, i) => {
              const c = cached(s.id, req);
              if (c > bestBlocks || (c === bestBlocks && best >= 0 && (loads[i] as number) < (loads[best] as number))) {
                best = i;
                bestBlocks = c;
              }
            });
            if (best >= 0 && bestBlocks > 0 && bestBlocks / blocks >= ratio && (loads[best] as number) <= minLoad + gap) {
              return decision(snaps, best, `${name} (affinity ${bestBlocks}/${blocks} blocks)`);
            }
          }
          const tied: number[] = [];
          loads.forEach((l, i) => {
            if (l === minLoad) tied.push(i);
          });
          return decision(snaps, breakTie(tied, rng), `${name} (least loaded, load=${minLoad})`);
        },
      };
    }
    default:
      throw new Error(`no routing template ${template}`);
  }
}

function meanOf(state: RouterState, f: (s: RoutingSnapshot) => number): number {
  const s = state.snapshots;
  if (s.length === 0) return 0;
  let t = 0;
  for (const x of s) t += f(x);
  return t / s.length;
}

export function buildTemplateAdmission(template: string, p: TemplateParameters, ctx: PolicyBuildContext): AdmissionPolicy {
  const name = `template:${template}`;
  const admit = { admitted: true, reason: '' };
  switch (template) {
    case 'load_shedding_admission': {
      const mq = n(p, 'max_queue_depth_per_instance'), mkv = n(p, 'max_kv_utilization'), mif = n(p, 'max_in_flight_per_instance');
      const protect = n(p, 'protected_priority');
      const delay = p['overload_action'] === 'delay' ? n(p, 'delay_us') : 0;
      return {
        name,
        admit(req, state) {
          if (ctx.priorities.priority(req.sloClass) >= protect) return admit;
          const q = meanOf(state, (s) => s.queueDepth);
          const kv = meanOf(state, (s) => s.kvUtilization);
          const inflight = meanOf(state, (s) => s.inFlightRequests);
          let why = '';
          if (mq > 0 && q > mq) why = `mean queue depth ${q.toFixed(2)} > ${mq}`;
          else if (mkv < 1 && kv > mkv) why = `mean KV utilization ${kv.toFixed(3)} > ${mkv}`;
          else if (mif > 0 && inflight > mif) why = `mean in-flight ${inflight.toFixed(2)} > ${mif}`;
          if (why === '') return admit;
          return delay > 0 ? { admitted: false, reason: `${name}: ${why}`, delayUs: delay } : { admitted: false, reason: `${name}: ${why}` };
        },
      };
    }
    case 'tenant_rate_limit': {
      const max = n(p, 'max_rate_per_tenant');
      const bursting = p['reject_bursting'] === true;
      const delay = p['action'] === 'delay' ? n(p, 'delay_us') : 0;
      return {
        name,
        admit(req, state) {
          const t = state.signals?.tenant(req.tenantId);
          if (t === undefined) return admit;
          let why = '';
          if (max > 0 && t.recentRate > max) why = `tenant ${req.tenantId || '(none)'} at ${t.recentRate.toFixed(2)} req/s > ${max}`;
          else if (bursting && t.burstDetected) why = `tenant ${req.tenantId || '(none)'} is bursting`;
          if (why === '') return admit;
          return delay > 0 ? { admitted: false, reason: `${name}: ${why}`, delayUs: delay } : { admitted: false, reason: `${name}: ${why}` };
        },
      };
    }
    case 'prompt_size_admission': {
      const max = n(p, 'max_input_tokens');
      return {
        name,
        admit(req) {
          return req.inputLen > max ? { admitted: false, reason: `${name}: prompt ${req.inputLen} > ${max} tokens` } : admit;
        },
      };
    }
    default:
      throw new Error(`no admission template ${template}`);
  }
}

export function buildTemplatePriority(template: string, p: TemplateParameters, ctx: PolicyBuildContext): PriorityPolicy {
  const name = `template:${template}`;
  switch (template) {
    case 'slo_class_priority': {
      const bonus = n(p, 'short_prompt_bonus'), short = n(p, 'short_prompt_tokens');
      const scores = new Map<string, number>(['critical', 'standard', 'batch', 'sheddable', 'background'].map((c) => [c, n(p, c)]));
      return {
        name,
        prioritize(req) {
          const base = scores.get(req.sloClass) ?? n(p, 'standard');
          return { score: base + (req.inputLen <= short ? bonus : 0), hints: null };
        },
      };
    }
    case 'size_aware_priority': {
      const cw = n(p, 'class_weight'), sw = n(p, 'size_weight');
      return {
        name,
        prioritize(req) {
          return { score: cw * ctx.priorities.priority(req.sloClass) - (sw * req.inputLen) / 1000, hints: null };
        },
      };
    }
    default:
      throw new Error(`no priority template ${template}`);
  }
}

/** Stable order by score descending, then arrival, then id. Scores must not depend on the clock. */
function byScore(score: (r: Request) => number): (a: Request, b: Request) => number {
  return (a, b) => {
    const d = score(b) - score(a);
    if (d !== 0 && !Number.isNaN(d)) return d < 0 ? -1 : 1;
    if (a.arrivalTime !== b.arrivalTime) return a.arrivalTime < b.arrivalTime ? -1 : 1;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}

export function buildTemplateScheduler(template: string, p: TemplateParameters): InstanceScheduler {
  const name = `template:${template}`;
  const none = { onRequestArrival: null, makeBatch: null, selectPreemptionVictim: null };
  switch (template) {
    case 'priority_aging': {
      // Waiting time = clock - arrival, so age differences between two requests are arrival differences:
      // the order is the same at every clock.
      const cw = n(p, 'class_weight'), aw = n(p, 'age_weight_per_s');
      return { name, order: byScore((r) => -cw * r.priority - (aw * r.arrivalTime) / 1e6), ...none };
    }
    case 'shortest_prompt_first': {
      const sw = n(p, 'size_weight'), aw = n(p, 'age_weight_per_s');
      return { name, order: byScore((r) => (-sw * r.inputLen) / 1000 - (aw * r.arrivalTime) / 1e6), ...none };
    }
    case 'chunked_admission': {
      const chunk = n(p, 'chunk_tokens'), maxNew = n(p, 'max_admissions_per_step');
      return {
        name,
        order: null,
        onRequestArrival: null,
        selectPreemptionVictim: null,
        makeBatch(ctx: SchedulerContext): BatchChoice {
          const seats = Math.max(0, ctx.maxBatchSize - ctx.running.length);
          const k = Math.min(seats, maxNew > 0 ? maxNew : seats, ctx.waiting.length);
          const requests = ctx.waiting.slice(0, k);
          return { requests, chunks: chunk > 0 ? requests.map(() => Math.min(chunk, ctx.maxTokenBudget)) : null };
        },
      };
    }
    default:
      throw new Error(`no scheduler template ${template}`);
  }
}

export function buildTemplateAutoscale(template: string, p: TemplateParameters): AutoScalePolicy {
  const name = `template:${template}`;
  const cooled = (ctx: AutoScaleContext, cooldown: number): boolean => ctx.timeSinceLastScaleUs >= cooldown;
  switch (template) {
    case 'threshold_autoscaler': {
      const upQ = n(p, 'scale_up_queue_depth'), downQ = n(p, 'scale_down_queue_depth');
      const upU = n(p, 'scale_up_utilization'), downU = n(p, 'scale_down_utilization');
      const cooldown = n(p, 'cooldown_us'), step = n(p, 'step');
      return {
        name,
        evaluate(ctx) {
          const m = ctx.metrics;
          if (!cooled(ctx, cooldown)) return clampScaleDecision(ctx, ctx.currentReplicas, 'cooling down');
          if (m.avgQueueDepth > upQ || m.avgUtilization > upU) return clampScaleDecision(ctx, ctx.currentReplicas + step, `queue ${m.avgQueueDepth} / utilization ${m.avgUtilization} above the high marks`);
          if (m.avgQueueDepth < downQ && m.avgUtilization < downU) return clampScaleDecision(ctx, ctx.currentReplicas - step, 'queue and utilization below the low marks');
          return clampScaleDecision(ctx, ctx.currentReplicas, 'within the band');
        },
      };
    }
    case 'target_tracking_autoscaler': {
      const target = n(p, 'target_queue_per_replica'), cooldown = n(p, 'cooldown_us');
      return {
        name,
        evaluate(ctx) {
          if (!cooled(ctx, cooldown)) return clampScaleDecision(ctx, ctx.currentReplicas, 'cooling down');
          const want = Math.ceil((ctx.currentReplicas * ctx.metrics.avgQueueDepth) / target);
          return clampScaleDecision(ctx, Math.max(want, 1), `queue per replica ${ctx.metrics.avgQueueDepth} vs target ${target}`);
        },
      };
    }
    default:
      throw new Error(`no autoscale template ${template}`);
  }
}

export function buildTemplateDisaggregation(template: string, p: TemplateParameters): DisaggregationDecider {
  const name = `template:${template}`;
  switch (template) {
    case 'prefix_threshold_disaggregation': {
      // The built-in decider itself, so the default parameters reproduce --pd-decider prefix-threshold.
      const inner = prefixThresholdDecider(n(p, 'threshold'));
      return { name, decide: (req, ctx) => inner.decide(req, ctx) };
    }
    case 'conditional_disaggregation': {
      const maxLocal = n(p, 'max_local_prefill_tokens');
      const maxQueue = n(p, 'max_prefill_queue_per_instance');
      const maxKv = n(p, 'max_prefill_kv_utilization');
      const idleLoad = n(p, 'local_if_decode_load_below');
      return {
        name,
        decide(req, ctx) {
          const sel = selectedView(req, ctx);
          if (sel.uncachedTokens <= maxLocal) return { disaggregate: false, reason: `uncached ${sel.uncachedTokens} <= ${maxLocal} tokens: prefill locally` };
          if (idleLoad > 0 && sel.load < idleLoad) return { disaggregate: false, reason: `decode pod ${sel.id} load ${sel.load} < ${idleLoad}: prefill locally` };
          // The prefill pool is read only when a cap needs it.
          if (maxQueue > 0 || maxKv < 1) {
            const pool = clusterView(prefillStateView(req, ctx));
            if (maxQueue > 0 && pool.meanQueueDepth > maxQueue) return { disaggregate: false, reason: `prefill pool queue ${pool.meanQueueDepth} > ${maxQueue}: prefill locally` };
            if (maxKv < 1 && pool.meanKvUtilization > maxKv) return { disaggregate: false, reason: `prefill pool KV ${pool.meanKvUtilization} > ${maxKv}: prefill locally` };
          }
          return { disaggregate: true, reason: `uncached ${sel.uncachedTokens} > ${maxLocal} tokens: disaggregate` };
        },
      };
    }
    default:
      throw new Error(`no disaggregation template ${template}`);
  }
}

export function buildTemplateEncode(template: string, p: TemplateParameters): EncodeDecider {
  const name = `template:${template}`;
  switch (template) {
    case 'multimodal_encode': {
      const min = n(p, 'min_multimodal_tokens');
      const decide = (req: Request): EncodeDecision => {
        const mm = req.imageTokens + req.audioTokens + req.videoTokens;
        return { encode: mm >= min, reason: `${mm} multimodal tokens ${mm >= min ? '>=' : '<'} ${min}` };
      };
      return { name, decide, shouldEncode: (req) => decide(req).encode };
    }
    default:
      throw new Error(`no encode template ${template}`);
  }
}
