/** The router-side prefix LRU index, with the reference's capacity and recency cases. */
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
