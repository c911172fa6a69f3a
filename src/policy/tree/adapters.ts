/**
 * Decision trees behind the control-point interfaces: the tree picks a leaf from the decision's features,
 * the leaf is carried out. Routing leaves with scorers run the built-in weighted scoring (one policy per leaf,
 * so stateful scorers keep their memory per leaf) with the router's tie-break stream; minimize / maximize
 * leaves break ties with the same stream (`tie: random`, like least-loaded) or take the first.
 */
import type { Request } from '../../domain/request.js';
import type { BatchChoice, InstanceScheduler, SchedulerContext } from '../../instance/scheduler.js';
import { clampScaleDecision, type AutoScalePolicy } from '../../routing/autoscale.js';
import type { DisaggregationDecider } from '../../routing/disaggregation.js';
import type { EncodeContext, EncodeDecider, EncodeDecision } from '../../routing/encode-decider.js';
import { amendDecision, breakTie, decision, requireSnapshots } from '../../routing/policies.js';
import type { ScorerConfig } from '../../routing/scorer-config.js';
import type { ScorerName } from '../../routing/scorer-registry.js';
import type { AdmissionPolicy, PriorityPolicy, RouterState, RoutingPolicy } from '../../routing/types.js';
import { weighted } from '../../routing/weighted.js';
import { routedInstances, routerEnv, schedulerEnv, autoscaleEnv, type FeatureEnv } from '../features.js';
import { disaggregationEnv, encodeEnv } from '../pd-view.js';
import type { PolicyBuildContext } from '../templates/build.js';
import { requestView, schedRequestView, schedulerView, stateView } from '../view.js';
import { bestInstances, evaluateTree, filterInstances } from './eval.js';
import type { DecisionTree, RouteRule, TreeLeaf } from './types.js';

function routerFeatures(req: Request, state: RouterState, blockSize: number): { env: FeatureEnv; view: ReturnType<typeof stateView>; rv: ReturnType<typeof requestView> } {
  const rv = requestView(req, blockSize);
  const view = stateView(req, state);
  return { env: routerEnv(rv, view), view, rv };
}

/** The leaf of a tree that is a lone leaf, without building any features. */
function constantLeaf(tree: DecisionTree): TreeLeaf | null {
  return tree.root.kind === 'leaf' ? tree.root.leaf : null;
}

export function treeAdmission(tree: DecisionTree, ctx: PolicyBuildContext): AdmissionPolicy {
  const fixed = constantLeaf(tree);
  return {
    name: 'tree',
    admit(req, state) {
      const leaf = (fixed ?? evaluateTree(tree, routerFeatures(req, state, ctx.blockSize).env)) as Extract<TreeLeaf, { point: 'admission' }>;
      if (leaf.action === 'admit') return { admitted: true, reason: '' };
      if (leaf.action === 'reject') return { admitted: false, reason: leaf.reason || 'tree: reject' };
      return { admitted: false, reason: leaf.reason || 'tree: delay', delayUs: leaf.delayUs };
    },
  };
}

export function treePriority(tree: DecisionTree, ctx: PolicyBuildContext): PriorityPolicy {
  const fixed = constantLeaf(tree);
  return {
    name: 'tree',
    prioritize(req, state) {
      const leaf = (fixed ?? evaluateTree(tree, routerFeatures(req, state, ctx.blockSize).env)) as Extract<TreeLeaf, { point: 'priority' }>;
      return { score: leaf.priority, hints: Object.keys(leaf.hints).length === 0 ? null : leaf.hints };
    },
  };
}

export function treeRouting(tree: DecisionTree, ctx: PolicyBuildContext): RoutingPolicy {
  const fixed = constantLeaf(tree);
  const weightedByRule = new Map<RouteRule, RoutingPolicy>();
  const scorerPolicy = (rule: Extract<RouteRule, { kind: 'scorers' }>): RoutingPolicy => {
    let p = weightedByRule.get(rule);
    if (p === undefined) {
      const scorers: ScorerConfig[] = rule.scorers.map((s) => ({ name: s.name as ScorerName, weight: s.weight }));
      p = weighted({ scorers, rng: ctx.routerRng, blockSize: ctx.blockSize, cachedBlocks: ctx.cachedBlocks });
      weightedByRule.set(rule, p);
    }
    return p;
  };
  return {
    name: 'tree',
    route(req, state) {
      const snaps = requireSnapshots('tree', state);
      const fixedRule = fixed === null ? null : (fixed as Extract<TreeLeaf, { point: 'routing' }>).rule;
      // A lone scorers leaf without a filter is the weighted policy itself: no features needed.
      if (fixedRule !== null && fixedRule.kind === 'scorers' && fixedRule.filter === null) return scorerPolicy(fixedRule).route(req, state);
      const f = routerFeatures(req, state, ctx.blockSize);
      const rule = (fixedRule ?? (evaluateTree(tree, f.env) as Extract<TreeLeaf, { point: 'routing' }>).rule);
      const instances = routedInstances(f.rv, f.view);
      const keep = filterInstances(rule, f.env, instances);
      const filteredOut = keep.length === snaps.length ? [] : snaps.filter((_, i) => !keep.includes(i)).map((s) => s.id);
      if (rule.kind === 'scorers') {
        const sub = keep.length === snaps.length ? state : { ...state, snapshots: keep.map((i) => snaps[i] as (typeof snaps)[number]) };
        const d = scorerPolicy(rule).route(req, sub);
        return amendDecision(d, { reason: rule.reason || d.reason, ...(filteredOut.length > 0 ? { filteredOut } : {}) });
      }
      const best = bestInstances(rule, f.env, instances, keep);
      const pick = rule.tie === 'first' ? (best[0] as number) : breakTie(best, ctx.routerRng);
      const d = decision(snaps, pick, rule.reason || `tree: ${rule.kind} ${rule.feature}`);
      return filteredOut.length > 0 ? amendDecision(d, { filteredOut }) : d;
    },
  };
}

/** Scores every waiting request with the tree and admits in score order (ties: arrival, then id). */
export function treeScheduler(tree: DecisionTree): InstanceScheduler {
  return {
    name: 'tree',
    order: null,
    onRequestArrival: null,
    selectPreemptionVictim: null,
    makeBatch(sc: SchedulerContext): BatchChoice {
      const view = schedulerView(sc);
      const scored = sc.waiting.map((r, i) => ({ r, s: (evaluateTree(tree, schedulerEnv(schedRequestView(r, sc.clock), view)) as Extract<TreeLeaf, { point: 'scheduler' }>).priority, i }));
      scored.sort((a, b) => (a.s !== b.s ? (a.s > b.s ? -1 : 1) : a.r.arrivalTime !== b.r.arrivalTime ? (a.r.arrivalTime < b.r.arrivalTime ? -1 : 1) : a.r.id < b.r.id ? -1 : a.r.id > b.r.id ? 1 : a.i - b.i));
      const seats = Math.max(0, sc.maxBatchSize - sc.running.length);
      return { requests: scored.slice(0, seats).map((x) => x.r), chunks: null };
    },
  };
}

export function treeAutoscale(tree: DecisionTree): AutoScalePolicy {
  return {
    name: 'tree',
    evaluate(ctx) {
      const leaf = evaluateTree(tree, autoscaleEnv(ctx)) as Extract<TreeLeaf, { point: 'autoscale' }>;
      if (leaf.scaleTo !== null) return clampScaleDecision(ctx, leaf.scaleTo, leaf.reason);
      const delta = leaf.scale === 'up' ? leaf.by : leaf.scale === 'down' ? -leaf.by : 0;
      return clampScaleDecision(ctx, ctx.currentReplicas + delta, leaf.reason);
    },
  };
}

/** A P/D decider: the tree's leaf says whether this request's prefill runs on a prefill pod. */
export function treeDisaggregation(tree: DecisionTree): DisaggregationDecider {
  const fixed = constantLeaf(tree);
  return {
    name: 'tree',
    decide(req, ctx) {
      const leaf = (fixed ?? evaluateTree(tree, disaggregationEnv(req, ctx))) as Extract<TreeLeaf, { point: 'disaggregation' }>;
      return { disaggregate: leaf.disaggregate, reason: leaf.reason || (leaf.disaggregate ? 'tree: disaggregate' : 'tree: prefill locally') };
    },
  };
}

/** An encode decider: the tree's leaf says whether the request goes through the encode pool. */
export function treeEncode(tree: DecisionTree, ctx: PolicyBuildContext): EncodeDecider {
  const fixed = constantLeaf(tree);
  const decide = (req: Request, _decodeId: string, ectx: EncodeContext): EncodeDecision => {
    const leaf = (fixed ?? evaluateTree(tree, encodeEnv(req, ectx, ctx.blockSize))) as Extract<TreeLeaf, { point: 'encode' }>;
    return { encode: leaf.encode, reason: leaf.reason || (leaf.encode ? 'tree: encode' : 'tree: skip') };
  };
  return { name: 'tree', decide, shouldEncode: (req, id) => decide(req, id, { encodeState: () => ({ snapshots: [], clock: 0 }), clock: 0 }).encode };
}
