/**
 * "Did you mean …" for names the user mistyped (model names, keys, features): edit distance and the closest
 * known names.
 */

export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Up to `max` known names within edit distance `limit` of `name` (case-insensitive), closest first; ties in
 * name order so the suggestion is deterministic.
 */
export function closestNames(name: string, known: Iterable<string>, limit: number, max = 3): string[] {
  const lower = name.toLowerCase();
  const scored: { n: string; d: number }[] = [];
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d <= limit) scored.push({ n: k, d });
  }
  scored.sort((x, y) => x.d - y.d || (x.n < y.n ? -1 : x.n > y.n ? 1 : 0));
  return scored.slice(0, max).map((x) => x.n);
}

/** `did you mean "a", "b" or "c"? ` (empty when there is no suggestion). */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return '';
  const q = names.map((n) => `"${n}"`);
  return `did you mean ${q.length === 1 ? q[0]! : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]!}`}? `;
}
