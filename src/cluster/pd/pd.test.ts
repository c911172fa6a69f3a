import { describe, expect, it } from 'vitest';
import { hasRole, poolTopologyError, PoolRole, rolesFromCounts } from './pools.js';
import { transferBlocks, transferDurationUs, type TransferConfig } from './transfer.js';
import { PdBeyond, REFERENCE_PD, isReferencePd } from './beyond.js';
import { PdParent } from './parent.js';
import { Request } from '../../domain/request.js';

const cfg = (over: Partial<TransferConfig> = {}): TransferConfig => ({ bandwidthGBps: 10, baseLatencyMs: 0, contention: false, kvBytesPerToken: 512, blockSize: 16, ...over });

describe('pool topology (reference ValidatePoolTopology, BuildPoolMembershipFromIndices)', () => {
  it('validates counts as the reference does', () => {
    expect(poolTopologyError(0, 0, 0, 4)).toBeNull();
    expect(poolTopologyError(2, 2, 0, 4)).toBeNull();
    expect(poolTopologyError(0, 0, 3, 3)).toBeNull();
    expect(poolTopologyError(1, 0, 1, 3)).toBeNull();
    expect(poolTopologyError(2, 0, 0, 4)).toMatch(/both --prefill-instances and --decode-instances/);
    expect(poolTopologyError(2, 2, 1, 4)).toMatch(/exceeds num-instances \(4\)/);
    expect(poolTopologyError(-1, 2, 0, 4)).toMatch(/prefill-instances must be >= 0/);
  });
  it('validates the encode pool as the reference does: it needs a decode-capable pool and counts toward the total', () => {
    expect(poolTopologyError(1, 1, 0, 4, 2)).toBeNull();
    expect(poolTopologyError(0, 0, 1, 2, 1)).toBeNull();
    expect(poolTopologyError(0, 0, 0, 4, 2)).toBe('encode-instances (2) requires a decode-capable pool: set --prefill-instances, --decode-instances, or --prefill-decode-instances > 0');
    expect(poolTopologyError(1, 1, 0, 3, 2)).toBe('prefill-instances (1) + decode-instances (1) + prefill-decode-instances (0) + encode-instances (2) = 4 exceeds num-instances (3)');
    expect(poolTopologyError(1, 1, 0, 4, -1)).toBe('encode-instances must be >= 0, got -1');
    // The P/D pairing rule still applies with an encode pool.
    expect(poolTopologyError(1, 0, 0, 4, 1)).toMatch(/both --prefill-instances and --decode-instances/);
  });
  it('assigns roles by index; shared pods are members of both pools; leftovers have none', () => {
    const roles = rolesFromCounts(6, 1, 2, 2);
    expect(roles).toEqual([PoolRole.Prefill, PoolRole.Decode, PoolRole.Decode, PoolRole.PrefillDecode, PoolRole.PrefillDecode, PoolRole.None]);
    // E/P/D: the encode pods follow the shared ones; an encode pod is in neither the prefill nor the decode pool.
    expect(rolesFromCounts(7, 1, 2, 1, 2)).toEqual([PoolRole.Prefill, PoolRole.Decode, PoolRole.Decode, PoolRole.PrefillDecode, PoolRole.Encode, PoolRole.Encode, PoolRole.None]);
    expect(hasRole(PoolRole.Encode, PoolRole.Prefill) || hasRole(PoolRole.Encode, PoolRole.Decode)).toBe(false);
    expect(hasRole(PoolRole.PrefillDecode, PoolRole.Encode)).toBe(false);
    expect(hasRole(PoolRole.PrefillDecode, PoolRole.Prefill)).toBe(true);
    expect(hasRole(PoolRole.PrefillDecode, PoolRole.Decode)).toBe(true);
    expect(hasRole(PoolRole.Decode, PoolRole.Prefill)).toBe(false);
    expect(hasRole(PoolRole.Decode, PoolRole.None)).toBe(false);
  });
});

describe('KV transfer duration (INV-P2-2)', () => {
  it('reference goldens: 10 blocks x 16 tokens x 512 B at 10 GB/s take 9 µs alone and 17 µs sharing with one other', () => {
    expect(transferBlocks(160, 16)).toBe(10);
    expect(transferDurationUs(cfg(), 10, 1)).toBe(9);
    expect(transferDurationUs(cfg({ contention: true }), 10, 2)).toBe(17);
    // Without contention the active count does not matter.
    expect(transferDurationUs(cfg(), 10, 5)).toBe(9);
  });
  it('divides the bandwidth by the transfers in flight at the start, never below 1 µs', () => {
    const one = transferDurationUs(cfg({ contention: true, kvBytesPerToken: 131072 }), 100, 1);
    for (const n of [2, 3, 4, 8]) {
      const d = transferDurationUs(cfg({ contention: true, kvBytesPerToken: 131072 }), 100, n);
      expect(Math.abs(d / one - n)).toBeLessThan(0.01);
    }
    expect(transferDurationUs(cfg({ kvBytesPerToken: 0.001 }), 1, 1)).toBe(1);
    expect(transferDurationUs(cfg({ baseLatencyMs: 0.05 }), 10, 1)).toBe(Math.ceil(50 + 8.192));
  });
  it('granularity: block and chunk pay the base latency per unit; stream equals the reference formula', () => {
    const t = cfg({ baseLatencyMs: 0.05 });
    const stream = new PdBeyond({ ...REFERENCE_PD, granularity: 'stream', backpressure: 1 }, t);
    const chunk = new PdBeyond({ ...REFERENCE_PD, granularity: 'chunk', chunkBlocks: 4 }, t);
    const block = new PdBeyond({ ...REFERENCE_PD, granularity: 'block' }, t);
    expect(stream.wholeDurationUs(10, 1, 512)).toBe(transferDurationUs(t, 10, 1));
    expect(chunk.wholeDurationUs(10, 1, 512)).toBe(Math.ceil(3 * 50 + 8.192));
    expect(block.wholeDurationUs(10, 1, 512)).toBe(Math.ceil(10 * 50 + 8.192));
    expect(isReferencePd(REFERENCE_PD)).toBe(true);
    expect(isReferencePd({ ...REFERENCE_PD, mode: 'pipelined' })).toBe(false);
  });
  it('backpressure admits up to the threshold per decode pod', () => {
    const b = new PdBeyond({ ...REFERENCE_PD, backpressure: 2 }, cfg());
    expect(b.admits(0)).toBe(true);
    b.enter(0);
    b.enter(0);
    expect(b.admits(0)).toBe(false);
    expect(b.admits(1)).toBe(true);
    b.leave(0);
    expect(b.admits(0)).toBe(true);
    expect(b.peakQueue[0]).toBe(2);
  });
});

describe('P/D halves and token reuse', () => {
  it('a split request and its halves never give their shared token arrays back for reuse', () => {
    const req = new Request('r', new Int32Array(40).fill(5), new Int32Array(8).fill(6), 0);
    req.ownsTokens = true;
    const parent = new PdParent(req, 16, 0);
    const decode = parent.makeDecode();
    expect(req.ownsTokens).toBe(false);
    expect(parent.prefill.ownsTokens).toBe(false);
    expect(decode.ownsTokens).toBe(false);
    expect(decode.inputTokens).toBe(req.inputTokens);
  });
});
