/**
 * P/D behaviour beyond the reference (policy-search-design §6 "P/D KV Ownership Contract"), each behind an
 * option whose default is the reference's:
 *
 *   ownership    duplicate (reference: the prefill pod frees its copy, still a prefix-cache hit there, when the
 *                prefill ends) | single (the prefill pod holds the blocks while they are in transit and then
 *                releases them as TRANSFERRED: freed and no longer a cache hit there — never duplicated).
 *   mode         whole (reference: the transfer starts when the prefill ends) | pipelined (every prefill step
 *                ships the blocks it fills, so a chunked prefill overlaps its transfer and the decode half starts
 *                once the last block has arrived; a step's blocks ship from the step's start, the instant the
 *                reference's whole transfer starts at, so a one-step prefill times exactly as a whole transfer).
 *   granularity  stream (reference: one base latency per transfer) | chunk (one per `chunkBlocks` blocks) |
 *                block (one per block).
 *   backpressure a decode pod with this many requests between prefill routing and decode enqueue (prefilling
 *                or in transfer) holds new prefills for it, retried every `retryUs` (0 = off).
 */
import type { Request } from '../../domain/request.js';
import type { StepInfo } from '../../instance/instance.js';
import type { PdParent } from './parent.js';
import type { TransferConfig } from './transfer.js';

export const PD_KV_OWNERSHIPS = ['duplicate', 'single'] as const;
export const PD_TRANSFER_MODES = ['whole', 'pipelined'] as const;
export const PD_TRANSFER_GRANULARITIES = ['stream', 'chunk', 'block'] as const;

export interface PdBeyondConfig {
  readonly ownership: (typeof PD_KV_OWNERSHIPS)[number];
  readonly mode: (typeof PD_TRANSFER_MODES)[number];
  readonly granularity: (typeof PD_TRANSFER_GRANULARITIES)[number];
  readonly chunkBlocks: number;
  readonly backpressure: number;
  readonly retryUs: number;
}

export const REFERENCE_PD: PdBeyondConfig = { ownership: 'duplicate', mode: 'whole', granularity: 'stream', chunkBlocks: 16, backpressure: 0, retryUs: 1000 };

export function isReferencePd(c: PdBeyondConfig): boolean {
  return c.ownership === 'duplicate' && c.mode === 'whole' && c.granularity === 'stream' && c.backpressure === 0;
}

/** Per-parent pipelined link state. */
interface Link {
  sent: number;
  /** When the link is free again (µs); 0 before the first shipment. */
  freeAt: number;
  /** Blocks filled but not shipped yet (chunk granularity waits for a whole chunk). */
  pending: number;
}

export class PdBeyond {
  private readonly links = new Map<PdParent, Link>();
  /** Requests per decode pod between prefill routing and decode enqueue (backpressure). */
  private readonly queued: number[] = [];
  /** Times a prefill was held by backpressure. */
  throttled = 0;
  /** Highest decode-side queue seen per decode pod index (for reports and tests). */
  readonly peakQueue: number[] = [];
  /** Backpressure episodes as the anomaly detector reads them. */
  readonly samples: { timeUs: number; instance: number; pending: number; requestIds: string[] }[] = [];

  constructor(
    readonly cfg: PdBeyondConfig,
    private readonly transfer: TransferConfig,
  ) {}

  private units(blocks: number): number {
    if (blocks <= 0) return 0;
    return this.cfg.granularity === 'stream' ? 1 : this.cfg.granularity === 'block' ? blocks : Math.ceil(blocks / this.cfg.chunkBlocks);
  }

  /** Whole-transfer duration with this granularity (stream = the reference's formula). */
  wholeDurationUs(blocks: number, active: number, bytesPerToken: number): number {
    const bytes = blocks * (this.transfer.blockSize * bytesPerToken);
    let bw = this.transfer.bandwidthGBps * 1000;
    if (this.transfer.contention && active > 1) bw /= active;
    const base = this.transfer.baseLatencyMs * 1000 * this.units(blocks);
    const d = bw > 0 ? Math.ceil(base + bytes / bw) : Math.ceil(base);
    return d < 1 ? 1 : d;
  }

  /** Pipelined: after a step on a prefill pod, ship the blocks each prefill half filled in it. */
  observeStep(info: StepInfo, parentOf: (r: Request) => PdParent | undefined, bytesPerToken: number): void {
    // Shipped from the step's start: the cluster sees a step's results at its start (the reference starts the
    // whole transfer there too), so a one-step prefill pipelines exactly like a whole transfer.
    const end = info.clock;
    for (const r of info.batch) {
      if (r.numNewTokens === 0 || r.pdPart !== 1) continue;
      const p = parentOf(r);
      if (p === undefined) continue;
      let l = this.links.get(p);
      if (l === undefined) {
        l = { sent: 0, freeAt: 0, pending: 0 };
        this.links.set(p, l);
      }
      const last = r.progressIndex >= r.inputLen;
      const filled = last ? p.numKVBlocks : Math.floor(r.progressIndex / this.transfer.blockSize);
      l.pending = filled - l.sent;
      if (l.pending <= 0) continue;
      if (this.cfg.granularity === 'chunk' && !last) l.pending -= l.pending % this.cfg.chunkBlocks;
      if (l.pending > 0) this.ship(l, end, l.pending, bytesPerToken, last);
    }
  }

  private ship(l: Link, at: number, blocks: number, bytesPerToken: number, last: boolean): void {
    const bytes = blocks * this.transfer.blockSize * bytesPerToken;
    const bw = this.transfer.bandwidthGBps * 1000;
    const base = this.transfer.baseLatencyMs * 1000;
    // Per-unit latency for block/chunk; a stream pays its propagation latency once, on the last shipment.
    const lat = this.cfg.granularity === 'stream' ? (last ? base : 0) : base * this.units(blocks);
    const start = Math.max(at, l.freeAt);
    l.freeAt = start + bytes / bw + lat;
    l.sent += blocks;
  }

  /** Pipelined: the transfer of `p` (its prefill just ended, observed at `now`) completes in this many µs. */
  pipelinedRemainingUs(p: PdParent, now: number, bytesPerToken: number): number {
    const l = this.links.get(p);
    this.links.delete(p);
    if (l === undefined || l.sent < p.numKVBlocks) {
      // Nothing (or not everything) was shipped during the prefill: what is left goes now.
      const left = p.numKVBlocks - (l?.sent ?? 0);
      const from = Math.max(now, l?.freeAt ?? 0);
      const rest = left > 0 ? this.wholeDurationUs(left, 1, bytesPerToken) : 0;
      return Math.max(1, Math.ceil(from + rest - now));
    }
    return Math.max(1, Math.ceil(l.freeAt - now));
  }

  /** Backpressure: may a prefill for decode pod `d` start now? */
  admits(d: number): boolean {
    return this.cfg.backpressure <= 0 || (this.queued[d] ?? 0) < this.cfg.backpressure;
  }

  held(d: number, clock: number, req: Request): void {
    this.throttled++;
    this.samples.push({ timeUs: clock, instance: d, pending: this.queued[d] ?? 0, requestIds: [req.id] });
  }

  enter(d: number): void {
    const q = (this.queued[d] ?? 0) + 1;
    this.queued[d] = q;
    if (q > (this.peakQueue[d] ?? 0)) this.peakQueue[d] = q;
  }

  leave(d: number, clock = -1): void {
    const before = this.queued[d] ?? 0;
    const q = Math.max(0, before - 1);
    this.queued[d] = q;
    // The queue falling below the threshold closes a backpressure episode.
    if (clock >= 0 && this.cfg.backpressure > 0 && before >= this.cfg.backpressure && q < this.cfg.backpressure) this.samples.push({ timeUs: clock, instance: d, pending: q, requestIds: [] });
  }
}
