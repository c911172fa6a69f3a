/**
 * Prompt synthesis for observe (blis-cluster.md §11.2): calibrate the server's tokens per vocabulary word
 * once, then turn each generated request into a word prompt of about its token length, with prefix groups
 * sharing one deterministic prefix text so the server's prefix cache sees real sharing.
 */
import type { Request } from '../domain/request.js';
import { SloPriorityMap } from '../domain/slo.js';
import { PROMPT_VOCABULARY, prefixGroupText, tokensToPrompt, wordsFor } from '../workload/word-prompt.js';
import { sendRequest, type ClientConfig, type PendingRequest } from './client.js';

export interface TokensPerWord {
  readonly ratio: number;
  /** Why the 1.0 fallback was used ('' when calibrated). */
  readonly warning: string;
}

/** Sends the 100 vocabulary words (max_tokens 1) and divides the server's prompt_tokens by 100. */
export async function calibrateTokensPerWord(cfg: ClientConfig): Promise<TokensPerWord> {
  const n = PROMPT_VOCABULARY.length;
  const res = await sendRequest(
    { prompt: PROMPT_VOCABULARY.join(' '), maxOutputTokens: 1, minTokens: 0, unconstrained: false, streaming: false, sloClass: '', vllmPriority: 0, tenantId: '', sloTargetUs: 0 },
    { ...cfg, timeoutMs: Math.min(cfg.timeoutMs, 30_000) },
  );
  const fallback = (why: string): TokensPerWord => ({ ratio: 1, warning: `prompt token calibration failed (${why}); using 1 token per word` });
  if (res.status !== 'ok') return fallback(res.errorMessage === '' ? `status ${res.status}` : res.errorMessage);
  if (res.serverInputTokens <= 0) return fallback('the server reported no prompt_tokens');
  const ratio = res.serverInputTokens / n;
  if (ratio < 1 || ratio > 3) return { ratio: 1, warning: `prompt token calibration ratio ${ratio.toFixed(3)} is outside [1, 3]; using 1 token per word` };
  return { ratio, warning: '' };
}

export interface PromptOptions {
  readonly tokensPerWord: number;
  readonly seed: bigint;
  /** Prefix group → shared prefix length in tokens. */
  readonly prefixGroups: ReadonlyMap<string, number>;
  readonly unconstrained: boolean;
  /** Stream this request? (workload flag, --no-streaming, --record-itl already folded in) */
  readonly streaming: (req: Request) => boolean;
}

/** The request → wire-request conversion used for every dispatch. */
export function pendingFactory(o: PromptOptions): (req: Request) => PendingRequest {
  const prefixText = new Map<string, string>();
  for (const [g, len] of o.prefixGroups) prefixText.set(g, prefixGroupText(g, len, o.seed, o.tokensPerWord));
  const slo = new SloPriorityMap();
  return (req) => {
    const inputLen = req.inputLen;
    const text = req.prefixGroup === '' ? undefined : prefixText.get(req.prefixGroup);
    let prompt: string;
    if (text !== undefined) {
      const prefixLen = o.prefixGroups.get(req.prefixGroup) ?? 0;
      const suffixTokens = Math.max(1, inputLen - prefixLen);
      const start = Math.min(Math.max(0, inputLen - suffixTokens), inputLen);
      prompt = text + tokensToPrompt(req.inputTokens.subarray(start, inputLen), wordsFor(suffixTokens, o.tokensPerWord));
    } else {
      prompt = tokensToPrompt(req.inputTokens, wordsFor(inputLen, o.tokensPerWord));
    }
    return {
      prompt,
      maxOutputTokens: req.maxOutputLen,
      minTokens: o.unconstrained ? 0 : req.maxOutputLen,
      unconstrained: o.unconstrained,
      streaming: o.streaming(req),
      sloClass: req.sloClass,
      vllmPriority: req.sloClass === '' ? 0 : slo.invertForVllm(req.sloClass),
      tenantId: req.tenantId,
      sloTargetUs: req.sloTargetUs,
      adapter: req.adapter,
    };
  };
}
