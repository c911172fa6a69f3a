/**
 * The reference's GenerateWorkload: the spec's requests, with closed-loop sessions cut down to round 0 plus a
 * blueprint each, and concurrency users as seed requests plus unlimited blueprints.
 *
 * 1. Generate everything as open loop (spec/generate.ts), sorted and capped.
 * 2. Closed-loop multi-turn clients, in client order: their sessions (found by client id among the round-0
 *    requests) in string order, each drawing its blueprint seed from `GoRand(seed + 7919)`. The blueprint prefix
 *    is the first `prefix_length` tokens of the client's first round-0 input, and only when the client names a
 *    prefix group AND an explicit prefix_length (a group-default 50-token prefix is not carried over).
 * 3. Keep round 0 of those sessions and everything else.
 * 4. Concurrency clients: per user u, unless the cap is reached, `userSeed` then `bpSeed` from
 *    `GoRand(seed + 10007)`; the seed request (lengths then ids from `GoRand(userSeed)`, group prefix prepended)
 *    arrives at `u·think/concurrency` (0 unless think > 0 and more than one user), session
 *    `concurrency_<client>_user_<u>`, no accumulation.
 * 5. Stable sort, renumber `request_<i>`; follow-up budget = cap − requests when a cap and concurrency users exist.
 */
import type { Request } from '../../domain/request.js';
import { GoRand } from '../../gocompat/go-rand.js';
import { PartitionedRng } from '../../engine/partitioned-rng.js';
import { concatTokens, randomTokenIds } from '../tokens.js';
import { computeDeadline, generatePrefixTokens, isClosedLoop, sortAndCap } from '../spec/draft.js';
import type { Draft } from '../spec/draft.js';
import { WORKLOAD_GEN_SUBSYSTEM, generateSpecDrafts, numberDrafts } from '../spec/generate.js';
import type { SpecGenerateOptions } from '../spec/generate.js';
import { newLengthSampler } from '../spec/length.js';
import type { ClientSpec, WorkloadSpec } from '../spec/types.js';
import type { SessionBlueprint, SessionWorkload } from './types.js';
import { LIMITS, checkLimit } from '../../domain/limits.js';

/** Offset of the closed-loop blueprint stream from the spec seed (a prime, so it shares no stream with others). */
export const BLUEPRINT_SEED_OFFSET = 7919n;
/** Offset of the concurrency-user stream from the spec seed. */
export const CONCURRENCY_SEED_OFFSET = 10007n;

function offsetSeed(seed: bigint, offset: bigint): GoRand {
  // Go adds int64s with wrap-around.
  return new GoRand(BigInt.asIntN(64, seed + offset));
}

/**
 * Requests plus session blueprints for `spec` (see the module comment).
 * @throws as {@link generateSpecDrafts}.
 */
export function generateWorkload(spec: WorkloadSpec, opts: SpecGenerateOptions): SessionWorkload<Request> {
  const gen = generateSpecDrafts(spec, opts);
  const { clients, seed } = gen;
  if (!clients.some((c) => isClosedLoop(c) || c.concurrency > 0)) {
    return { requests: numberDrafts(gen.drafts, gen.timeoutUs), sessions: [], followUpBudget: -1 };
  }
  const { sessions, closedLoop } = closedLoopBlueprints(clients, gen.drafts, seed, opts.horizon, opts.corrected === true);
  const kept = gen.drafts.filter((d) => d.session === undefined || d.session.round === 0 || !closedLoop.has(d.session.id));
  const conc = concurrencySeeds(clients, seed, opts.horizon, opts.numRequests, kept.length, opts.corrected === true);
  for (const bp of conc.blueprints) sessions.push(bp);
  const all = sortAndCap([...kept, ...conc.seeds], 0);
  const requests = numberDrafts(all, gen.timeoutUs);
  // An explicit --timeout also replaces the blueprints' timeouts (their follow-ups' deadlines).
  if (gen.timeoutUs !== undefined) for (const bp of sessions) bp.timeout = gen.timeoutUs;
  const cap = opts.numRequests;
  const followUpBudget = cap > 0 && conc.users > 0 ? Math.max(0, cap - requests.length) : -1;
  return { requests, sessions, followUpBudget };
}

function closedLoopBlueprints(
  clients: readonly ClientSpec[],
  drafts: readonly Draft[],
  seed: bigint,
  horizon: number,
  corrected: boolean,
): { sessions: SessionBlueprint[]; closedLoop: Set<string> } {
  // Corrected semantics tag follow-ups with the reason ratio their round drew (drafts of every kept round).
  const ratios = new Map<string, number[]>();
  if (corrected) {
    for (const d of drafts) {
      if (d.session === undefined) continue;
      let list = ratios.get(d.session.id);
      if (list === undefined) ratios.set(d.session.id, (list = []));
      list[d.session.round] = d.session.reasonRatio;
    }
  }
  // Round-0 drafts per client id, in request order (one pass instead of a scan per client).
  const roundZero = new Map<string, Draft[]>();
  for (const d of drafts) {
    if (d.session === undefined || d.session.round !== 0) continue;
    const list = roundZero.get(d.client.id);
    if (list === undefined) roundZero.set(d.client.id, [d]);
    else list.push(d);
  }
  const rng = offsetSeed(seed, BLUEPRINT_SEED_OFFSET);
  const sessions: SessionBlueprint[] = [];
  const closedLoop = new Set<string>();
  for (const c of clients) {
    const mt = c.reasoning?.multiTurn ?? null;
    if (!isClosedLoop(c) || mt === null) continue;
    const inputSampler = newLengthSampler(c.inputDist);
    const outputSampler = newLengthSampler(c.outputDist);
    const mine = roundZero.get(c.id) ?? [];
    let prefix: Int32Array | null = null;
    const first = mine[0];
    if (c.prefixGroup !== '' && c.prefixLength > 0 && first !== undefined && first.input.length >= c.prefixLength) {
      prefix = first.input.slice(0, c.prefixLength);
    }
    const ids = [...new Set(mine.map((d) => d.session!.id))];
    for (const id of ids) closedLoop.add(id);
    ids.sort();
    for (const sessionId of ids) {
      sessions.push({
        sessionId,
        clientId: c.id,
        maxRounds: mt.maxRounds,
        unlimitedRounds: false,
        contextGrowth: mt.contextGrowth,
        thinkTimeUs: mt.thinkTimeUs,
        timeout: c.timeout,
        horizon,
        inputSampler,
        outputSampler,
        rng: new GoRand(rng.int63Big()),
        thinkTimeSampler: null,
        toolCall: mt.toolCall === null ? null : { latency: newLengthSampler(mt.toolCall.latencyDist) },
        prefix,
        tenantId: c.tenantId,
        sloClass: c.sloClass,
        model: c.model,
        sloTargetUs: c.sloTargetUs ?? 0,
        adapter: c.adapter,
        ...(corrected ? { prefixGroup: c.prefixGroup, followUpTags: { streaming: c.streaming, reasonRatios: ratios.get(sessionId) ?? [] } } : {}),
      });
    }
  }
  return { sessions, closedLoop };
}

interface ConcurrencySeeds {
  readonly seeds: Draft[];
  readonly blueprints: SessionBlueprint[];
  /** Σ concurrency over the concurrency clients (capped users included). */
  readonly users: number;
}

function concurrencySeeds(clients: readonly ClientSpec[], seed: bigint, horizon: number, cap: number, alreadyKept: number, corrected: boolean): ConcurrencySeeds {
  const out: ConcurrencySeeds = { seeds: [], blueprints: [], users: 0 };
  if (!clients.some((c) => c.concurrency > 0)) return out;
  // Every user is a seed request and a live session: without a cap (which stops the loop below), refuse a count
  // that could not be held before making the first.
  if (cap === 0) {
    const total = clients.reduce((n, c) => n + Math.max(0, c.concurrency), 0);
    checkLimit(total, LIMITS.requests, 'the number of closed-loop users (concurrency)', 'simulate fewer users, or set num_requests (--num-requests) to cap them');
  }
  // The same group prefixes generation drew: a fresh workload stream replays the same first draws.
  const prefixes = generatePrefixTokens(clients, new PartitionedRng(seed).forSubsystem(WORKLOAD_GEN_SUBSYSTEM), corrected);
  const rng = offsetSeed(seed, CONCURRENCY_SEED_OFFSET);
  let users = 0;
  for (const c of clients) {
    if (c.concurrency <= 0) continue;
    const inputSampler = newLengthSampler(c.inputDist);
    const outputSampler = newLengthSampler(c.outputDist);
    const prefix = c.prefixGroup === '' ? null : (prefixes.get(c.prefixGroup) ?? null);
    for (let u = 0; u < c.concurrency; u++) {
      // Checked first, so a huge user count against a small cap stops at the cap.
      if (cap > 0 && alreadyKept + out.seeds.length >= cap) break;
      const userRng = new GoRand(rng.int63Big());
      const sessionId = `concurrency_${c.id}_user_${u}`;
      // Staggered over one think time; integer division as in the reference.
      const span = u * c.thinkTimeUs;
      const arrival = c.thinkTimeUs > 0 && c.concurrency > 1 ? (span - (span % c.concurrency)) / c.concurrency : 0;
      const inLen = inputSampler.sample(userRng);
      const outLen = outputSampler.sample(userRng);
      const fresh = randomTokenIds(userRng, inLen);
      const output = randomTokenIds(userRng, outLen);
      const withPrefix = prefix !== null && prefix.length > 0;
      out.seeds.push({
        client: c,
        arrival,
        input: withPrefix ? concatTokens(prefix, fresh) : fresh,
        output,
        prefixGroup: c.prefixGroup,
        prefixLength: withPrefix ? prefix.length : 0,
        deadline: computeDeadline(arrival, c.timeout, true),
        modality: null,
        session: { id: sessionId, round: 0, reasonRatio: 0 },
      });
      out.blueprints.push({
        sessionId,
        clientId: c.id,
        maxRounds: 0,
        unlimitedRounds: true,
        contextGrowth: '',
        thinkTimeUs: c.thinkTimeUs,
        timeout: c.timeout,
        horizon,
        inputSampler,
        outputSampler,
        rng: new GoRand(rng.int63Big()),
        thinkTimeSampler: null,
        toolCall: null,
        prefix,
        tenantId: c.tenantId,
        sloClass: c.sloClass,
        model: c.model,
        sloTargetUs: c.sloTargetUs ?? 0,
        adapter: c.adapter,
        // Corrected: follow-ups name the group prefix they carry, as the user's first request does.
        ...(corrected ? { prefixGroup: c.prefixGroup, followUpTags: { streaming: false, reasonRatios: [] } } : {}),
      });
    }
    users += c.concurrency;
  }
  return { ...out, users };
}
