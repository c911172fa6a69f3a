/**
 * The reference's per-window generation path, taken when any lifecycle window overrides its client's rate or
 * distributions (ServeGen-style time-varying workloads, cohort spikes with trace rates).
 *
 * Per window it computes a target rate, draws `ceil(rate × seconds)` IATs, rescales them so they sum to exactly
 * the window length (the last gap absorbs the rounding, which puts the last arrival on the window end, where it is
 * dropped), and samples lengths from the window's distributions. Reproduced as the reference behaves, including:
 * - clients without windows produce nothing here (and draw no client seed);
 * - prefix tokens are drawn for every group but never prepended to single-turn requests, which carry no prefix
 *   group either; their deadlines are left at 0 whatever the client's timeout says (only `--timeout` sets them);
 * - multi-turn clients generate sessions from the window's gaps (one, from the first gap, for single_session),
 *   with the prefix, the session deadline and no SLO target; rounds at or past the window end are dropped.
 * `corrected` (--semantics corrected) gives single-turn requests what the steady-state path gives them (the
 * group prefix and the client's deadline) and keeps each window's last arrival, which the rescaling puts
 * exactly on the window end (so ceil(rate x duration) requests per window, not one fewer).
 */
import { GoRand } from '../../gocompat/go-rand.js';
import { concatTokens, randomTokenIds } from '../tokens.js';
import { newArrivalSampler } from './arrival.js';
import { computeDeadline, generatePrefixTokens, isClosedLoop } from './draft.js';
import type { Draft } from './draft.js';
import { goInt64 } from '../../gocompat/go-math.js';
import { newLengthSampler } from './length.js';
import type { LengthSampler } from './length.js';
import { generateReasoningSession } from './reasoning.js';
import { GenerationBudget } from './budget.js';
import { LIMITS, checkLimit } from '../../domain/limits.js';
import type { ActiveWindow, ArrivalSpec, ClientSpec, DistSpec } from './types.js';

interface WindowParams {
  readonly arrival: ArrivalSpec;
  readonly inputDist: DistSpec;
  readonly outputDist: DistSpec;
  /** The window's rate weight: its trace_rate, else the client's rate_fraction. */
  readonly traceRate: number;
}

function resolveWindow(c: ClientSpec, w: ActiveWindow): WindowParams {
  return {
    arrival: w.arrival ?? c.arrival,
    inputDist: w.inputDist ?? c.inputDist,
    outputDist: w.outputDist ?? c.outputDist,
    traceRate: w.traceRate ?? c.rateFraction,
  };
}

/**
 * Requests/second for window `w` of client `c`: its trace rate verbatim in absolute mode (aggregate 0 and an
 * explicit trace_rate), otherwise aggregate × its weight / the weights of every client active during `w` (the
 * first overlapping window of each; clients without windows contribute their rate_fraction).
 */
export function computeProportionalRate(c: ClientSpec, w: ActiveWindow, all: readonly ClientSpec[], aggregateRate: number, totals?: Map<string, number>): number {
  const own = resolveWindow(c, w).traceRate;
  if (aggregateRate === 0 && w.traceRate !== null) return own;
  const total = totals === undefined ? activeWeight(w, all) : memo(totals, `${w.startUs}:${w.endUs}`, () => activeWeight(w, all));
  if (total === 0) return 0;
  return aggregateRate * (own / total);
}

function memo(m: Map<string, number>, key: string, f: () => number): number {
  let v = m.get(key);
  if (v === undefined) m.set(key, (v = f()));
  return v;
}

/**
 * The summed weight of the clients active during `w`. It depends on the window's bounds only, so one generation
 * computes it once per distinct window: a cohort's members share theirs, and the sum over every client would
 * otherwise be repeated for each member (quadratic in the population).
 */
function activeWeight(w: ActiveWindow, all: readonly ClientSpec[]): number {
  let total = 0.0;
  for (const o of all) {
    if (o.lifecycle === null || o.lifecycle.windows.length === 0) {
      total += o.rateFraction;
      continue;
    }
    const overlapping = o.lifecycle.windows.find((ow) => ow.startUs < w.endUs && w.startUs < ow.endUs);
    if (overlapping !== undefined) total += resolveWindow(o, overlapping).traceRate;
  }
  return total;
}

/** Scales integer gaps so they sum to exactly `target`, preserving their ratios; the last gap takes the residue. */
export function rescaleIatsToDuration(iats: readonly number[], target: number): number[] {
  if (iats.length === 0) return [];
  let sum = 0;
  for (const v of iats) sum += v;
  if (sum === 0) return [...iats];
  const scale = target / sum;
  let scaledSum = 0;
  const out = iats.map((v) => {
    const s = goInt64(v * scale);
    scaledSum += s;
    return s;
  });
  out[out.length - 1] = out[out.length - 1]! + (target - scaledSum);
  return out;
}

/** Sessions of a multi-turn client inside one window, started at the (rescaled) gaps. */
function windowSessions(c: ClientSpec, w: ActiveWindow, iats: readonly number[], rng: GoRand, samplers: [LengthSampler, LengthSampler], prefix: Int32Array | null, budget: GenerationBudget, keepTags: boolean): Draft[] {
  const reasoning = c.reasoning!;
  const mt = reasoning.multiTurn!;
  const out: Draft[] = [];
  const session = (start: number): void => {
    const rounds = generateReasoningSession({
      rng,
      client: c,
      reasoning: { ...reasoning, multiTurn: mt },
      inputSampler: samplers[0],
      outputSampler: samplers[1],
      startTime: start,
      prefix,
      deadline: (t) => computeDeadline(t, c.timeout, true),
      sloTargetUs: 0,
      keepTags,
    }, { until: w.endUs, drain: true, budget });
    for (const r of rounds) out.push(r);
  };
  if (mt.singleSession) {
    const start = w.startUs + (iats[0] ?? 0);
    if (start < w.endUs) session(start);
    return out;
  }
  let t = w.startUs;
  for (const iat of iats) {
    t += iat;
    if (t >= w.endUs) break;
    session(t);
  }
  return out;
}

interface Generation {
  readonly all: readonly ClientSpec[];
  readonly aggregateRate: number;
  readonly budget: GenerationBudget;
  readonly totals: Map<string, number>;
  /** --semantics corrected (see the module comment). */
  readonly corrected: boolean;
  readonly horizon: number;
}

function windowDrafts(c: ClientSpec, w: ActiveWindow, g: Generation, rng: GoRand, prefix: Int32Array | null): Draft[] {
  const params = resolveWindow(c, w);
  const rate = computeProportionalRate(c, w, g.all, g.aggregateRate, g.totals);
  if (rate <= 0) return [];
  const durationUs = w.endUs - w.startUs;
  const n = goInt64(Math.ceil(rate * (durationUs / 1e6)));
  if (n <= 0) return [];
  // The window's gaps are all drawn before any request (and rescaled together): refuse a count that could not be.
  checkLimit(n, LIMITS.requests, `client "${c.id}": the arrivals of one lifecycle window (rate x duration)`, 'lower the window\'s trace_rate, shorten it, or set a shorter horizon');
  const { budget, corrected, horizon } = g;
  const arrival = newArrivalSampler(params.arrival, rate / 1e6, corrected);
  const inputSampler = newLengthSampler(params.inputDist);
  const outputSampler = newLengthSampler(params.outputDist);
  const raw: number[] = [];
  for (let i = 0; i < n; i++) raw.push(arrival.sampleIat(rng));
  const iats = rescaleIatsToDuration(raw, durationUs);
  if (c.reasoning?.multiTurn != null) {
    checkLimit(c.reasoning.multiTurn.maxRounds, LIMITS.drawnSessionRounds, `client "${c.id}": reasoning.multi_turn.max_rounds`, 'every round of every session of a time-varying client is drawn (the reference\'s random streams); lower max_rounds');
    return windowSessions(c, w, iats, rng, [inputSampler, outputSampler], prefix, budget, corrected);
  }
  const out: Draft[] = [];
  const withPrefix = corrected && prefix !== null && prefix.length > 0;
  let t = w.startUs;
  for (const iat of iats) {
    t += iat;
    // The window end is the last arrival's place unless it is the horizon, where arrivals end.
    if (t > w.endUs || (t === w.endUs && !(corrected && w.endUs < horizon))) break;
    const inLen = inputSampler.sample(rng);
    const outLen = outputSampler.sample(rng);
    const input = randomTokenIds(rng, inLen);
    const output = randomTokenIds(rng, outLen);
    if (!corrected) {
      budget.request(inLen + outLen, c.id);
      out.push({ client: c, arrival: t, input, output, prefixGroup: '', prefixLength: 0, deadline: 0, modality: null });
      continue;
    }
    const full = withPrefix ? concatTokens(prefix, input) : input;
    budget.request(full.length + outLen, c.id);
    out.push({
      client: c,
      arrival: t,
      input: full,
      output,
      prefixGroup: c.prefixGroup,
      prefixLength: withPrefix ? prefix.length : 0,
      deadline: computeDeadline(t, c.timeout, isClosedLoop(c)),
      modality: null,
    });
  }
  return out;
}

/** Unsorted drafts of every client's windows (windows clipped to the horizon; those starting at or after it skipped). */
export function generateTimeVaryingDrafts(
  clients: readonly ClientSpec[],
  aggregateRate: number,
  horizon: number,
  wg: GoRand,
  budget: GenerationBudget = new GenerationBudget(),
  corrected = false,
  /** The group prefixes when the caller has drawn them already (the same first draws from `wg`). */
  drawn: ReadonlyMap<string, Int32Array> | null = null,
): Draft[] {
  const g: Generation = { all: clients, aggregateRate, budget, totals: new Map(), corrected, horizon };
  // Drawn for every group to keep the workload stream aligned; only multi-turn sessions use them here.
  const prefixes = drawn ?? generatePrefixTokens(clients, wg, corrected);
  const drafts: Draft[] = [];
  for (const c of clients) {
    if (c.lifecycle === null || c.lifecycle.windows.length === 0) continue;
    const rng = new GoRand(wg.int63Big());
    for (const w of c.lifecycle.windows) {
      if (w.startUs >= horizon) continue;
      const clipped = w.endUs > horizon ? { ...w, endUs: horizon } : w;
      for (const d of windowDrafts(c, clipped, g, rng, prefixes.get(c.prefixGroup) ?? null)) drafts.push(d);
    }
  }
  return drafts;
}
