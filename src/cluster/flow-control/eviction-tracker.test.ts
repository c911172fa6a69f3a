// Scenarios from the reference's sim/cluster/eviction_tracker_test.go, plus tie order checked against Go's
// container/heap algorithm.
import { describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../../domain/slo.js';
import { EvictionTracker } from './eviction-tracker.js';
import { req } from './test-helpers.js';

const PM = new SloPriorityMap();

function popAll(t: EvictionTracker): string[] {
  const out: string[] = [];
  for (let c = t.pop(); c !== null; c = t.pop()) out.push(c.request.id);
  return out;
}

describe('EvictionTracker', () => {
  it('pops lowest priority first, with its instance', () => {
    const t = new EvictionTracker(PM);
    t.track(req('r1', { slo: 'sheddable', dispatchAt: 100 }), 'inst-0');
    t.track(req('r2', { slo: 'background', dispatchAt: 200 }), 'inst-1');
    t.track(req('r3', { slo: 'batch', dispatchAt: 150 }), 'inst-0');
    expect(t.length).toBe(3);
    expect(t.pop()).toMatchObject({ request: { id: 'r2' }, instanceId: 'inst-1' });
    expect(t.pop()).toMatchObject({ request: { id: 'r1' }, instanceId: 'inst-0' });
    expect(t.length).toBe(1);
  });

  it('same priority: newest dispatch first', () => {
    const t = new EvictionTracker(PM);
    t.track(req('r1', { slo: 'sheddable', dispatchAt: 100 }), 'inst-0');
    t.track(req('r2', { slo: 'sheddable', dispatchAt: 200 }), 'inst-0');
    expect(t.pop()?.request.id).toBe('r2');
  });

  it('untrack removes; unknown ids are ignored; non-sheddables are never tracked', () => {
    const t = new EvictionTracker(PM);
    t.track(req('r1', { slo: 'sheddable', dispatchAt: 100 }), 'inst-0');
    t.track(req('r2', { slo: 'sheddable', dispatchAt: 200 }), 'inst-0');
    t.untrack('r2');
    t.untrack('nonexistent');
    expect(t.length).toBe(1);
    expect(t.pop()?.request.id).toBe('r1');
    expect(t.pop()).toBeNull();
    t.track(req('c', { slo: 'critical' }), 'inst-0');
    t.track(req('s', { slo: 'standard' }), 'inst-0');
    t.track(req('u', { slo: '' }), 'inst-0');
    expect(t.length).toBe(0);
  });

  it('ties pop in container/heap order, not insertion order', () => {
    // All equal keys: Go's Pop swaps the root with the last slot and sifts down (no move on ties), so the
    // sequence is a, e, d, c, b for pushes a..e.
    const t = new EvictionTracker(PM);
    for (const id of ['a', 'b', 'c', 'd', 'e']) t.track(req(id, { slo: 'sheddable', dispatchAt: 7 }), 'i');
    expect(popAll(t)).toEqual(['a', 'e', 'd', 'c', 'b']);
  });

  it('removal from the middle keeps the heap ordered', () => {
    const t = new EvictionTracker(PM);
    const times = [5, 9, 1, 7, 3, 8, 2, 6, 4];
    times.forEach((d, i) => t.track(req(`r${i}`, { slo: i % 2 === 0 ? 'sheddable' : 'batch', dispatchAt: d }), 'i'));
    t.untrack('r3');
    t.untrack('r0');
    // sheddable (-2) newest-first, then batch (-1) newest-first.
    expect(popAll(t)).toEqual(['r8', 'r4', 'r6', 'r2', 'r1', 'r5', 'r7']);
  });

  it('ties after removals and later pushes match Go (vector from a container/heap run)', () => {
    const t = new EvictionTracker(PM);
    for (let i = 0; i < 8; i++) t.track(req(`t${i}`, { slo: 'batch', dispatchAt: i % 3 }), 'i');
    t.untrack('t2');
    t.untrack('t5');
    t.track(req('t8', { slo: 'batch', dispatchAt: 1 }), 'i');
    t.track(req('t9', { slo: 'batch', dispatchAt: 2 }), 'i');
    expect(popAll(t)).toEqual(['t9', 't4', 't8', 't7', 't1', 't6', 't0', 't3']);
  });
});
