/**
 * Candidates from what searches hand in: a policy bundle (YAML or JSON), a JavaScript file for one control
 * point, or a GEPA-style dict of text components. Nothing is validated here: a broken candidate is scored
 * (0, with the reason) by the evaluator, not rejected at the door.
 */
import { CONTROL_POINTS, type ControlPoint } from '../policy/view.js';
import type { SandboxEngineName } from '../sandbox/types.js';
import type { Candidate } from './types.js';

/** `metadata.id` of a bundle when it can be read cheaply (a JSON bundle, or a YAML `id:` line under metadata). */
function metadataId(text: string): string | null {
  try {
    const doc = JSON.parse(text) as { metadata?: { id?: unknown } };
    return typeof doc.metadata?.id === 'string' ? doc.metadata.id : null;
  } catch {
    const m = /^metadata:\s*\n(?:[ \t]+.*\n)*?[ \t]+id:\s*["']?([^"'\n#]+?)["']?\s*$/m.exec(text) ?? /^metadata:\s*\{[^}]*\bid:\s*["']?([^,"'}]+)/m.exec(text);
    return m === null ? null : (m[1] as string).trim();
  }
}

export function candidateFromBundle(label: string, text: string, files: Readonly<Record<string, string>> = {}): Candidate {
  return { id: metadataId(text) ?? label, label, bundle: text, files };
}

/** Code for one control point, run in `engine`. */
export function candidateFromCode(label: string, code: string, point: ControlPoint, engine: SandboxEngineName = 'fast'): Candidate {
  const bundle = JSON.stringify({ [point]: { type: 'code', language: 'javascript', engine, source: code } }, null, 2);
  return { id: label, label, bundle, files: {} };
}

/**
 * A GEPA-style candidate: `{bundle: TEXT}` (a whole bundle) or control-point keys holding JavaScript code.
 * Unknown component names are an error of the candidate's shape (reported by the caller).
 */
export function candidateFromComponents(components: Readonly<Record<string, string>>, id: string, engine: SandboxEngineName = 'fast'): Candidate {
  if (typeof components['bundle'] === 'string') return candidateFromBundle(id, components['bundle']);
  const sections: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(components)) {
    if (!(CONTROL_POINTS as readonly string[]).includes(k)) {
      throw new RangeError(`unknown candidate component "${k}"; use "bundle" or control points ${CONTROL_POINTS.join(', ')}`);
    }
    if (typeof v !== 'string') throw new RangeError(`candidate component "${k}" must be text`);
    sections[k] = { type: 'code', language: 'javascript', engine, source: v };
  }
  return { id, label: id, bundle: JSON.stringify(sections, null, 2), files: {} };
}
