/**
 * Generators shared by the fuzz suites: hostile text, number spellings, and mutations of valid files. Work is
 * kept bounded by construction (small request counts, few clients), so a case that runs long is a bug rather
 * than a big but legitimate simulation.
 */
import fc from 'fast-check';

/** `arb` in about one case out of `n`, else undefined (fc.option's `freq` counts the other way round). */
export function sometimes<T>(arb: fc.Arbitrary<T>, n: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: n - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
}

/** Text a user (or a corrupted file) might put where a value belongs. */
export const weirdText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', '~', 'NaN', 'Infinity', '-Infinity', 'true', 'yes', '0x10', '0b11', '0o7', '010', '1e999', '-1e999', '1_000', '１２', '٣', '∞',
    '9007199254740993', '-9223372036854775809', '18446744073709551616', '\ufeffabc', 'a\u200bb', 'line1\nline2', 'tab\there', 'quote"d', "it's", '\\', '{', '[', ']', '}', ':', '- x',
    '&a', '*a', '<<', '!!binary', '%YAML 1.2', '---', '...', '#', '\u0000', '\u001b[2J', '\u007f', '\ud800', '\uffff', 'é', '𝄞'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

/** Spellings of numbers, valid and not. */
export const numberText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -5, max: 300 }).map(String),
  fc.double({ min: -10, max: 1000, noNaN: true }).map((v) => String(v)),
  fc.constantFrom('0', '-0', '1', '-1', '0.5', '1.0', '.5', '5.', '1e3', '1E-3', '+2', '2147483648', '4294967296', '9007199254740992', '1e308', '5e-324'),
  weirdText,
);

/** Small counts that keep a simulation short (and invalid ones). */
export const smallCount: fc.Arbitrary<string> = fc.oneof(fc.integer({ min: -2, max: 40 }).map(String), fc.constantFrom('0', '-1', '1.5', 'x', '0x8', '08', ''));

/** A YAML scalar written in a file: numbers, words, quoted text, nulls and oddities. */
export const yamlScalar: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -3, max: 500 }).map(String),
  fc.double({ min: -10, max: 1000, noNaN: true }).map(String),
  fc.constantFrom('~', 'null', '', '.nan', '.inf', '-.inf', 'true', 'no', '"5"', "'x'", '[]', '{}', '[1, 2]', '{a: 1}', '0x1F', '1_000', '2001-12-14', '!!str 3', '&x 1', '*x', '!!int "7"'),
  weirdText.map((s) => JSON.stringify(s)),
);

/** Ways to damage a valid text file. */
export type Mutation =
  | { readonly kind: 'delete'; readonly at: number; readonly len: number }
  | { readonly kind: 'insert'; readonly at: number; readonly text: string }
  | { readonly kind: 'replaceLine'; readonly line: number; readonly text: string }
  | { readonly kind: 'duplicateLine'; readonly line: number }
  | { readonly kind: 'bom' }
  | { readonly kind: 'crlf' }
  | { readonly kind: 'truncate'; readonly at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.oneof(weirdText, fc.constantFrom(': ', '\n', '\n  ', ',', '"', '- ', '&a ', '*a', '<<: *a\n')) }),
  fc.record({ kind: fc.constant('replaceLine' as const), line: fc.nat(), text: fc.oneof(weirdText, fc.constantFrom('bogus: 1', '  - id: x', 'clients: 5', '<<: {}')) }),
  fc.record({ kind: fc.constant('duplicateLine' as const), line: fc.nat() }),
  fc.constant({ kind: 'bom' as const }),
  fc.constant({ kind: 'crlf' as const }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);

export const mutations: fc.Arbitrary<Mutation[]> = fc.array(mutation, { minLength: 0, maxLength: 3 });

export function applyMutations(text: string, ms: readonly Mutation[]): string {
  let t = text;
  for (const m of ms) {
    const lines = t.split('\n');
    switch (m.kind) {
      case 'delete': {
        const at = t.length === 0 ? 0 : m.at % t.length;
        t = t.slice(0, at) + t.slice(at + m.len);
        break;
      }
      case 'insert': {
        const at = m.at % (t.length + 1);
        t = t.slice(0, at) + m.text + t.slice(at);
        break;
      }
      case 'replaceLine':
        lines[m.line % lines.length] = m.text;
        t = lines.join('\n');
        break;
      case 'duplicateLine': {
        const i = m.line % lines.length;
        lines.splice(i, 0, lines[i]!);
        t = lines.join('\n');
        break;
      }
      case 'bom':
        t = `\ufeff${t}`;
        break;
      case 'crlf':
        t = t.replaceAll('\n', '\r\n');
        break;
      case 'truncate':
        t = t.slice(0, m.at % (t.length + 1));
        break;
    }
  }
  return t;
}

/**
 * Nested anchors or merge keys: small text that would expand enormously if anything expanded it. Half are huge
 * (10^7 values or more when expanded: far past any limit), half small enough to be legal.
 */
export const expansionBomb: fc.Arbitrary<string> = fc
  .oneof(
    fc.record({ levels: fc.integer({ min: 7, max: 12 }), fan: fc.integer({ min: 8, max: 10 }), merge: fc.boolean(), indent: fc.constantFrom('', '  ') }),
    fc.record({ levels: fc.integer({ min: 1, max: 4 }), fan: fc.integer({ min: 2, max: 5 }), merge: fc.boolean(), indent: fc.constantFrom('', '  ') }),
  )
  .map(({ levels, fan, merge, indent }) => {
    if (merge) {
      // Each level merges the previous one twice: 2^(3 * levels) keys once expanded.
      let s = `${indent}m0: &m0 {x: 1}\n`;
      for (let i = 1; i <= levels * 3; i++) s += `${indent}m${i}: &m${i}\n${indent}  <<: [*m${i - 1}, *m${i - 1}]\n${indent}  k${i}: 1\n`;
      return s;
    }
    let s = `${indent}a0: &a0 [1, 2, 3]\n`;
    for (let i = 1; i <= levels; i++) s += `${indent}a${i}: &a${i} [${Array(fan).fill(`*a${i - 1}`).join(', ')}]\n`;
    return s;
  });
