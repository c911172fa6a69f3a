/**
 * The request lifecycle record shared by workload, instance, cluster and metrics.
 *
 * One monomorphic mutable object per request, created by the workload layer and mutated only by the
 * instance's event handlers (see architecture.md: "Monomorphic objects created once per request").
 * Field meanings follow the reference's `sim/request.go`; lengths are cached as numbers so the step loop
 * never touches the token arrays unless it must.
 */
import type { SharedPrefix } from './block-hash.js';
import type { Tick } from './units.js';
import { releaseTokenArray } from './token-slab.js';

export const RequestState = {
  Queued: 0,
  Running: 1,
  Completed: 2,
  TimedOut: 3,
} as const;
export type RequestState = (typeof RequestState)[keyof typeof RequestState];

/** Terminal state of a request; '' while it is still in the system. */
export type RequestOutcome =
  | ''
  | 'completed'
  | 'timed_out'
  | 'dropped_unservable'
  /** Rejected by admission or by routing (no routable instance). */
  | 'rejected'
  /** E/P/D: lost at encode routing (the encode pool had no routable pod). */
  | 'encode_rejected'
  /** Gateway queue: rejected at enqueue, displaced by a more important request, expired, or evicted in flight. */
  | 'gateway_rejected'
  | 'gateway_shed'
  | 'gateway_expired'
  | 'gateway_evicted'
  /** Killed on an instance drained with the `immediate` drain mode. */
  | 'drain_killed';

/** P/D disaggregation: what part of a split request this object is. */
export const PdPart = {
  /** An ordinary request (or a parent whose sub-requests do the work). */
  None: 0,
  /** The prefill half: same input, no output tokens; completes after its prefill. */
  Prefill: 1,
  /** The decode half: arrives with its input KV already allocated by the transfer. */
  Decode: 2,
} as const;
export type PdPart = (typeof PdPart)[keyof typeof PdPart];

const NO_TOKENS = new Int32Array(0);

export class Request {
  // The step loop's fields come first: V8 lays an object's fields out in declaration order, and every running
  // request is touched once per step, so keeping what a step reads and writes within the object's first cache
  // lines is worth more than grouping by meaning.
  readonly inputLen: number;
  readonly outputLen: number;
  /** Input tokens processed + output tokens generated. */
  progressIndex = 0;
  numNewTokens = 0;
  /** Tokens whose KV is computed or scheduled (the reference's reqNumComputedTokens; 0 = absent). */
  computedTokens = 0;
  /**
   * The KV cache holding this request's blocks, its per-request block list there, and a copy of the list's
   * last block (id, first token position, fill, parent identity) for the one-token decode append (opaque to
   * everyone else).
   * Kept on the request so the per-token allocation needs no map lookup; kvOwner is null when it holds none.
   */
  kvOwner: object | null = null;
  kvBlocks: unknown = null;
  kvTail = -1;
  kvTailStart = 0;
  kvTailFill = 0;
  /** Identity of the block before the tail (the tail's chain parent when it fills). */
  kvTailParent = 0;
  /** Its slot in the running batch holding it (instance/running-batch.ts; stale once it leaves). */
  batchSlot = -1;
  /**
   * Inter-token latencies of the current attempt (reset on preemption), stored compactly: every request that
   * decodes in a step gets the same ITL (that step's advance + output-token overhead), so the attempt's ITL
   * list is the instance's per-step values over the steps it decoded in. The steps are runs of consecutive
   * step indexes: the current run is `[itlFirst, itlLast]` (valid when itlCount > 0), earlier ones (rare: a
   * step that skipped this request) are `itlRuns` as `[first, last, first, last, ...]`. A stalled ITL
   * (prefill-first scheduling, kept in `itlExtra`) at step s closes the current run and leaves the empty run
   * `[s + 1, s]`: itlLast still names the step of the last token, and a decode in step s + 1 extends it.
   */
  itlCount = 0;
  itlFirst = 0;
  itlLast = 0;
  /** Sum of the current attempt's ITLs (ticks). */
  itlSum = 0;
  itlRuns: number[] | null = null;
  ttftSet = false;
  state: RequestState = RequestState.Queued;
  /** Duration from arrival to first token (ticks). */
  firstTokenTime: Tick = 0;
  arrivalTime: Tick;

  /** External id, e.g. `request_12`. */
  readonly id: string;
  /** Prompt token ids (prefix ++ prompt); emptied by {@link releaseTokens} once the request has left. */
  inputTokens: Int32Array;
  /** Oracle output token ids; their count is the true output length. */
  outputTokens: Int32Array;
  /** Client output budget (vLLM max_tokens); 0 = none. Auto-filled at enqueue when max-model-len is set. */
  maxOutputLen: number;
  /** Absolute deadline tick; 0 = none. */
  deadline: Tick;

  // Workload tags (empty string = unset), carried to traces and per-class metrics.
  sloClass = '';
  tenantId = '';
  clientId = '';
  model = '';
  sessionId = '';
  roundIndex = 0;
  prefixGroup = '';
  prefixLength = 0;
  streaming = false;
  textTokens = 0;
  imageTokens = 0;
  audioTokens = 0;
  videoTokens = 0;
  reasonRatio = 0;
  /** Per-request SLO target (µs) from the workload; 0 = none. */
  sloTargetUs = 0;
  /** LoRA adapter id ('' = the base model); must name an adapter of the LoRA registry when LoRA is on. */
  adapter = '';
  /** Holds a pin on its adapter's resident slot (taken when first scheduled, released at a terminal state). */
  adapterPinned = false;

  // Lifecycle state, owned by the instance engine.
  scheduledStepIdx = 0;
  finishedStepIdx = 0;
  /** Instance scheduling priority (vLLM convention: lower = more urgent). */
  priority = 0;
  /** A priority policy's score (higher = more urgent); used instead of the SLO class when set. */
  hasPolicyPriority = false;
  policyPriority = 0;
  /** A priority policy's hints for the instance scheduler; null = none. */
  schedulingHints: Readonly<Record<string, string | number | boolean>> | null = null;
  /** Admission DELAYs this request has waited out (0 = admitted or rejected at its first decision). */
  admissionDelays = 0;
  lengthCapped = false;
  /** Instance id this request was routed to ('' until routed). */
  assignedInstance = '';
  /** P/D disaggregation: which half of a split request this is ({@link PdPart}); None otherwise. */
  pdPart: PdPart = PdPart.None;
  /**
   * Flow control: when the request entered the gateway queue and when it left it for routing (µs). 0 = unset,
   * which the metrics read as "no gateway delay" — so, as in the reference, a request enqueued at t = 0 reports
   * none. The enqueue time is cleared again when the request is rejected or shed from the queue.
   */
  gatewayEnqueueTime: Tick = 0;
  gatewayDispatchTime: Tick = 0;

  // Per-request outcome, recorded by the instance (the reference keeps these in maps keyed by id).
  /** Registered in the instance's request metrics (Metrics.Requests); cleared when dropped at enqueue. */
  registered = false;
  hasTTFT = false;
  /** RequestTTFTs value (ticks). */
  ttft = 0;
  hasE2E = false;
  /** RequestE2Es value (ticks). */
  e2e = 0;
  /** RequestITLs value: mean ITL in ticks (float). */
  itlMean = 0;
  /**
   * Prefill-first scheduling only: ITLs that span stalled steps (the decode waited out prefill-only steps),
   * kept one by one because they are not any single step's value; null otherwise.
   */
  itlExtra: number[] | null = null;
  /** Prefill-first scheduling only: ticks of prefill-only steps this decode has waited since its last token. */
  stallTicks = 0;
  /** Speculative decoding only: decode steps taken so far (the fractional carry's step count). */
  specSteps = 0;
  /**
   * Recompute preemption as vLLM does it (BatchLimits.reprefillPreemption; reference-differences E13): the output
   * tokens this request had produced when it was last preempted, re-prefilled with its prompt as one (chunked)
   * prefill of inputLen + replayTokens positions that re-emits none of them. 0 = none (always 0 in the
   * reference's model, where a preempted request regenerates its output token by token).
   */
  replayTokens = 0;
  /** When the request entered the instance wait queue (async scheduling decides visibility by it). */
  enqueueTime: Tick = 0;
  hasSchedulingDelay = false;
  schedulingDelay = 0;
  /** How the request left the system; '' while in flight. */
  outcome: RequestOutcome = '';

  /**
   * Chained block hashes of the full input blocks, computed lazily by the KV layer and cached here so that
   * repeated prefix lookups (every admission attempt, every router query) hash the prompt only once.
   * `null` until first needed; the block size it was computed for is in {@link inputHashBlockSize}.
   */
  inputBlockHashes: Float64Array | null = null;
  inputHashBlockSize = 0;
  /** The shared prefix the prompt starts with, when the workload knows one (its block hashes are reused). */
  sharedPrefix: SharedPrefix | null = null;
  /**
   * Whether this request alone holds its two token arrays, made for it by domain/token-slab.ts's tokenArray (set
   * by the workload generator that made them): {@link releaseTokens} then gives them back for reuse. Whoever
   * lets another object hold them (a P/D half, a copy) clears it.
   */
  ownsTokens = false;

  /**
   * Drops the token ids and block hashes of a request that has left the system (the lengths stay): nothing reads
   * them afterwards, and a run of millions of requests would otherwise hold every prompt to the end.
   */
  releaseTokens(): void {
    if (this.ownsTokens) {
      this.ownsTokens = false;
      releaseTokenArray(this.inputTokens);
      releaseTokenArray(this.outputTokens);
    }
    this.inputTokens = NO_TOKENS;
    this.outputTokens = NO_TOKENS;
    this.inputBlockHashes = null;
    this.sharedPrefix = null;
  }

  constructor(id: string, inputTokens: Int32Array, outputTokens: Int32Array, arrivalTime: Tick, maxOutputLen = 0, deadline: Tick = 0) {
    this.id = id;
    this.inputTokens = inputTokens;
    this.outputTokens = outputTokens;
    this.inputLen = inputTokens.length;
    this.outputLen = outputTokens.length;
    this.arrivalTime = arrivalTime;
    this.maxOutputLen = maxOutputLen;
    this.deadline = deadline;
  }
}

/**
 * Request fields that hold more than small integers: block identities (53 bits), fractions, sums of step
 * values, and ticks past 2^30 (runs longer than 18 minutes of simulated time). V8 keeps a field in the
 * representation of the first value stored in it; a field that starts at 0 and later gets a fraction or a large
 * number changes representation, which deprecates the hidden class of every Request made so far (tens of
 * classes: one per field added), and each of those objects is migrated by a slow runtime call when next
 * touched — a few percent of a 10,000-request run, paid at each request's arrival. One request holding such
 * values, made when this module loads, settles the representations before any real request exists.
 */
const WIDE_FIELDS = [
  'kvTailParent', 'itlSum', 'firstTokenTime', 'arrivalTime', 'deadline', 'ttft', 'e2e', 'itlMean', 'schedulingDelay', 'enqueueTime',
  'gatewayEnqueueTime', 'gatewayDispatchTime', 'stallTicks', 'reasonRatio', 'sloTargetUs', 'priority', 'policyPriority',
] as const satisfies readonly (keyof Request)[];
{
  const r = new Request('', NO_TOKENS, NO_TOKENS, 0.5, 0, 0.5) as unknown as Record<(typeof WIDE_FIELDS)[number], number>;
  for (const k of WIDE_FIELDS) r[k] = 0.5;
}
