/**
 * `## Key Issues` and `## Suggested Focus`: every detector's findings over all runs, one issue per kind
 * (several runs of a kind aggregated, worst first), issues ordered by severity.
 */
import type { Finding, RunCtx } from './context.js';
import { detectAll } from './detectors/index.js';
import { cmpStr } from './format.js';

interface Issue {
  readonly kind: string;
  readonly count: number;
  readonly description: string;
  readonly lines: readonly string[];
  readonly focus: string;
  readonly severity: number;
}

/** Findings of one kind across runs → one issue (several tenants/classes of one run stay separate lines). */
function aggregate(kind: string, fs: readonly Finding[], nRuns: number): Issue {
  const sorted = [...fs].sort((a, b) => b.severity - a.severity || a.run.index - b.run.index || cmpStr(a.headline, b.headline));
  const top = sorted[0] as Finding;
  const count = fs.reduce((s, f) => s + f.count, 0);
  const runs = new Set(fs.map((f) => f.run.index));
  const lines: string[] = [];
  let description: string;
  if (fs.length === 1) {
    description = `${top.headline} [${top.run.label}]`;
    lines.push(`${top.title}: ${description}`);
    for (const d of top.details) lines.push(`   - ${d}`);
  } else {
    const total = fs.reduce((s, f) => s + f.total, 0);
    const totalText = fs.every((f) => f.total > 0) ? ` of ${total}` : '';
    const scope = nRuns > 1 ? ` in ${runs.size} of ${nRuns} runs` : '';
    description = `${count}${totalText} ${top.what}${scope}; worst: ${top.run.label}`;
    lines.push(`${top.title}: ${description}`);
    sorted.slice(0, 3).forEach((f, i) => {
      lines.push(`   - ${f.run.label}: ${f.headline}`);
      for (const d of f.details.slice(0, i === 0 ? 3 : 1)) lines.push(`     - ${d}`);
    });
    if (sorted.length > 3) lines.push(`   - … ${sorted.length - 3} more`);
  }
  const severity = Math.max(...fs.map((f) => f.severity));
  const focus = runs.size > 1 ? `${top.focus} (${runs.size} runs; worst ${top.run.label})` : top.focus;
  return { kind, count, description, lines, focus, severity };
}

export function collectIssues(ctxs: readonly RunCtx[]): Issue[] {
  const byKind = new Map<string, Finding[]>();
  for (const c of ctxs) {
    for (const f of detectAll(c)) {
      const a = byKind.get(f.kind);
      if (a) a.push(f);
      else byKind.set(f.kind, [f]);
    }
  }
  const issues = [...byKind.keys()].sort(cmpStr).map((k) => aggregate(k, byKind.get(k) as Finding[], ctxs.length));
  issues.sort((a, b) => b.severity - a.severity || cmpStr(a.kind, b.kind));
  return issues;
}
