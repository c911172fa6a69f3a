/**
 * The caps every text input shares, YAML or JSON: the size limit and its check, and the two error codes the
 * parsers raise (decoders raise their own codes for what the text means).
 */
import { BlisError } from '../domain/errors.js';
import { INPUT_LIMITS } from '../domain/limits.js';
import { formatBytes } from './bytes.js';

export interface TextLimits {
  /** Largest input accepted, in bytes of UTF-8 (checked on the string's length, a lower bound). */
  readonly maxBytes: number;
  /** Largest tree accepted, counted as if every alias and merge key were expanded. */
  readonly maxNodes: number;
  /** Deepest nesting accepted, with aliases expanded. */
  readonly maxDepth: number;
}

/** Generous for any real configuration; small enough that a hostile file fails in milliseconds. */
export const DEFAULT_TEXT_LIMITS: TextLimits = { maxBytes: INPUT_LIMITS.bytes, maxNodes: INPUT_LIMITS.expandedValues, maxDepth: INPUT_LIMITS.depth };

/** Code of every error raised here; decoders raise their own codes for what the text means. */
export const INPUT_TOO_LARGE = 'INPUT_TOO_LARGE';
export const INPUT_SYNTAX = 'INPUT_SYNTAX';

/** Refuses text longer than `maxBytes` with a message naming the file and the limit. */
export function checkTextSize(text: string, file: string, maxBytes: number = DEFAULT_TEXT_LIMITS.maxBytes): void {
  if (text.length > maxBytes) {
    throw new BlisError(
      INPUT_TOO_LARGE,
      `${file}: the file is larger than ${formatBytes(maxBytes)} (${formatBytes(text.length)}); blis-ts refuses inputs this large — split it or pass a smaller file`,
      { file },
    );
  }
}

export { formatBytes };
