/**
 * The `inference_perf:` workload source (blis-cluster.md §9.6): a compact description of an inference-perf
 * benchmark (shared system prompts × users, rate stages) that expands into ordinary clients before generation.
 *
 * Expansion, as the reference's ExpandInferencePerfSpec does it:
 * - P prompts × U users become P×U clients `prompt-<p>-user-<u>` (multi-stage: `stage-<s>-prompt-<p>-user-<u>`
 *   per stage), tenant = prefix group = `prompt-<p>`, class `standard`, constant input `question_len` on top of a
 *   `system_prompt_len` group prefix, constant output `output_len`.
 * - One stage: the aggregate rate is the stage rate and every client gets an equal rate fraction. Without
 *   multi-turn, each client pre-draws exactly its share of `int(rate × duration)` gaps, normalised to span the
 *   stage (inference-perf's ConstantLoadTimer); with multi-turn, each client is one session.
 * - Several stages: back-to-back lifecycle windows; each stage's clients draw Poisson gaps at
 *   `rate / (P×U)` per client, and the aggregate rate is the sum of the stage rates.
 * - Multi-turn chat: every client is a single closed-loop session of `⌊share of int(rate × duration)⌋` rounds,
 *   think time `(P×U)/rate` seconds, no context accumulation (real inference-perf resends fixed-size turns).
 *   With `openLoop` (--semantics corrected) multi-turn chat arrives as inference-perf's `constant` load sends it,
 *   open loop like the single-turn expansion, and each user resends its own prompt (system prompt + question):
 *   the user is its own prefix group of `system_prompt_len + question_len − 1` tokens plus one fresh token, so
 *   every request after a user's first finds all but its last prompt token in the prefix cache, as vLLM does.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import type { ArrivalSampler } from './arrival.js';
import { PoissonSampler } from './arrival.js';
import { goInt64 } from '../../gocompat/go-math.js';
import type { SpecPath } from './errors.js';
import type { ActiveWindow, ClientSpec, DistSpec, InferencePerfSpec, ReasoningSpec, SharedPrefixSpec, StageSpec } from './types.js';

/** Pre-drawn gaps, handed out in order; 0 once exhausted, which ends the client's arrivals. */
export class NormalizedExponentialSampler implements ArrivalSampler {
  private readonly gaps: number[];
  private next = 0;

  /**
   * Draws `count` exponential gaps and rescales them to sum to `durationUs` (each truncated to whole µs, at
   * least 1), so the client emits exactly `count` requests over the stage.
   */
  constructor(rng: GoRand, count: number, durationUs: number) {
    if (!(count > 0) || !(durationUs > 0) || durationUs < count) {
      throw new RangeError(`NormalizedExponentialSampler: need 0 < count (${count}) <= durationUs (${durationUs})`);
    }
    const rate = count / durationUs;
    const raw: number[] = [];
    let sum = 0.0;
    for (let i = 0; i < count; i++) {
      const v = rng.expFloat64() / rate;
      raw.push(v);
      sum += v;
    }
    const scale = durationUs / sum;
    this.gaps = raw.map((v) => Math.max(1, goInt64(v * scale)));
  }

  sampleIat(): number {
    return this.next < this.gaps.length ? this.gaps[this.next++]! : 0;
  }
}

/** A client with no share of a stage's requests (open-loop multi-turn with fewer requests than users). */
class NoArrivals implements ArrivalSampler {
  sampleIat(): number {
    return 0;
  }
}

/** One problem with an inference_perf block, located by its spec path. */
export interface InferencePerfProblem {
  readonly path: SpecPath;
  readonly problem: string;
  readonly fix: string;
}

function requestCount(stage: StageSpec): number {
  return goInt64(stage.rate * stage.duration);
}

/**
 * The first problem of `ip`, or null. Covers the reference's validation plus the errors its expansion raises at
 * generation time (a stage producing no request, a client left without requests), reported here up front.
 */
export function findInferencePerfProblem(ip: InferencePerfSpec): InferencePerfProblem | null {
  const at = (path: SpecPath, problem: string, fix: string): InferencePerfProblem => ({ path: ['inference_perf', ...path], problem, fix });
  if (ip.stages.length === 0) return at(['stages'], 'at least one stage is required', 'add a stage, e.g. stages: [{rate: 5, duration: 600}]');
  for (const [i, s] of ip.stages.entries()) {
    if (!Number.isInteger(s.duration) || s.duration <= 0) {
      return at(['stages', i, 'duration'], `duration must be a positive whole number of seconds, got ${s.duration}`, 'set duration in seconds');
    }
    if (!Number.isFinite(s.rate) || s.rate <= 0) return at(['stages', i, 'rate'], `rate must be a finite positive number, got ${s.rate}`, 'set rate in requests/second');
  }
  const sp = ip.sharedPrefix;
  if (sp === null) return at(['shared_prefix'], 'shared_prefix is required', 'add shared_prefix with the prompt/user counts and lengths');
  const p: SpecPath = ['shared_prefix'];
  if (sp.numUniqueSystemPrompts <= 0) return at([...p, 'num_unique_system_prompts'], `must be positive, got ${sp.numUniqueSystemPrompts}`, 'set at least 1');
  if (sp.numUsersPerSystemPrompt <= 0) return at([...p, 'num_users_per_system_prompt'], `must be positive, got ${sp.numUsersPerSystemPrompt}`, 'set at least 1');
  for (const [key, v] of [['system_prompt_len', sp.systemPromptLen], ['question_len', sp.questionLen], ['output_len', sp.outputLen]] as const) {
    if (v < 0) return at([...p, key], `must be non-negative, got ${v}`, 'use a token count >= 0');
  }
  const clients = sp.numUniqueSystemPrompts * sp.numUsersPerSystemPrompt;
  if (clients > 1_000_000) return at(p, `${clients} clients exceed the limit of 1000000`, 'reduce the prompt or user counts');
  const perStage = ip.stages.length === 1 || sp.enableMultiTurnChat;
  for (const [i, s] of ip.stages.entries()) {
    if (!perStage) break;
    const total = requestCount(s);
    if (total < 1) return at(['stages', i], `rate ${s.rate} × duration ${s.duration} s gives no request`, 'increase rate or duration');
    if (ip.stages.length === 1 && !sp.enableMultiTurnChat) {
      if (total < clients) return at(['stages', i], `${total} requests cannot give each of the ${clients} clients one`, 'increase rate or duration, or use fewer prompts/users');
      if (Math.ceil(total / clients) > 10_000_000) return at(['stages', i], 'more than 10000000 requests per client', 'reduce rate or duration');
      if (s.duration * 1_000_000 < Math.ceil(total / clients)) return at(['stages', i], 'more requests per client than microseconds in the stage', 'reduce rate');
    }
  }
  return null;
}

/** Splits `total` over `n` so the counts differ by at most one, the larger ones first. */
export function distributeEvenly(total: number, n: number): number[] {
  const base = Math.floor(total / n);
  const rem = total % n;
  return Array.from({ length: n }, (_, i) => base + (i < rem ? 1 : 0));
}

function constant(value: number): DistSpec {
  return { type: 'constant', params: new Map([['value', value]]), file: '' };
}

/** Multi-turn settings for one session of `rounds` rounds cycling `sessions` sessions at `rate` req/s. */
function sessionReasoning(rate: number, sessions: number, rounds: number): ReasoningSpec {
  return {
    reasonRatioDist: constant(0),
    multiTurn: { maxRounds: rounds, thinkTimeUs: goInt64((sessions / rate) * 1e6), contextGrowth: '', singleSession: true, toolCall: null },
  };
}

function client(id: string, group: string, sp: SharedPrefixSpec, rateFraction: number): ClientSpec {
  return {
    id,
    tenantId: group,
    sloClass: 'standard',
    model: '',
    adapter: '',
    rateFraction,
    arrival: { process: 'poisson', cv: null, shape: null, scale: null },
    inputDist: constant(sp.questionLen),
    outputDist: constant(sp.outputLen),
    prefixGroup: group,
    prefixLength: sp.systemPromptLen,
    streaming: false,
    network: null,
    multimodal: null,
    reasoning: null,
    timeout: null,
    sloTargetUs: null,
    closedLoop: null,
    concurrency: 0,
    thinkTimeUs: 0,
    lifecycle: null,
  };
}

export interface ExpandedInferencePerf {
  readonly clients: ClientSpec[];
  readonly aggregateRate: number;
  /** "reasoning" with multi-turn chat, else "language". */
  readonly category: string;
}

/** Stage windows laid end to end from t = 0. */
function stageWindows(stages: readonly StageSpec[]): ActiveWindow[] {
  let offset = 0;
  return stages.map((s) => {
    const w: ActiveWindow = { startUs: offset, endUs: offset + s.duration * 1_000_000, traceRate: null, arrival: null, inputDist: null, outputDist: null };
    offset = w.endUs;
    return w;
  });
}

/**
 * Open-loop multi-turn chat (see the module comment): the user's whole prompt is its own prefix group, less one
 * token sent fresh each time so a request is never a full-prefix hit (vLLM recomputes the last token).
 */
function resentPrompt(c: ClientSpec, sp: SharedPrefixSpec, p: number, u: number): ClientSpec {
  const prompt = sp.systemPromptLen + sp.questionLen;
  if (prompt < 2) return c;
  return { ...c, prefixGroup: `prompt-${p}-user-${u}`, prefixLength: prompt - 1, inputDist: constant(1) };
}

function stageSampler(rng: GoRand, count: number, durationUs: number): ArrivalSampler {
  return count > 0 ? new NormalizedExponentialSampler(rng, count, durationUs) : new NoArrivals();
}

export interface ExpandOptions {
  /** --semantics corrected: multi-turn chat as open-loop arrivals that resend each user's prompt. */
  readonly openLoop?: boolean;
}

/**
 * The clients an inference_perf block stands for (see the module comment).
 * @throws RangeError when {@link findInferencePerfProblem} reports a problem.
 */
export function expandInferencePerf(ip: InferencePerfSpec, opts: ExpandOptions = {}): ExpandedInferencePerf {
  const bad = findInferencePerfProblem(ip);
  if (bad !== null) throw new RangeError(`inference_perf: ${bad.path.join('.')}: ${bad.problem}`);
  const sp = ip.sharedPrefix!;
  const n = sp.numUniqueSystemPrompts * sp.numUsersPerSystemPrompt;
  const openLoop = opts.openLoop === true && sp.enableMultiTurnChat;
  const multiTurn = sp.enableMultiTurnChat && !openLoop;
  const category = multiTurn ? 'reasoning' : 'language';
  const clients: ClientSpec[] = [];
  const each = (name: (p: number, u: number) => string, make: (id: string, group: string, idx: number) => ClientSpec): void => {
    let idx = 0;
    for (let p = 0; p < sp.numUniqueSystemPrompts; p++) {
      for (let u = 0; u < sp.numUsersPerSystemPrompt; u++) {
        const c = make(name(p, u), `prompt-${p}`, idx++);
        clients.push(openLoop ? resentPrompt(c, sp, p, u) : c);
      }
    }
  };
  if (ip.stages.length === 1) {
    const stage = ip.stages[0]!;
    const shares = distributeEvenly(requestCount(stage), n);
    const durationUs = stage.duration * 1_000_000;
    each(
      (p, u) => `prompt-${p}-user-${u}`,
      (id, group, idx) => {
        const c = client(id, group, sp, 1.0 / n);
        if (multiTurn) c.reasoning = sessionReasoning(stage.rate, n, shares[idx]!);
        else c.customSamplerFactory = (rng) => stageSampler(rng, shares[idx]!, durationUs);
        return c;
      },
    );
    return { clients, aggregateRate: stage.rate, category };
  }
  const windows = stageWindows(ip.stages);
  let aggregateRate = 0;
  for (const s of ip.stages) aggregateRate += s.rate;
  ip.stages.forEach((stage, s) => {
    const perClient = stage.rate / n / 1e6;
    const shares = multiTurn ? distributeEvenly(requestCount(stage), n) : null;
    each(
      (p, u) => `stage-${s}-prompt-${p}-user-${u}`,
      (id, group, idx) => {
        const c = client(id, group, sp, 1.0);
        // The per-client rate is exact; the dummy fraction only keeps the client from being skipped as rate-less.
        c.customSamplerFactory = () => new PoissonSampler(perClient);
        c.lifecycle = { windows: [windows[s]!] };
        if (shares !== null) c.reasoning = sessionReasoning(stage.rate, n, shares[idx]!);
        return c;
      },
    );
  });
  return { clients, aggregateRate, category };
}
