/**
 * Two renderings of a compiled tree: readable text for people and for LLM reflection (`printTree`), and the
 * canonical plain form (`treeToPlain`) that parses back to the same tree. The canonical form spells
 * comparisons as `{feature, op, value}`, scorers as a `{NAME: WEIGHT}` mapping in their order, and leaves out
 * defaults (empty reasons and hints, `by: 1`, `tie: random`).
 */
import type { DecisionTree, FeatureRef, Operand, Predicate, RouteRule, Scalar, TreeLeaf, TreeNode } from './types.js';

type Plain = Record<string, unknown>;

function scalarText(v: Scalar): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function operandText(v: Operand): string {
  if (v.kind === 'const') return scalarText(v.value);
  if (v.kind === 'feature') return v.feature.name;
  return `[${v.values.map(scalarText).join(', ')}]`;
}

function isCompound(p: Predicate): boolean {
  return (p.kind === 'all' || p.kind === 'any') && p.terms.length > 1;
}

/** One predicate as text: `a > 1 and (b == "x" or not (c))`. */
export function printPredicate(p: Predicate): string {
  switch (p.kind) {
    case 'compare': return `${p.feature.name} ${p.op === 'not_in' ? 'not in' : p.op} ${operandText(p.value)}`;
    case 'not': return `not (${printPredicate(p.term)})`;
    default: {
      const sep = p.kind === 'all' ? ' and ' : ' or ';
      return p.terms.map((t) => (isCompound(t) ? `(${printPredicate(t)})` : printPredicate(t))).join(sep);
    }
  }
}

function keyText(k: string): string {
  return /^[A-Za-z_][\w.-]*$/.test(k) ? k : JSON.stringify(k);
}

function ruleText(r: RouteRule): string {
  let s = r.kind === 'scorers'
    ? `route scorers ${r.scorers.map((x) => `${x.name}:${x.weight}`).join(', ')}`
    : `route ${r.kind} ${r.feature}${r.tie === 'first' ? ' tie first' : ''}`;
  if (r.filter !== null) s += ` where ${printPredicate(r.filter)}`;
  if (r.reason !== '') s += ` ${JSON.stringify(r.reason)}`;
  return s;
}

/** One leaf as text: `admit`, `reject "too long"`, `delay 50000us`, `route minimize instance.load`, `scale up by 2`. */
export function printLeaf(leaf: TreeLeaf): string {
  const why = (r: string): string => (r === '' ? '' : ` ${JSON.stringify(r)}`);
  switch (leaf.point) {
    case 'admission': return leaf.action === 'delay' ? `delay ${leaf.delayUs}us${why(leaf.reason)}` : `${leaf.action}${why(leaf.reason)}`;
    case 'priority': {
      const keys = Object.keys(leaf.hints);
      return keys.length === 0 ? `priority ${leaf.priority}` : `priority ${leaf.priority} hints {${keys.map((k) => `${keyText(k)}: ${scalarText(leaf.hints[k]!)}`).join(', ')}}`;
    }
    case 'routing': return ruleText(leaf.rule);
    case 'scheduler': return `priority ${leaf.priority}`;
    case 'autoscale':
      if (leaf.scaleTo !== null) return `scale to ${leaf.scaleTo}${why(leaf.reason)}`;
      return `scale ${leaf.scale}${leaf.by > 1 ? ` by ${leaf.by}` : ''}${why(leaf.reason)}`;
    case 'disaggregation': return `${leaf.disaggregate ? 'disaggregate' : 'prefill locally'}${why(leaf.reason)}`;
    case 'encode': return `${leaf.encode ? 'encode' : 'skip encode'}${why(leaf.reason)}`;
  }
}

function printNode(n: TreeNode, indent: string, lines: string[]): void {
  if (n.kind === 'leaf') {
    lines.push(indent + printLeaf(n.leaf));
    return;
  }
  const inner = `${indent}  `;
  lines.push(`${indent}if ${printPredicate(n.if)}:`);
  printNode(n.then, inner, lines);
  let e = n.else;
  while (e.kind === 'branch') {
    lines.push(`${indent}else if ${printPredicate(e.if)}:`);
    printNode(e.then, inner, lines);
    e = e.else;
  }
  lines.push(`${indent}else:`);
  printNode(e, inner, lines);
}

/**
 * The tree as indented text (two spaces per level, `else if` chains flattened, no trailing newline), e.g.
 * ```
 * if request.inputTokens > 4000:
 *   reject "too long"
 * else if tenant.burstDetected == true and global.inFlight >= 64:
 *   delay 50000us
 * else:
 *   admit
 * ```
 */
export function printTree(tree: DecisionTree): string {
  const lines: string[] = [];
  printNode(tree.root, '', lines);
  return lines.join('\n');
}

function featurePlain(f: FeatureRef): Plain {
  return { feature: f.name };
}

/** The canonical plain form of a predicate. */
export function predicateToPlain(p: Predicate): Plain {
  switch (p.kind) {
    case 'compare': {
      const v = p.value;
      const value = v.kind === 'const' ? v.value : v.kind === 'list' ? [...v.values] : featurePlain(v.feature);
      return { feature: p.feature.name, op: p.op, value };
    }
    case 'not': return { not: predicateToPlain(p.term) };
    default: return { [p.kind]: p.terms.map(predicateToPlain) };
  }
}

function rulePlain(r: RouteRule): Plain {
  const out: Plain = {};
  if (r.kind === 'scorers') {
    const s: Plain = {};
    for (const x of r.scorers) s[x.name] = x.weight;
    out.scorers = s;
  } else {
    out[r.kind] = r.feature;
    if (r.tie !== 'random') out.tie = r.tie;
  }
  if (r.filter !== null) out.filter = predicateToPlain(r.filter);
  if (r.reason !== '') out.reason = r.reason;
  return out;
}

/** The canonical plain form of a leaf (what the YAML of that leaf would say, defaults left out). */
export function leafToPlain(leaf: TreeLeaf): Plain {
  switch (leaf.point) {
    case 'admission': {
      const out: Plain = { action: leaf.action };
      if (leaf.action === 'delay') out.delay_us = leaf.delayUs;
      if (leaf.reason !== '') out.reason = leaf.reason;
      return out;
    }
    case 'priority': {
      const out: Plain = { priority: leaf.priority };
      const keys = Object.keys(leaf.hints);
      if (keys.length > 0) {
        const h: Plain = {};
        for (const k of keys) Object.defineProperty(h, k, { value: leaf.hints[k], enumerable: true, writable: true, configurable: true });
        out.hints = h;
      }
      return out;
    }
    case 'routing': return { route: rulePlain(leaf.rule) };
    case 'scheduler': return { priority: leaf.priority };
    case 'autoscale': {
      const out: Plain = leaf.scaleTo !== null ? { scale_to: leaf.scaleTo } : { scale: leaf.scale };
      if (leaf.scaleTo === null && leaf.scale !== 'none' && leaf.by !== 1) out.by = leaf.by;
      if (leaf.reason !== '') out.reason = leaf.reason;
      return out;
    }
    case 'disaggregation': return leaf.reason === '' ? { disaggregate: leaf.disaggregate } : { disaggregate: leaf.disaggregate, reason: leaf.reason };
    case 'encode': return leaf.reason === '' ? { encode: leaf.encode } : { encode: leaf.encode, reason: leaf.reason };
  }
}

function nodePlain(n: TreeNode): Plain {
  return n.kind === 'leaf' ? leafToPlain(n.leaf) : { if: predicateToPlain(n.if), then: nodePlain(n.then), else: nodePlain(n.else) };
}

/** The canonical plain form: JSON/YAML-serializable, and `parseDecisionTree` of it gives the same tree. */
export function treeToPlain(tree: DecisionTree): unknown {
  return nodePlain(tree.root);
}
