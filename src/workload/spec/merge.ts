/**
 * Lazy generation of the spec's single-turn clients, merged in arrival order up to the request cap.
 *
 * The reference pre-generates every client's requests (up to twice the cap each), stable-sorts them by arrival
 * and keeps the first `cap`. Each client draws from its own stream, in a fixed order per request (gap, lengths,
 * token ids), and its arrivals never decrease. So the same list comes out of a k-way merge that asks a client
 * for its next request only when its previous one has been taken: ties are broken by client index, and within
 * a client by generation order, exactly as the stable sort breaks them. Work and memory then grow with the cap,
 * not with clients × cap.
 *
 * A client waiting in the merge needs only its next arrival time. Its 5 KB generator state is rebuilt from its
 * seed when the merge first takes one of its requests (replaying the same draws), so a cohort of 100,000 members
 * with a small cap holds 100,000 numbers, not 100,000 generators.
 */
import { GoRand } from '../../gocompat/go-rand.js';
import { concatTokens, randomTokenIds } from '../tokens.js';
import { newArrivalSampler } from './arrival.js';
import type { ArrivalSampler } from './arrival.js';
import type { GenerationBudget } from './budget.js';
import { computeDeadline, isClosedLoop } from './draft.js';
import type { Draft, Modality } from './draft.js';
import { newLengthSampler } from './length.js';
import type { LengthSampler } from './length.js';
import { isInActiveWindow, lastWindowEndUs } from './rates.js';
import { shapeClient } from '../profiles/shaping.js';
import type { ClientShaping } from '../profiles/shaping.js';
import type { LoadProfileSpec } from '../profiles/types.js';
import type { ClientSpec, DistSpec, MultimodalSpec } from './types.js';

/** A client's requests in final order: `head` is the next one's arrival (Infinity when none is left). */
export interface DraftStream {
  readonly head: number;
  take(): Draft;
}

/** Requests generated up front (multi-turn clients), stably sorted by arrival. */
export class ListStream implements DraftStream {
  private i = 0;

  constructor(private readonly drafts: readonly Draft[]) {
    // Sessions overlap, so a multi-turn client's rounds are not generated in arrival order.
    (drafts as Draft[]).sort((a, b) => a.arrival - b.arrival);
  }

  get head(): number {
    const d = this.drafts[this.i];
    return d === undefined ? Number.POSITIVE_INFINITY : d.arrival;
  }

  take(): Draft {
    return this.drafts[this.i++]!;
  }
}

/** Samplers for a multimodal client, built once (the reference rebuilds identical stateless ones per request). */
interface MultimodalSamplers {
  readonly text: LengthSampler | null;
  readonly image: [LengthSampler, LengthSampler] | null;
  readonly audio: [LengthSampler, LengthSampler] | null;
  readonly video: [LengthSampler, LengthSampler] | null;
}

function optSampler(d: DistSpec): LengthSampler | null {
  return d.type === '' ? null : newLengthSampler(d);
}

/** A modality contributes only when both its token and its count distributions are given. */
function pairSampler(count: DistSpec, tokens: DistSpec): [LengthSampler, LengthSampler] | null {
  return count.type !== '' && tokens.type !== '' ? [newLengthSampler(count), newLengthSampler(tokens)] : null;
}

function multimodalSamplers(m: MultimodalSpec): MultimodalSamplers {
  return {
    text: optSampler(m.textDist),
    image: pairSampler(m.imageCountDist, m.imageDist),
    audio: pairSampler(m.audioCountDist, m.audioDist),
    video: pairSampler(m.videoCountDist, m.videoDist),
  };
}

/** Sum of `count` per-item token draws, the count drawn first. */
function itemTokens(rng: GoRand, pair: [LengthSampler, LengthSampler] | null): number {
  if (pair === null) return 0;
  const count = pair[0].sample(rng);
  let total = 0;
  for (let i = 0; i < count; i++) total += pair[1].sample(rng);
  return total;
}

function multimodalInput(rng: GoRand, s: MultimodalSamplers): [Int32Array, Modality] {
  const text = s.text === null ? 0 : s.text.sample(rng);
  const image = itemTokens(rng, s.image);
  const audio = itemTokens(rng, s.audio);
  const video = itemTokens(rng, s.video);
  const total = text + image + audio + video;
  return [randomTokenIds(rng, total === 0 ? 1 : total), { text, image, audio, video }];
}

/** What a client stream needs besides the client itself. */
export interface ClientStreamContext {
  readonly horizon: number;
  /** Request cap; 0 = none. */
  readonly cap: number;
  readonly loadProfile: LoadProfileSpec | null | undefined;
  readonly budget: GenerationBudget;
  /** Reseeded to find each client's first arrival without allocating a generator per client. */
  readonly scratch: GoRand;
  /** `--semantics corrected`: a gamma process with CV > 10 stays gamma (see newArrivalSampler). */
  readonly honourBurstyGamma?: boolean;
}

/** A client's generator state: rebuilt from the seed, it replays the same draws. */
interface Live {
  readonly rng: GoRand;
  readonly arrival: ArrivalSampler;
  readonly shaping: ClientShaping | null;
  readonly shaped: (() => number) | null;
  t: number;
  count: number;
}

/**
 * One single-turn client, drawing as the reference's per-client loop does: per arrival the gap (or the shaped
 * arrival), a lifecycle check, then lengths and token ids. A request is generated only when taken.
 */
export class ClientStream implements DraftStream {
  head = Number.POSITIVE_INFINITY;
  private live: Live | null = null;
  private samplers: { input: LengthSampler; output: LengthSampler; mm: MultimodalSamplers | null } | null = null;
  private readonly limit: number;

  constructor(
    private readonly c: ClientSpec,
    private readonly seed: bigint,
    private readonly rate: number,
    private readonly prefix: Int32Array | null,
    private readonly ctx: ClientStreamContext,
  ) {
    this.limit = ctx.cap > 0 ? ctx.cap : Number.POSITIVE_INFINITY;
    // The first arrival decides where the client waits in the merge; its generator state is dropped until then.
    this.head = this.advance(this.wake(ctx.scratch.reseed(seed)));
  }

  private wake(rng: GoRand = new GoRand(this.seed)): Live {
    const c = this.c;
    const arrival = c.customSamplerFactory === undefined ? newArrivalSampler(c.arrival, this.rate, this.ctx.honourBurstyGamma === true) : c.customSamplerFactory(new GoRand(rng.int63Big()));
    // Load profile / misbehavior extension (profiles/shaping.ts): null, drawing nothing, for clients without them.
    const shaping = shapeClient(c, this.ctx.loadProfile, rng);
    return { rng, arrival, shaping, shaped: shaping === null ? null : shaping.arrivals(arrival, rng), t: 0, count: 0 };
  }

  /** The next arrival to generate, drawing gaps until one is inside the lifecycle windows; Infinity when done. */
  private advance(s: Live): number {
    const { horizon } = this.ctx;
    const lifecycle = this.c.lifecycle;
    if (s.count >= this.limit) return Number.POSITIVE_INFINITY;
    while (s.t < horizon) {
      if (s.shaped !== null) {
        s.t = s.shaped();
      } else {
        const iat = s.arrival.sampleIat(s.rng);
        if (iat === 0) return Number.POSITIVE_INFINITY;
        s.t += iat;
      }
      if (s.t >= horizon) return Number.POSITIVE_INFINITY;
      if (lifecycle !== null && !isInActiveWindow(s.t, lifecycle)) {
        if (s.t >= lastWindowEndUs(lifecycle)) return Number.POSITIVE_INFINITY;
        continue;
      }
      return s.t;
    }
    return Number.POSITIVE_INFINITY;
  }

  take(): Draft {
    let s = this.live;
    if (s === null) {
      s = this.wake();
      this.advance(s);
      this.live = s;
    }
    const d = this.generate(s, this.head);
    s.count++;
    this.head = this.advance(s);
    return d;
  }

  private generate(s: Live, t: number): Draft {
    const c = this.c;
    const rng = s.rng;
    this.samplers ??= { input: newLengthSampler(c.inputDist), output: newLengthSampler(c.outputDist), mm: c.multimodal === null ? null : multimodalSamplers(c.multimodal) };
    const { input: inputSampler, output: outputSampler, mm } = this.samplers;
    let input: Int32Array;
    let modality: Modality | null = null;
    let output: Int32Array;
    if (mm !== null) {
      [input, modality] = multimodalInput(rng, mm);
      output = randomTokenIds(rng, outputSampler.sample(rng));
    } else {
      let inLen = inputSampler.sample(rng);
      let outLen = outputSampler.sample(rng);
      if (s.shaping !== null) [inLen, outLen] = s.shaping.lengths(inLen, outLen);
      input = randomTokenIds(rng, inLen);
      output = randomTokenIds(rng, outLen);
    }
    const prefix = this.prefix;
    const withPrefix = prefix !== null && prefix.length > 0;
    if (withPrefix) input = concatTokens(prefix, input);
    this.ctx.budget.request(input.length + output.length, c.id);
    return {
      client: c,
      arrival: t,
      input,
      output,
      prefixGroup: c.prefixGroup,
      prefixLength: withPrefix ? prefix.length : 0,
      deadline: computeDeadline(t, c.timeout, isClosedLoop(c)),
      modality,
    };
  }
}

/**
 * The first `cap` requests (all when 0) of the streams in arrival order, ties to the lower stream index: the
 * reference's stable sort of the clients' concatenated requests, truncated to the cap.
 */
export function mergeStreams(streams: readonly DraftStream[], cap: number): Draft[] {
  // A binary heap of stream indexes ordered by (head, index).
  const heap: number[] = [];
  const less = (a: number, b: number): boolean => {
    const ha = streams[a]!.head;
    const hb = streams[b]!.head;
    return ha < hb || (ha === hb && a < b);
  };
  const up = (i: number): void => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const r = l + 1;
      const m = r < heap.length && less(heap[r]!, heap[l]!) ? r : l;
      if (!less(heap[m]!, heap[i]!)) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  streams.forEach((s, i) => {
    if (s.head !== Number.POSITIVE_INFINITY) {
      heap.push(i);
      up(heap.length - 1);
    }
  });
  const out: Draft[] = [];
  const limit = cap > 0 ? cap : Number.POSITIVE_INFINITY;
  while (heap.length > 0 && out.length < limit) {
    const top = heap[0]!;
    out.push(streams[top]!.take());
    if (streams[top]!.head === Number.POSITIVE_INFINITY) {
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        down(0);
      }
    } else {
      down(0);
    }
  }
  return out;
}
