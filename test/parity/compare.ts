/**
 * The parity comparison rule of the reference fixtures (shared/parity/README.md): integer fields equal,
 * floating fields within 1e-9 relative (a zero must be exactly zero), equal key sets, arrays in order.
 * Which rule applies is decided by the field name, not by how the number looks.
 */
const FLOAT_FIELD = /(_ms|_s|_sec|_per_sec|_rate|_mean_us|^arrived_at|_rps|attainment|fairness|regret|score)$/;

export function compareJson(actual: unknown, expected: unknown, path = '$', out: string[] = []): string[] {
  if (out.length > 20) return out;
  if (typeof expected === 'number') {
    if (typeof actual !== 'number') {
      out.push(`${path}: expected number ${expected}, got ${JSON.stringify(actual)}`);
      return out;
    }
    const key = path.slice(path.lastIndexOf('.') + 1);
    const isFloat = FLOAT_FIELD.test(key) || !Number.isInteger(expected) || key === 'itl_mean_us' || key === 'cache_hit_rate';
    if (!isFloat || expected === 0 || actual === 0) {
      if (actual !== expected) out.push(`${path}: expected ${expected}, got ${actual}`);
    } else if (Math.abs(actual - expected) > 1e-9 * Math.max(Math.abs(actual), Math.abs(expected))) {
      out.push(`${path}: expected ${expected}, got ${actual} (beyond 1e-9 relative)`);
    }
    return out;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      out.push(`${path}: expected an array`);
      return out;
    }
    if (actual.length !== expected.length) out.push(`${path}: expected ${expected.length} elements, got ${actual.length}`);
    for (let i = 0; i < Math.min(actual.length, expected.length); i++) compareJson(actual[i], expected[i], `${path}[${i}]`, out);
    return out;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      out.push(`${path}: expected an object`);
      return out;
    }
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    const ak = Object.keys(a).sort();
    const ek = Object.keys(e).sort();
    if (ak.join(',') !== ek.join(',')) out.push(`${path}: key sets differ: expected [${ek.join(', ')}], got [${ak.join(', ')}]`);
    for (const k of ek) if (k in a) compareJson(a[k], e[k], `${path}.${k}`, out);
    return out;
  }
  if (actual !== expected) out.push(`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  return out;
}

/** Splits reference stdout into its `=== header ===` sections (the fixtures' stdout.json convention). */
export function splitSections(text: string): { header: string; body: string }[] {
  const out: { header: string; body: string }[] = [];
  for (const line of text.split('\n')) {
    const m = /^=== (.+) ===$/.exec(line);
    if (m) out.push({ header: m[1] as string, body: '' });
    else if (out.length > 0) {
      const last = out[out.length - 1] as { header: string; body: string };
      last.body += (last.body === '' ? '' : '\n') + line;
    }
  }
  for (const s of out) s.body = s.body.replace(/\n+$/, '');
  return out;
}
