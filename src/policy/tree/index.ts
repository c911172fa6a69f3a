/**
 * Decision-tree policies: interpretable rules whose predicates read named features (../features.ts) and whose
 * leaves are a control point's actions. Parsed once (features resolved, paths split, tests compiled into
 * closures), then evaluated per decision without string work or allocation.
 *
 * ## Syntax (YAML or JSON; keys are exact, unknown keys are errors)
 *
 * A tree is a NODE. A NODE is a branch `{if: PRED, then: NODE, else: NODE}` (all three keys) or a leaf of the
 * tree's control point.
 *
 * PRED is one of
 * - `{feature: NAME, op: OP, value: V}`, OP one of `<` `<=` `>` `>=` `==` `!=` `in` `not_in`:
 *   - number features take every OP; string and boolean features take `==` `!=` `in` `not_in`;
 *   - V matches the feature's type (a finite number, a string, true/false); `in` / `not_in` take a non-empty
 *     list of such values; the scalar OPs also take `{feature: OTHER}`, another feature of the same type;
 *   - numbers compare as IEEE doubles, strings exactly; a missing value reads 0 / '' / false.
 * - `{all: [PRED, ...]}`, `{any: [PRED, ...]}` (non-empty lists), `{not: PRED}`.
 *
 * Branches read `scope: decision` features only; `instance.*` features of routing (scope `instance`) are read
 * only inside a routing rule (`filter`, `minimize`, `maximize`), once per candidate instance, where decision
 * features may be read as well (`instance.cachedPrefixBlocks >= {feature: cluster.maxCachedPrefixBlocks}`).
 *
 * Leaves:
 * - admission: `{action: admit}` | `{action: reject, reason?: TEXT}` |
 *   `{action: delay, delay_us: POSITIVE_INT, reason?: TEXT}`;
 * - priority: `{priority: NUMBER, hints?: {KEY: TEXT | NUMBER | BOOLEAN}}` (higher = more urgent);
 * - routing: `{route: RULE}`, RULE one of
 *   - `{scorers: {SCORER: WEIGHT, ...}}` or `{scorers: [{name: SCORER, weight: WEIGHT}, ...]}` — at least one
 *     scorer of the registry, each once, weights finite and > 0, order kept (it fixes the float sum);
 *   - `{minimize: INSTANCE_FEATURE}` | `{maximize: INSTANCE_FEATURE}` over a numeric instance feature, with
 *     `tie: random | first` (default random);
 *   - any rule may add `filter: PRED` (instances failing it are excluded; when none passes, all are kept) and
 *     `reason: TEXT`;
 * - scheduler: `{priority: NUMBER}` — the ordering score of a waiting request (higher admitted first);
 * - autoscale: `{scale: up | down | none, by?: POSITIVE_INT, reason?: TEXT}` (`by` defaults to 1 and is
 *   allowed only with up/down) or `{scale_to: NON_NEGATIVE_INT, reason?: TEXT}`;
 * - disaggregation: `{disaggregate: true | false, reason?: TEXT}`;
 * - encode: `{encode: true | false, reason?: TEXT}`.
 *
 * Limits: 64 nodes deep, 10,000 nodes in all, predicates nested 64 deep. Every error is a `POLICY_TREE`
 * PolicyConfigError naming `file:line:col`, the field path, the problem and the fix.
 *
 * Example (admission):
 * ```yaml
 * if: {feature: request.inputTokens, op: '>', value: 4000}
 * then: {action: reject, reason: too long}
 * else:
 *   if:
 *     all:
 *       - {feature: tenant.burstDetected, op: '==', value: true}
 *       - {feature: global.inFlight, op: '>=', value: 64}
 *   then: {action: delay, delay_us: 50000}
 *   else: {action: admit}
 * ```
 */
export { parseDecisionTree, closestNames } from './parse.js';
export type { TreeLocator } from './parse.js';
export { evaluateTree, evaluatePredicate, readRuleObjective, filterInstances, bestInstances, predicateFeatures, ruleReadsInstances } from './eval.js';
export { printTree, printPredicate, printLeaf, treeToPlain, leafToPlain, predicateToPlain } from './print.js';
export { COMPARE_OPS, MAX_PREDICATE_DEPTH, MAX_TREE_DEPTH, MAX_TREE_NODES } from './types.js';
export type {
  CompareOp, DecisionTree, FeatureRef, ObjectiveRule, Operand, Predicate, PredicateTest, RouteRule, Scalar, ScorerWeight, TreeLeaf, TreeNode,
} from './types.js';
