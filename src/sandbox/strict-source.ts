/**
 * Checks on a `strict` policy's source text and entry-point names before QuickJS runs any of it, and the one-line
 * form of engine messages.
 */
import { parse as acornParse } from 'acorn';

/** A plain JavaScript identifier (an entry-point name the host can look up). */
export function isIdentifier(name: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
}

export function oneLine(s: string): string {
  return s.replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ').trim();
}

/** Whether the source calls `import()` (a script cannot contain import declarations: those are syntax errors). */
export function usesDynamicImport(source: string): boolean {
  let ast: unknown;
  try {
    ast = acornParse(source, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true });
  } catch {
    // QuickJS accepted what acorn does not: be conservative.
    return /\bimport\s*\(/.test(source);
  }
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (const x of node) stack.push(x);
      continue;
    }
    const n = node as Record<string, unknown>;
    if (n['type'] === 'ImportExpression' || (n['type'] === 'MetaProperty' && (n['meta'] as { name?: unknown } | undefined)?.name === 'import')) return true;
    for (const k in n) {
      const x = n[k];
      if (typeof x === 'object' && x !== null) stack.push(x);
    }
  }
  return false;
}
