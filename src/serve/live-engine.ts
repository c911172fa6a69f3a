/**
 * A single-instance simulated engine paced to wall time, for `blis serve`: simulated µs = wall µs since the
 * engine started. Requests are injected at the current wall time; a driver advances the simulation to "now"
 * and sleeps until the next simulated event or token delivery. Token times come from the instance's token
 * hook (the same clock as the simulated TTFT/E2E metrics), so a client sees each token when the simulation
 * says it exists, and a replay of the recorded trace can reproduce the server's latencies.
 */
import { Request, RequestState } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import type { ClusterSimulator } from '../cluster/cluster.js';
import { EventQueue } from '../engine/event-queue.js';
import type { Instance } from '../instance/instance.js';
import { buildCluster, type EngineSetup } from '../sim/engine-setup.js';
import { PreciseTimer } from './precise-timer.js';

/** What a live request reports to its HTTP handler. */
export interface LiveListener {
  /** Token `index` (1-based) is available; `itlUs` is the gap since the previous token (0 for the first). */
  token(index: number, ttftUs: number, itlUs: number): void;
  /** Generation ended normally after `tokens` tokens; latencies are the simulated ones (µs). */
  finish(tokens: number, e2eUs: number): void;
  /** The engine gave up on the request (dropped as unservable, timed out). */
  fail(reason: string): void;
}

export interface LiveHandle {
  readonly req: Request;
}

interface Live extends LiveHandle {
  readonly listener: LiveListener;
  /** Highest token index scheduled for delivery (preemption makes the engine report tokens again). */
  produced: number;
  lastTokenTime: number;
  finishing: boolean;
}

const DELIVER_TOKEN = 0;
const DELIVER_FINISH = 1;
const DELIVER_FAIL = 2;
/** How far back a client's stated send time may place an arrival (clock skew between hosts beyond it is ignored). */
const MAX_BACKDATE_US = 1_000_000;
/** How far ahead a stated start may be (beyond it the stamp is ignored as clock skew). */
const MAX_LEAD_US = 50_000;
/** With the precise timer, deadlines nearer than this are polled: a thread wake-up costs about as much. */
const PRECISE_SPIN_US = 150;
/** Finished requests between two prunes of the engine's request lists. */
const PRUNE_EVERY = 256;

interface Delivery {
  readonly live: Live;
  readonly index: number;
  readonly gap: number;
}

export interface LiveEngineOptions {
  /** Monotonic µs since some origin; defaults to performance.now(). Tests may pass a fake. */
  readonly now?: () => number;
  /**
   * Without the precise timer: within this many µs of the next deadline the driver polls with setImmediate
   * instead of sleeping, since timers fire up to a millisecond late, which would add that much to every
   * observed latency.
   */
  readonly spinUs?: number;
  /** Wake at deadlines through a helper thread (default true; see precise-timer.ts). */
  readonly preciseTimer?: boolean;
}

export interface LiveStats {
  /** Deliveries so far and their total and worst lateness against the simulated time (µs). */
  deliveries: number;
  lagSumUs: number;
  lagMaxUs: number;
  running: number;
  waiting: number;
  kvUsage: number;
  preemptions: number;
  /** Block-level prefix-cache counters, when the KV store exposes them. */
  cacheHitBlocks: number | null;
  cacheQueryBlocks: number | null;
  blockSize: number;
}

export class LiveEngine {
  readonly cs: ClusterSimulator;
  private readonly inst: Instance;
  private readonly origin: number;
  /** The epoch µs of simulated time 0 (null with an injected clock). */
  private readonly epochOriginUs: number | null;
  private readonly clock: () => number;
  private readonly spinUs: number;
  private readonly deliveries = new EventQueue<Delivery>(1024);
  private readonly active = new Set<Live>();
  private readonly byReq = new Map<Request, Live>();
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Wakes the driver at deadlines without spinning (null with an injected clock or when disabled). */
  private readonly precise: PreciseTimer | null;
  private immediate: NodeJS.Immediate | null = null;
  private closed = false;
  private delivered = 0;
  private ended = 0;
  private lagSum = 0;
  private lagMax = 0;

  constructor(setup: Omit<EngineSetup, 'horizon' | 'numInstances'>, opts: LiveEngineOptions = {}) {
    this.cs = buildCluster({ ...setup, numInstances: 1, horizon: MAX_INT64 });
    this.inst = this.cs.instances[0] as Instance;
    this.inst.onToken = (req, t) => this.onToken(req, t);
    this.clock = opts.now ?? (() => performance.now() * 1000);
    this.origin = this.clock();
    this.epochOriginUs = opts.now === undefined ? performance.timeOrigin * 1000 + this.origin : null;
    this.spinUs = opts.spinUs ?? 1500;
    this.precise = this.epochOriginUs !== null && opts.preciseTimer !== false ? new PreciseTimer(() => this.pump()) : null;
  }

  /** Simulated (= wall) µs since start. */
  nowUs(): number {
    return Math.floor(this.clock() - this.origin);
  }

  /**
   * The simulated time of an epoch instant (µs), for a request that says when it starts (`x-request-start`):
   * not before the simulated clock (events already executed cannot be revisited) nor more than a second back,
   * and at most {@link MAX_LEAD_US} ahead (a client may send early so that the request is there in time).
   * Without the default clock (a test's fake one) epoch times cannot be mapped, and now is used.
   */
  /** The epoch µs of a simulated instant (null with an injected clock). */
  epochOfSimUs(simUs: number): number | null {
    return this.epochOriginUs === null ? null : this.epochOriginUs + simUs;
  }

  arrivalFromEpochUs(epochUs: number): number {
    const now = this.nowUs();
    if (this.epochOriginUs === null) return now;
    const t = Math.floor(epochUs - this.epochOriginUs);
    if (t > now + MAX_LEAD_US) return now;
    return Math.max(t, this.cs.clock, now - MAX_BACKDATE_US);
  }

  /**
   * Injects a request; the caller has validated its lengths. `arrivedUs` (default now) is when the request
   * reached the server: reading and parsing its body should not count against it. It is clamped to the
   * simulated clock, since events already executed cannot be revisited (nothing happened in between when
   * the clock is still earlier).
   */
  submit(id: string, input: Int32Array, outputLen: number, sloClass: string, listener: LiveListener, arrivedUs = this.nowUs(), adapter = ''): LiveHandle {
    if (this.closed) throw new Error('LiveEngine: submit after close');
    const t = Math.max(arrivedUs, this.cs.clock);
    const req = new Request(id, input, new Int32Array(outputLen), t, outputLen, 0);
    req.sloClass = sloClass;
    req.adapter = adapter;
    req.streaming = true;
    const live: Live = { req, listener, produced: 0, lastTokenTime: 0, finishing: false };
    this.active.add(live);
    this.byReq.set(req, live);
    this.cs.inject(req);
    this.wake();
    return live;
  }

  /**
   * The client went away: take the request out of the engine so it stops using batch seats and KV (vLLM
   * aborts it too). A request still on its way to the wait queue is marked timed out, which the enqueue
   * step skips.
   */
  abort(h: LiveHandle): void {
    const live = h as Live;
    if (!this.active.delete(live)) return;
    this.byReq.delete(live.req);
    const r = live.req;
    if (r.state === RequestState.Completed || r.state === RequestState.TimedOut) return;
    if (!this.inst.evictRequest(r)) r.state = RequestState.TimedOut;
    r.outcome = 'gateway_evicted';
    this.wake();
  }

  stats(): LiveStats {
    const kv = this.inst.kv as unknown as { cacheHits?: unknown; cacheMisses?: unknown };
    const hits = typeof kv.cacheHits === 'number' ? kv.cacheHits : null;
    const misses = typeof kv.cacheMisses === 'number' ? kv.cacheMisses : null;
    return {
      deliveries: this.delivered,
      lagSumUs: this.lagSum,
      lagMaxUs: this.lagMax,
      running: this.inst.batchSize,
      waiting: this.inst.queueDepth,
      kvUsage: this.inst.kv.totalBlocks > 0 ? this.inst.kv.usedBlocks() / this.inst.kv.totalBlocks : 0,
      preemptions: this.inst.metrics.preemptionCount,
      cacheHitBlocks: hits,
      cacheQueryBlocks: hits !== null && misses !== null ? hits + misses : null,
      blockSize: this.inst.kv.blockSize,
    };
  }

  get inFlight(): number {
    return this.active.size;
  }

  close(): void {
    this.closed = true;
    this.precise?.close();
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private onToken(req: Request, t: number): void {
    const live = this.byReq.get(req);
    if (live === undefined) return;
    // One token per step, or under speculative decoding the 1 + accepted drafts of the verification step (its
    // tokens go out together, one chunk each, the first carrying the gap).
    const index = req.specSteps > 0 ? req.progressIndex - req.inputLen + 1 : req.itlCount + 1;
    if (index <= live.produced) return;
    const gap = live.produced === 0 ? 0 : t - live.lastTokenTime;
    for (let k = live.produced + 1; k <= index; k++) this.deliveries.push(t, 0, DELIVER_TOKEN, { live, index: k, gap: k === live.produced + 1 ? gap : 0 });
    live.produced = index;
    live.lastTokenTime = t;
  }

  private wake(): void {
    if (this.closed || this.immediate !== null) return;
    this.precise?.cancel();
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.immediate = setImmediate(() => {
      this.immediate = null;
      this.pump();
    });
  }

  /** Runs the simulation up to now, hands out due deliveries, and arranges the next wake-up. */
  private pump(): void {
    if (this.closed) return;
    const now = this.nowUs();
    const before = this.cs.clock;
    this.cs.advanceTo(now);
    if (this.cs.clock !== before) this.collectEnds();
    const q = this.deliveries;
    while (q.length > 0 && q.peekTime() <= now) {
      // How far behind the simulation this process runs: the one distortion a simulated server adds.
      const lag = now - q.peekTime();
      this.delivered++;
      this.lagSum += lag;
      if (lag > this.lagMax) this.lagMax = lag;
      const kind = q.peekKind();
      const d = q.peekPayload() as Delivery;
      q.pop();
      this.deliver(kind, d);
    }
    this.arm(now);
  }

  /** Schedules the final chunk of every request the last steps completed, and failures. */
  private collectEnds(): void {
    for (const live of this.active) {
      if (live.finishing) continue;
      const r = live.req;
      if (r.hasE2E) {
        live.finishing = true;
        this.deliveries.push(r.arrivalTime + r.e2e, 1, DELIVER_FINISH, { live, index: live.produced, gap: 0 });
      } else if (r.outcome === 'dropped_unservable' || r.outcome === 'timed_out' || r.outcome === 'rejected' || r.outcome === 'encode_rejected') {
        live.finishing = true;
        this.deliveries.push(this.cs.clock, 1, DELIVER_FAIL, { live, index: 0, gap: 0 });
      }
    }
  }

  private deliver(kind: number, d: Delivery): void {
    const live = d.live;
    if (!this.active.has(live)) return;
    if (kind === DELIVER_TOKEN) {
      live.listener.token(d.index, live.req.ttft, d.gap);
      return;
    }
    this.active.delete(live);
    this.byReq.delete(live.req);
    if (++this.ended % PRUNE_EVERY === 0) this.prune();
    if (kind === DELIVER_FINISH) live.listener.finish(d.index, live.req.e2e);
    else live.listener.fail(live.req.outcome === 'timed_out' ? 'request timed out in the engine' : 'request dropped by the engine (it can never fit in the KV cache or the model length)');
  }

  /**
   * The engine keeps every request it saw for end-of-run reports, which a server never builds; dropping the
   * finished ones keeps a long-running server's memory flat (their prompt arrays dominate).
   */
  private prune(): void {
    const keep = (r: Request): boolean => r.outcome === '' && r.state !== RequestState.TimedOut;
    const compact = (a: Request[]): void => {
      let j = 0;
      for (let i = 0; i < a.length; i++) if (keep(a[i] as Request)) a[j++] = a[i] as Request;
      a.length = j;
    };
    compact(this.cs.arrivals);
    compact(this.inst.metrics.requests);
  }

  private arm(now: number): void {
    if (this.immediate !== null) return;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const next = Math.min(this.cs.nextEventTime(), this.deliveries.peekTime());
    if (next === Infinity) {
      this.precise?.cancel();
      return;
    }
    const wait = next - now;
    const precise = this.precise !== null && this.precise.usable && this.epochOriginUs !== null ? this.precise : null;
    if (precise !== null && wait > PRECISE_SPIN_US) {
      precise.arm(((this.epochOriginUs as number) + next) / 1000);
      return;
    }
    if (wait <= (precise !== null ? PRECISE_SPIN_US : this.spinUs)) {
      this.immediate = setImmediate(() => {
        this.immediate = null;
        this.pump();
      });
      return;
    }
    // Sleep until one spin window before the deadline, then poll.
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, Math.max(1, Math.floor((wait - this.spinUs) / 1000)));
  }
}

