/**
 * `blis replay --concurrent-sessions N --total-sessions L` (upstream PR #1486's `BuildSessionPool`): the corpus
 * of closed-loop sessions cut or stretched to L sessions. L at most the corpus: its first L sessions. More:
 * round-robin copies after the originals, copy k of session S named `S_dup<k>` (k counts copies globally from 1),
 * each with its own token stream (seeded in order from `rand(seed)`), its own cursors over the recorded lengths
 * and think times, and one cache-busting token in round 0 right after the session's group prefix — so a copy
 * shares the system prompt with its source but no conversation (upstream puts the token first, before any
 * prefix). A copy's requests are named after the source's with `_dup<k>` appended.
 */
import { GoRand } from '../gocompat/go-rand.js';
import { Request } from '../domain/request.js';
import { SequenceSampler } from './replay-closed-loop.js';
import type { SessionBlueprint } from './sessions/types.js';
import type { LengthSampler } from './spec/length.js';
import { randomTokenIds } from './tokens.js';

function cloneSampler<T extends LengthSampler | null>(s: T): T {
  return (s instanceof SequenceSampler ? s.clone() : s) as T;
}

function copyRequest(src: Request, id: string, sessionId: string, input: Int32Array): Request {
  const r = new Request(id, input, src.outputTokens, src.arrivalTime, src.maxOutputLen, src.deadline);
  r.tenantId = src.tenantId;
  r.sloClass = src.sloClass;
  r.sessionId = sessionId;
  r.roundIndex = src.roundIndex;
  r.textTokens = src.textTokens;
  r.imageTokens = src.imageTokens;
  r.audioTokens = src.audioTokens;
  r.videoTokens = src.videoTokens;
  r.reasonRatio = src.reasonRatio;
  r.model = src.model;
  r.sloTargetUs = src.sloTargetUs;
  r.clientId = src.clientId;
  r.prefixGroup = src.prefixGroup;
  r.prefixLength = src.prefixLength;
  r.streaming = src.streaming;
  r.adapter = src.adapter;
  return r;
}

/**
 * The corpus as `total` sessions (see the module comment); `roundZeros[i]` is round 0 of `blueprints[i]`.
 * @throws RangeError for a total below 1 or an empty corpus.
 */
export function expandSessionCorpus(blueprints: readonly SessionBlueprint[], roundZeros: readonly Request[], total: number, seed: bigint): { blueprints: SessionBlueprint[]; roundZeros: Request[] } {
  if (blueprints.length === 0 || blueprints.length !== roundZeros.length) throw new RangeError('expandSessionCorpus: one round 0 per session is needed');
  if (!Number.isSafeInteger(total) || total < 1) throw new RangeError(`total sessions must be >= 1, got ${total}`);
  if (total <= blueprints.length) return { blueprints: blueprints.slice(0, total), roundZeros: roundZeros.slice(0, total) };
  const rng = new GoRand(seed);
  const bps = [...blueprints];
  const r0s = [...roundZeros];
  for (let i = blueprints.length, k = 1; i < total; i++, k++) {
    const src = blueprints[i % blueprints.length]!;
    const srcR0 = roundZeros[i % blueprints.length]!;
    const id = `${src.sessionId}_dup${k}`;
    const srng = new GoRand(rng.int63Big());
    const at = src.prefix === null || src.prefix.length > srcR0.inputLen ? 0 : src.prefix.length;
    const input = new Int32Array(srcR0.inputLen + 1);
    input.set(srcR0.inputTokens.subarray(0, at), 0);
    input.set(randomTokenIds(srng, 1), at);
    input.set(srcR0.inputTokens.subarray(at), at + 1);
    bps.push({
      ...src,
      sessionId: id,
      rng: srng,
      inputSampler: cloneSampler(src.inputSampler),
      outputSampler: cloneSampler(src.outputSampler),
      thinkTimeSampler: cloneSampler(src.thinkTimeSampler),
      ...(src.recordedRounds === undefined ? {} : { recordedRounds: src.recordedRounds.map((r) => ({ ...r, id: `${r.id}_dup${k}` })) }),
    });
    r0s.push(copyRequest(srcR0, `${srcR0.id}_dup${k}`, id, input));
  }
  return { blueprints: bps, roundZeros: r0s };
}
