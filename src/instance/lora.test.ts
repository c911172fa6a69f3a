import { describe, expect, it } from 'vitest';
import { Request } from '../domain/request.js';
import { AdapterCost, InstanceAdapters, ResidentAdapters } from './lora.js';

const cost = new AdapterCost({
  capacity: 2,
  loadBaseLatencyUs: 1500.5,
  loadBandwidthBytesUs: 2e6,
  footprintBytesPerRank: 2e6,
  stepOverheadTiers: new Map([[8, { k6: 0.02, k7: 1 }], [16, { k6: 0.035, k7: 1 }], [32, { k6: 0.06, k7: 1 }]]),
  adapters: [{ id: 'a', rank: 8, baseModel: '' }, { id: 'b', rank: 20, baseModel: '' }, { id: 'c', rank: 12, baseModel: '' }],
});

function req(adapter: string): Request {
  const r = new Request(`r-${adapter}`, new Int32Array(4), new Int32Array(2), 0);
  r.adapter = adapter;
  return r;
}

describe('LoRA cost model', () => {
  it('loads in base + ceil(footprint x rank / bandwidth) µs; unknown adapters cost nothing', () => {
    expect(cost.loadLatency('b')).toBe(1500.5 + 20);
    expect(cost.loadLatency('zzz')).toBe(0);
  });

  it('multiplies a step by 1 + (k6/k7) x distinct adapters, k6/k7 from the tier nearest the largest rank', () => {
    expect(cost.stepOverheadFactor([req(''), req('zzz')], 2)).toBe(1);
    expect(cost.stepOverheadFactor([req('a'), req('a')], 2)).toBe(1 + 0.02);
    // rank 20: tier 16 is nearer than 32.
    expect(cost.stepOverheadFactor([req('a'), req('b')], 2)).toBe(1 + 0.035 * 2);
    // rank 12 is as near to 8 as to 16: the lower tier.
    expect(cost.stepOverheadFactor([req('c')], 1)).toBe(1 + 0.02);
    // Only the scheduled prefix counts; the result is truncated like Go's int64().
    expect(cost.applyOverhead(1000, [req('a'), req('b')], 1)).toBe(1020);
    expect(cost.applyOverhead(999, [req('b')], 1)).toBe(Math.trunc(999 * 1.035));
  });
});

describe('resident adapters', () => {
  it('evicts the least recently used unpinned adapter; a full set of pinned adapters admits nothing', () => {
    const s = new ResidentAdapters(2);
    s.store('a');
    s.store('b');
    s.touch('a');
    expect(s.store('c')).toEqual({ evicted: 'b', admitted: true });
    expect(s.ids()).toEqual(['a', 'c']);
    s.pin('a');
    s.pin('c');
    expect(s.store('d')).toEqual({ evicted: '', admitted: false });
    s.unpin('a');
    expect(s.evictLru()).toBe('a');
  });

  it('serialises cold loads: reserve a slot at the start, fill it at the end, count both', () => {
    const loads = new Map<string, number>();
    const evictions = new Map<string, number>();
    const inst = new InstanceAdapters(cost, loads, evictions);
    expect(inst.startLoad(req(''))).toBe(0);
    expect(inst.startLoad(req('a'))).toBe(Math.ceil(1500.5 + 8));
    expect(inst.startLoad(req('b'))).toBe(0); // one load at a time
    inst.finishLoad();
    const b = req('b');
    expect(inst.startLoad(b)).toBe(1521);
    inst.finishLoad();
    inst.pin(b);
    inst.pin(req('a'));
    // Both slots pinned: the next cold adapter must wait.
    expect(inst.startLoad(req('c'))).toBe(0);
    inst.release(b);
    expect(inst.startLoad(req('c'))).toBe(1513);
    expect([...evictions]).toEqual([['b', 1]]);
    expect([...loads]).toEqual([['a', 1], ['b', 1]]);
  });
});
