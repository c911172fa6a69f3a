/**
 * Which behaviour the simulator follows where the reference (BLIS) is wrong: `reference` reproduces it bug for
 * bug (the default, so every parity case matches), `corrected` applies every correction listed in
 * docs/reference-differences.md. The mode is read once when a simulation is built; each layer receives a plain
 * boolean (or a different implementation) and never compares strings on its hot path.
 */
export const SEMANTICS = ['reference', 'corrected'] as const;
export type Semantics = (typeof SEMANTICS)[number];

export const DEFAULT_SEMANTICS: Semantics = 'reference';

export function isSemantics(v: string): v is Semantics {
  return (SEMANTICS as readonly string[]).includes(v);
}

/** True when `s` asks for the corrected behaviour (undefined = the default, reference). */
export function isCorrected(s: Semantics | undefined): boolean {
  return s === 'corrected';
}
