/** The router-side prefix LRU index, with the reference's capacity and recency cases. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inputBlockHashes } from '../domain/block-hash.js';
import { PrefixCacheIndex } from './prefix-index.js';
import { makeRequest } from './test-fixtures.js';

const h = (tokens: number[], blockSize = 1) => inputBlockHashes(makeRequest('r', tokens), blockSize);

describe('PrefixCacheIndex', () => {
  it('matches consecutive blocks from the start only', () => {
    const idx = new PrefixCacheIndex(100);
    idx.recordBlocks(h([1, 2, 3, 4, 5, 6, 7, 8], 4), 'inst_0');
    expect(idx.matchLength(h([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 4), 'inst_0')).toBe(2);
    expect(idx.matchLength(h([1, 2, 3, 4, 5, 6, 7, 9], 4), 'inst_0')).toBe(1);
    expect(idx.matchLength(h([1, 2, 3, 4], 4), 'inst_1')).toBe(0);
  });

  it('bounds each instance to its capacity, evicting the least recently recorded', () => {
    const idx = new PrefixCacheIndex(3);
    for (const t of [0, 10, 20, 30, 40]) idx.recordBlocks(h([t]), 'inst_0');
    expect(idx.instanceBlockCount('inst_0')).toBe(3);
    expect([0, 10, 20, 30, 40].map((t) => idx.matchLength(h([t]), 'inst_0'))).toEqual([0, 0, 1, 1, 1]);
  });

  it('recording refreshes recency; looking up does not', () => {
    const idx = new PrefixCacheIndex(3);
    for (const t of [1, 2, 3]) idx.recordBlocks(h([t]), 'inst_0');
    expect(idx.matchLength(h([2]), 'inst_0')).toBe(1); // a lookup must not save block 2
    idx.recordBlocks(h([1]), 'inst_0');
    idx.recordBlocks(h([4]), 'inst_0');
    expect([1, 2, 3, 4].map((t) => idx.matchLength(h([t]), 'inst_0'))).toEqual([1, 0, 1, 1]);
  });

  it('with capacity 1 keeps only the newest block', () => {
    const idx = new PrefixCacheIndex(1);
    idx.recordBlocks(h([10]), 'inst_0');
    idx.recordBlocks(h([20]), 'inst_0');
    idx.recordBlocks(h([20]), 'inst_0');
    idx.recordBlocks(h([30]), 'inst_0');
    expect([idx.instanceBlockCount('inst_0'), idx.matchLength(h([20]), 'inst_0'), idx.matchLength(h([30]), 'inst_0')]).toEqual([1, 0, 1]);
  });

  it('a long record keeps its newest blocks, and instances are independent', () => {
    const idx = new PrefixCacheIndex(3);
    const five = h([1, 2, 3, 4, 5]);
    idx.recordBlocks(five, 'inst_0');
    expect(idx.instanceBlockCount('inst_0')).toBe(3);
    expect(idx.matchLength(five, 'inst_0')).toBe(0); // block 0 was evicted
    expect(idx.matchLength(five.subarray(2), 'inst_0')).toBe(3);
    expect(idx.instanceBlockCount('inst_1')).toBe(0);
  });

  it('defaults to 10,000 blocks and refuses a non-positive capacity', () => {
    expect(new PrefixCacheIndex().lruCapacity).toBe(10_000);
    expect(() => new PrefixCacheIndex(0)).toThrow(RangeError);
  });
});

/**
 * follow(): a follower standing on its leader's LRUs answers exactly as an index of its own would, whatever the
 * two are fed. Each step records on the follower and/or the leader (in lockstep or not), or reads either; the
 * same steps go to two independent indexes, the oracle.
 */
describe('PrefixCacheIndex.follow', () => {
  type Step = { kind: 'pair' | 'follower' | 'leader' | 'read'; req: number; inst: number; other: number };
  const reqHashes = new Map<number, Float64Array>();
  /** Request r: a shared 3-block prefix, then 0-5 blocks of its own (blockSize 1). */
  const hashesOf = (r: number): Float64Array => {
    let a = reqHashes.get(r);
    if (a === undefined) {
      a = h([1, 2, 3, ...Array.from({ length: r % 6 }, (_, i) => 100 * r + i + 4)]);
      reqHashes.set(r, a);
    }
    return a;
  };
  const ids = ['inst_0', 'inst_1', 'inst_2'];

  function run(steps: readonly Step[], followerCap: number, leaderCap: number): void {
    const f = new PrefixCacheIndex(followerCap);
    const l = new PrefixCacheIndex(leaderCap);
    expect(f.follow(l)).toBe(true);
    const of = new PrefixCacheIndex(followerCap);
    const ol = new PrefixCacheIndex(leaderCap);
    const read = (): void => {
      for (const id of ids) {
        for (let r = 0; r < 8; r++) {
          expect(f.matchLength(hashesOf(r), id)).toBe(of.matchLength(hashesOf(r), id));
          expect(l.matchLength(hashesOf(r), id)).toBe(ol.matchLength(hashesOf(r), id));
        }
        expect(f.instanceBlockCount(id)).toBe(of.instanceBlockCount(id));
        expect(l.instanceBlockCount(id)).toBe(ol.instanceBlockCount(id));
      }
    };
    for (const s of steps) {
      const hs = hashesOf(s.req);
      const id = ids[s.inst] as string;
      if (s.kind === 'pair') {
        // The cluster's order: the scorer records, ShadowKV is read for the target, then records.
        f.recordBlocks(hs, id);
        of.recordBlocks(hs, id);
        expect(l.matchLength(hs, id)).toBe(ol.matchLength(hs, id));
        const lid = ids[s.other] as string;
        l.recordBlocks(s.other === s.inst ? hs : hashesOf(s.req + 1), lid);
        ol.recordBlocks(s.other === s.inst ? hs : hashesOf(s.req + 1), lid);
      } else if (s.kind === 'follower') {
        f.recordBlocks(hs, id);
        of.recordBlocks(hs, id);
      } else if (s.kind === 'leader') {
        l.recordBlocks(hs, id);
        ol.recordBlocks(hs, id);
      } else {
        read();
      }
    }
    read();
  }

  it('stays linked through lockstep records and answers reads from the leader', () => {
    const f = new PrefixCacheIndex(100);
    const l = new PrefixCacheIndex(200);
    f.follow(l);
    for (let r = 0; r < 10; r++) {
      f.recordBlocks(hashesOf(r), 'inst_0');
      expect(l.matchLength(hashesOf(r), 'inst_0')).toBe(r === 0 ? 0 : 3);
      l.recordBlocks(hashesOf(r), 'inst_0');
      expect(f.matchLength(hashesOf(r), 'inst_0')).toBe(hashesOf(r).length);
    }
    expect(f.following).toBe(true);
    expect(f.instanceBlockCount('inst_0')).toBe(l.instanceBlockCount('inst_0'));
  });

  it('detaches when a record could evict in either index, or the two diverge', () => {
    const f = new PrefixCacheIndex(8);
    const l = new PrefixCacheIndex(100);
    f.follow(l);
    f.recordBlocks(hashesOf(3), 'inst_0');
    l.recordBlocks(hashesOf(3), 'inst_0');
    expect(f.following).toBe(true);
    f.recordBlocks(hashesOf(4), 'inst_0'); // 7 blocks on top of 6: could evict in the follower
    l.recordBlocks(hashesOf(4), 'inst_0');
    expect(f.following).toBe(false);
    expect(f.instanceBlockCount('inst_0')).toBe(8);
    expect(l.instanceBlockCount('inst_0')).toBe(10);

    const g = new PrefixCacheIndex(100);
    const m = new PrefixCacheIndex(100);
    g.follow(m);
    g.recordBlocks(hashesOf(1), 'inst_0');
    m.recordBlocks(hashesOf(1), 'inst_1'); // delivered elsewhere
    expect(g.following).toBe(false);
    expect([g.instanceBlockCount('inst_0'), g.instanceBlockCount('inst_1'), m.instanceBlockCount('inst_0')]).toEqual([4, 0, 0]);
  });

  it('links only two empty, unlinked indexes', () => {
    const a = new PrefixCacheIndex();
    const b = new PrefixCacheIndex();
    const c = new PrefixCacheIndex();
    expect(a.follow(a)).toBe(false);
    c.recordBlocks(hashesOf(1), 'inst_0');
    expect(a.follow(c)).toBe(false);
    expect(a.follow(b)).toBe(true);
    expect(c.follow(b)).toBe(false);
  });

  it('matches two independent indexes over random operation sequences', () => {
    const step = fc.record({
      kind: fc.constantFrom<Step['kind']>('pair', 'pair', 'pair', 'pair', 'follower', 'leader', 'read'),
      req: fc.integer({ min: 0, max: 7 }),
      inst: fc.integer({ min: 0, max: 2 }),
      other: fc.integer({ min: 0, max: 2 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 30 }), (steps, fcap, lcap) => {
        run(steps.map((s) => (s.kind === 'pair' && s.other !== s.inst && s.req % 3 !== 0 ? { ...s, other: s.inst } : s)), fcap, lcap);
      }),
      { numRuns: 400, seed: 12 },
    );
  });
});
