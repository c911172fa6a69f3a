/**
 * Tokenizer-free prompts. `blis observe` turns token ids into words from a fixed 100-word vocabulary (one word
 * per token, scaled by the server's measured tokens per word); `blis serve` counts one token per
 * whitespace-separated word and hashes each word to a token id, so an observe → serve round trip keeps prompt
 * lengths exactly and prompts that share words share token-id prefixes (and so prefix-cache blocks).
 */
import { GoRand } from '../gocompat/go-rand.js';
import { MAX_TOKEN_ID } from '../domain/units.js';

/** The reference's vocabulary, word for word, so tokens-per-word calibrations agree on real servers. */
export const PROMPT_VOCABULARY: readonly string[] = [
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet',
  'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango',
  'uniform', 'victor', 'whiskey', 'xray', 'yankee', 'zulu', 'apple', 'banana', 'cherry', 'date',
  'elder', 'fig', 'grape', 'hazel', 'iris', 'jasmine', 'kiwi', 'lemon', 'mango', 'nutmeg',
  'olive', 'peach', 'quince', 'rose', 'sage', 'thyme', 'umber', 'violet', 'willow', 'yarrow',
  'acorn', 'birch', 'cedar', 'daisy', 'elm', 'fern', 'ginger', 'holly', 'ivy', 'juniper',
  'kelp', 'laurel', 'maple', 'nettle', 'oak', 'pine', 'quinoa', 'reed', 'spruce', 'tulip',
  'umbra', 'vine', 'walnut', 'xylem', 'yew', 'zinnia', 'alder', 'basil', 'clover', 'dill',
  'fennel', 'garlic', 'hemp', 'indigo', 'jade', 'kumquat', 'lily', 'moss', 'neem', 'orchid',
  'poppy', 'rye', 'saffron', 'tea', 'urchin', 'verbena', 'wheat', 'xeris', 'yucca', 'zest',
];

function vocabWord(i: number): string {
  const n = PROMPT_VOCABULARY.length;
  return PROMPT_VOCABULARY[((i % n) + n) % n] as string;
}

/**
 * `wordCount` words, the i-th chosen by token i (by position past the tokens), each followed by a space:
 * different token arrays give different prompts, equal ones equal prompts.
 */
export function tokensToPrompt(tokens: ArrayLike<number>, wordCount: number): string {
  const parts: string[] = new Array<string>(wordCount);
  for (let i = 0; i < wordCount; i++) parts[i] = vocabWord(i < tokens.length ? (tokens[i] as number) : i);
  return parts.length === 0 ? '' : `${parts.join(' ')} `;
}

/** Words for `tokens` tokens at `tokensPerWord` (at least one). */
export function wordsFor(tokens: number, tokensPerWord: number): number {
  const tpw = tokensPerWord > 0 ? tokensPerWord : 1;
  const w = Math.round(tokens / tpw);
  return w > 0 ? w : 1;
}

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = (1n << 64n) - 1n;

function fnv64a(bytes: Uint8Array, h = FNV64_OFFSET): bigint {
  let x = h;
  for (const b of bytes) x = ((x ^ BigInt(b)) * FNV64_PRIME) & MASK64;
  return x;
}

/**
 * A prefix group's shared text: `round(length / tokensPerWord)` vocabulary words drawn from a Go rand seeded
 * with FNV-64a(seed as 8 little-endian bytes ++ group name), so a given seed and group always give the same
 * text (and the reference's, on the same vocabulary).
 */
export function prefixGroupText(group: string, length: number, seed: bigint, tokensPerWord: number): string {
  const len = length > 0 ? length : 50;
  const words = wordsFor(len, tokensPerWord);
  const seedBytes = new Uint8Array(8);
  new DataView(seedBytes.buffer).setBigUint64(0, BigInt.asUintN(64, seed), true);
  const h = fnv64a(new TextEncoder().encode(group), fnv64a(seedBytes));
  const rng = new GoRand(BigInt.asIntN(64, h));
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(PROMPT_VOCABULARY[rng.intn(PROMPT_VOCABULARY.length)] as string);
  return `${out.join(' ')} `;
}

/** FNV-1a (32-bit) of a word's UTF-16 code units: a stable, well-spread token id per distinct word. */
function wordId(w: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < w.length; i++) {
    h ^= w.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % MAX_TOKEN_ID;
}

/** Token ids of a text: one per whitespace-separated word. */
export function textTokenIds(text: string): Int32Array {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const out = new Int32Array(words.length);
  for (let i = 0; i < words.length; i++) out[i] = wordId(words[i] as string);
  return out;
}

/** The i-th generated output word (serve's completion text). */
export function outputWord(i: number): string {
  return vocabWord(i * 37 + 11);
}
