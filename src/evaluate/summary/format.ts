/**
 * Text helpers of the reflection summary: number and time formatting (ms, %, seconds, ratios), small
 * statistics over sorted arrays, and the character cap (`capText`, `assemble`: whole lines, then the
 * truncation marker).
 */
import { percentileFromSorted } from '../../metrics/stats.js';

const TRUNCATED = '… (truncated)';

export function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function trimZero(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** ms with 0–1 decimals (seconds above 10 s). */
export function ms(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) >= 10_000) return `${trimZero((x / 1000).toFixed(1))}s`;
  return Math.abs(x) >= 100 ? `${Math.round(x)}ms` : `${trimZero(x.toFixed(1))}ms`;
}

export function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

/** A compact number: integers as is, else up to 2 significant decimals. */
export function num(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  const a = Math.abs(x);
  if (a >= 100) return String(Math.round(x));
  if (a >= 10) return trimZero(x.toFixed(1));
  return trimZero(x.toFixed(2));
}

/** Seconds from µs: 1 decimal below 100 s, whole seconds above; trailing ".0" dropped. */
export function sec(us: number): string {
  const s = us / 1e6;
  return s >= 100 ? String(Math.round(s)) : trimZero(s.toFixed(1));
}

/** Seconds with 2 decimals (decision instants). */
export function secFine(us: number): string {
  const s = us / 1e6;
  return s >= 100 ? s.toFixed(1) : s.toFixed(2);
}

export function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

export function span(startUs: number, endUs: number): string {
  return `${sec(startUs)}–${sec(endUs)}s`;
}

export function ratio(a: number, b: number): string {
  if (b <= 0) return '∞';
  const q = a / b;
  return q >= 10 ? `${Math.round(q)}x` : `${trimZero(q.toFixed(1))}x`;
}

/** Ascending (a typed array's native numeric sort: no comparator calls). */
export function sortedNums(xs: ArrayLike<number>): Float64Array {
  return Float64Array.from(xs).sort();
}

export function median(sorted: ArrayLike<number>): number {
  return percentileFromSorted(sorted, 50);
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Whole lines up to `max` chars, then the truncation marker (the result never exceeds max). */
export function capText(lines: readonly string[], max: number): string {
  const full = lines.join('\n');
  if (full.length <= max) return full;
  const out: string[] = [];
  let len = 0;
  for (const line of lines) {
    const add = (out.length === 0 ? 0 : 1) + line.length;
    if (len + add + 1 + TRUNCATED.length > max) break;
    out.push(line);
    len += add;
  }
  if (out.length === 0) return TRUNCATED.slice(0, Math.max(0, max));
  return `${out.join('\n')}\n${TRUNCATED}`;
}

/**
 * Sections separated by blank lines, at most `max` chars. Over the cap, the first section (Outcome) and the
 * `tail` (Suggested Focus) are kept whole when they fit, and the sections between are cut at a whole line
 * followed by the truncation marker; otherwise the whole text is cut at a whole line from the end.
 */
export function assemble(sections: readonly (readonly string[])[], tail: readonly string[] | null, max: number): string {
  const all: string[] = [];
  for (const sec of tail === null ? sections : [...sections, tail]) {
    if (all.length > 0) all.push('');
    all.push(...sec);
  }
  const full = all.join('\n');
  if (full.length <= max) return full;
  const head = sections[0] ?? [];
  const tailText = tail === null ? '' : `\n\n${tail.join('\n')}`;
  const reserve = 1 + TRUNCATED.length + tailText.length;
  let len = head.join('\n').length;
  if (head.length === 0 || len + reserve > max) return capText(all, max);
  const out = [...head];
  let cut = false;
  for (const sec of sections.slice(1)) {
    for (const [i, line] of (['', ...sec] as string[]).entries()) {
      const add = 1 + line.length;
      if (len + add + reserve > max) {
        cut = true;
        // Do not leave a dangling blank line or a heading without content.
        if (i <= 2) out.splice(out.length - i, i);
        break;
      }
      out.push(line);
      len += add;
    }
    if (cut) break;
  }
  if (out[out.length - 1] === '') out.pop();
  return `${out.join('\n')}\n${TRUNCATED}${tailText}`;
}
