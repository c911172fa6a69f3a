/**
 * Evaluation of compiled trees and routing rules. All of it reads features through the closures compiled at
 * parse; walking a tree allocates nothing and returns the leaf object built at parse.
 */
import type { FeatureEnv, RoutedInstanceView } from '../features.js';
import type { DecisionTree, ObjectiveRule, Predicate, RouteRule, TreeLeaf } from './types.js';

/** Walks the branches for one decision and returns the leaf reached (the same object every time). */
export function evaluateTree(tree: DecisionTree, env: FeatureEnv): TreeLeaf {
  let n = tree.root;
  while (n.kind === 'branch') n = n.if.test(env) ? n.then : n.else;
  return n.leaf;
}

/**
 * Evaluates a predicate. For a routing rule's filter, `env` is the decision's environment with root `instance`
 * set to one {@link RoutedInstanceView} (an adapter can keep one scratch copy and reassign `instance` per
 * candidate).
 */
export function evaluatePredicate(pred: Predicate, env: FeatureEnv): boolean {
  return pred.test(env);
}

/** A minimize / maximize rule's objective for the candidate at env root `instance` (0 when missing). */
export function readRuleObjective(rule: ObjectiveRule, env: FeatureEnv): number {
  return rule.objective(env);
}

/**
 * Indices of the instances that pass the rule's filter, in order; all indices when the rule has no filter or
 * none passes. `env` is the decision's environment (its own `instance` root, if any, is ignored).
 */
export function filterInstances(rule: RouteRule, env: FeatureEnv, instances: readonly RoutedInstanceView[]): number[] {
  const all: number[] = [];
  for (let i = 0; i < instances.length; i++) all.push(i);
  const filter = rule.filter;
  if (filter === null) return all;
  const scratch: Record<string, unknown> = { ...env };
  const out: number[] = [];
  for (let i = 0; i < instances.length; i++) {
    scratch.instance = instances[i];
    if (filter.test(scratch)) out.push(i);
  }
  return out.length === 0 ? all : out;
}

/**
 * The candidates (indices into `instances`) whose objective is best — lowest for minimize, highest for
 * maximize — in candidate order; the caller breaks ties (`rule.tie`: `first` takes the first, `random` draws
 * one with its own RNG). NaN objectives rank last; when every objective is NaN all candidates tie.
 */
export function bestInstances(rule: ObjectiveRule, env: FeatureEnv, instances: readonly RoutedInstanceView[], candidates: readonly number[]): number[] {
  const scratch: Record<string, unknown> = { ...env };
  const read = rule.objective;
  const max = rule.kind === 'maximize';
  let best = NaN;
  let out: number[] = [];
  for (const i of candidates) {
    scratch.instance = instances[i];
    const v = read(scratch);
    if (Number.isNaN(v)) continue;
    if (Number.isNaN(best) || (max ? v > best : v < best)) {
      best = v;
      out = [i];
    } else if (v === best) {
      out.push(i);
    }
  }
  return Number.isNaN(best) ? candidates.slice() : out;
}

/** The feature names a predicate reads, sorted and unique. */
export function predicateFeatures(pred: Predicate): string[] {
  const out = new Set<string>();
  const walk = (p: Predicate): void => {
    if (p.kind === 'compare') {
      out.add(p.feature.name);
      if (p.value.kind === 'feature') out.add(p.value.feature.name);
    } else if (p.kind === 'not') {
      walk(p.term);
    } else {
      p.terms.forEach(walk);
    }
  };
  walk(pred);
  return [...out].sort();
}

/** Whether a routing rule reads per-instance features (its filter or objective), i.e. needs routed instances. */
export function ruleReadsInstances(rule: RouteRule): boolean {
  if (rule.kind !== 'scorers') return true;
  if (rule.filter === null) return false;
  const walk = (p: Predicate): boolean =>
    p.kind === 'compare'
      ? p.feature.scope === 'instance' || (p.value.kind === 'feature' && p.value.feature.scope === 'instance')
      : p.kind === 'not' ? walk(p.term) : p.terms.some(walk);
  return walk(rule.filter);
}
