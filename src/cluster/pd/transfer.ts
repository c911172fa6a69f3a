/**
 * KV transfer timing between a prefill and a decode pod (reference scheduleTransferCompletion,
 * blis-cluster.md §8.3): whole blocks of the prompt at the link bandwidth plus a base latency, the bandwidth
 * shared equally among the transfers in flight when one starts (INV-P2-2, fixed for the transfer's life).
 */

export interface TransferConfig {
  /** Link bandwidth, GB/s (1 GB = 1e9 bytes). */
  readonly bandwidthGBps: number;
  /** Fixed latency per transfer, ms. */
  readonly baseLatencyMs: number;
  /** Fair-share contention among concurrent transfers. */
  readonly contention: boolean;
  /** Per-GPU KV bytes per token of the prefill pool's configuration (fractional for sub-byte precisions). */
  readonly kvBytesPerToken: number;
  readonly blockSize: number;
}

/** Duration (µs, >= 1) of moving `numBlocks` blocks while `active` transfers (this one included) are in flight. */
export function transferDurationUs(cfg: TransferConfig, numBlocks: number, active: number): number {
  // Multiply before truncating (fractional bytes per token), as the reference does.
  const bytes = numBlocks * (cfg.blockSize * cfg.kvBytesPerToken);
  let bw = cfg.bandwidthGBps * 1000;
  const base = cfg.baseLatencyMs * 1000;
  if (cfg.contention && active > 1) bw = bw / active;
  const d = bw > 0 ? Math.ceil(base + bytes / bw) : Math.ceil(base);
  return d < 1 ? 1 : d;
}

/** Blocks a prompt of `inputLen` tokens fills (the transfer moves whole blocks). */
export function transferBlocks(inputLen: number, blockSize: number): number {
  return Math.floor((inputLen + blockSize - 1) / blockSize);
}
