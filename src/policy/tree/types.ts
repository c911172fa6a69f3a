/**
 * The compiled shapes of a decision tree (see index.ts for the YAML/JSON syntax they come from). Every node
 * keeps both its data (for printing, the canonical plain form and introspection) and, for predicates and
 * route objectives, a closure compiled at parse so evaluation does no string work and allocates nothing.
 */
import type { FeatureEnv, FeatureType } from '../features.js';
import type { ControlPoint } from '../view.js';

export type Scalar = number | string | boolean;

export type CompareOp = '<' | '<=' | '>' | '>=' | '==' | '!=' | 'in' | 'not_in';
export const COMPARE_OPS: readonly CompareOp[] = ['<', '<=', '>', '>=', '==', '!=', 'in', 'not_in'];

/** A feature resolved at parse: its catalog entry and its path split once. */
export interface FeatureRef {
  readonly name: string;
  readonly type: FeatureType;
  readonly scope: 'decision' | 'instance';
  readonly path: readonly string[];
}

/** The right-hand side of a comparison. */
export type Operand =
  | { readonly kind: 'const'; readonly value: Scalar }
  | { readonly kind: 'list'; readonly values: readonly Scalar[] }
  | { readonly kind: 'feature'; readonly feature: FeatureRef };

/** The compiled test of a predicate. */
export type PredicateTest = (env: FeatureEnv) => boolean;

export type Predicate =
  | { readonly kind: 'compare'; readonly feature: FeatureRef; readonly op: CompareOp; readonly value: Operand; readonly test: PredicateTest }
  | { readonly kind: 'all' | 'any'; readonly terms: readonly Predicate[]; readonly test: PredicateTest }
  | { readonly kind: 'not'; readonly term: Predicate; readonly test: PredicateTest };

export interface ScorerWeight {
  readonly name: string;
  readonly weight: number;
}

export type RouteRule =
  | { readonly kind: 'scorers'; readonly scorers: readonly ScorerWeight[]; readonly filter: Predicate | null; readonly reason: string }
  | ObjectiveRule;

/** A `minimize` / `maximize` routing rule over a numeric instance feature. */
export interface ObjectiveRule {
  readonly kind: 'minimize' | 'maximize';
  /** The instance feature's name, e.g. `instance.load`. */
  readonly feature: string;
  readonly tie: 'random' | 'first';
  readonly filter: Predicate | null;
  readonly reason: string;
  /** Reads the objective from an environment whose `instance` root is the candidate (compiled at parse). */
  readonly objective: (env: FeatureEnv) => number;
}

/**
 * What a tree decides. Leaves are built (and frozen) once at parse, so evaluation returns the same object each
 * time the same leaf is reached.
 *
 * Admission: `delayUs` is 0 unless `action` is `delay`; `reason` is '' when not given.
 * Autoscale: `{scale_to: N}` reads `scale: 'none', by: 0, scaleTo: N`; `{scale: ...}` reads `scaleTo: null`.
 */
export type TreeLeaf =
  | { readonly point: 'admission'; readonly action: 'admit' | 'reject' | 'delay'; readonly delayUs: number; readonly reason: string }
  | { readonly point: 'priority'; readonly priority: number; readonly hints: Readonly<Record<string, string | number | boolean>> }
  | { readonly point: 'routing'; readonly rule: RouteRule }
  | { readonly point: 'scheduler'; readonly priority: number }
  | { readonly point: 'autoscale'; readonly scale: 'up' | 'down' | 'none'; readonly by: number; readonly scaleTo: number | null; readonly reason: string }
  | { readonly point: 'disaggregation'; readonly disaggregate: boolean; readonly reason: string }
  | { readonly point: 'encode'; readonly encode: boolean; readonly reason: string };

export type TreeNode =
  | { readonly kind: 'branch'; readonly if: Predicate; readonly then: TreeNode; readonly else: TreeNode }
  | { readonly kind: 'leaf'; readonly leaf: TreeLeaf };

export interface DecisionTree {
  readonly point: ControlPoint;
  readonly root: TreeNode;
  /** Branches plus leaves. */
  readonly nodeCount: number;
  /** Nodes on the longest root-to-leaf path (a lone leaf is 1). */
  readonly depth: number;
  /** Every feature the tree reads (branches, filters, objectives), sorted. */
  readonly features: readonly string[];
}

/** Nodes on the longest root-to-leaf path a tree may have. */
export const MAX_TREE_DEPTH = 64;
/** Branches plus leaves a tree may have. */
export const MAX_TREE_NODES = 10_000;
/** Nesting of all / any / not a predicate may have. */
export const MAX_PREDICATE_DEPTH = 64;
