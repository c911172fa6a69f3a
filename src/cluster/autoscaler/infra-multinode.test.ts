/** Multi-node TP placement (upstream #1537; on with --gpus-per-node): a TP group wider than a node takes whole nodes. */
import { describe, expect, it } from 'vitest';
import { PlacementManager, ZERO_DELAY, type NodePoolConfig } from './infra.js';

const pool = (over: Partial<NodePoolConfig> = {}): NodePoolConfig => ({
  name: 'p', gpuType: 'H100', gpusPerNode: 8, gpuMemoryGiB: 80, initialNodes: 3, minNodes: 0, maxNodes: 3, provisioningDelay: ZERO_DELAY, costPerHour: 0, ...over,
});

describe('multi-node placement', () => {
  it('off (the reference): a TP 16 instance does not fit on 8-GPU nodes', () => {
    const m = new PlacementManager([pool()]);
    expect(m.place('a', '', 16)).toBeNull();
    expect(m.gpusOf('a')).toBe(0);
  });

  it('on: TP 16 takes two whole free 8-GPU nodes; a partly used node is skipped; release frees both', () => {
    const m = new PlacementManager([pool()], null, true);
    expect(m.place('small', '', 2)?.nodeId).toBe('p-0');
    const big = m.place('big', '', 16);
    expect(big?.nodeId).toBe('p-1+p-2');
    expect(big?.gpuIds).toHaveLength(16);
    expect(m.gpusOf('big')).toBe(16);
    expect(m.place('big2', '', 16)).toBeNull();
    m.release('big');
    expect(m.place('big2', '', 16)?.nodeId).toBe('p-1+p-2');
    expect(m.conservationError()).toBeNull();
  });

  it('on: a TP that is not a multiple of the node size is not placed across nodes', () => {
    const m = new PlacementManager([pool()], null, true);
    expect(m.place('a', '', 12)).toBeNull();
  });
});
