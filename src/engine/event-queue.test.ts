import { describe, expect, it } from 'vitest';
import { EventQueue } from './event-queue.js';

function drain(q: EventQueue<string>): string[] {
  const out: string[] = [];
  while (q.length > 0) {
    out.push(q.peekPayload() ?? '');
    q.pop();
  }
  return out;
}

describe('EventQueue', () => {
  it('orders by time, then order, then push sequence', () => {
    const q = new EventQueue<string>(2);
    q.push(10, 1, 0, 'b1');
    q.push(5, 9, 0, 'a');
    q.push(10, 0, 0, 'b0');
    q.push(10, 1, 0, 'b1-later');
    q.push(7, 3, 0, 'c');
    expect(drain(q)).toEqual(['a', 'c', 'b0', 'b1', 'b1-later']);
  });

  it('matches a reference sort over many random keys (tie order explicit)', () => {
    const q = new EventQueue<string>(4);
    const items: { t: number; o: number; s: number; id: string }[] = [];
    let x = 12345;
    const next = (): number => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x;
    };
    for (let i = 0; i < 5000; i++) {
      const t = next() % 50;
      const o = next() % 4;
      items.push({ t, o, s: i, id: `e${i}` });
      q.push(t, o, 0, `e${i}`);
      if (i % 7 === 0 && q.length > 0) {
        // interleave pops with pushes: the popped item must be the current minimum
        const id = q.peekPayload();
        items.sort((a, b) => a.t - b.t || a.o - b.o || a.s - b.s);
        expect(id).toBe(items[0]?.id);
        items.shift();
        q.pop();
      }
    }
    items.sort((a, b) => a.t - b.t || a.o - b.o || a.s - b.s);
    expect(drain(q)).toEqual(items.map((i) => i.id));
  });

  it('reports empty state and rejects popping an empty queue', () => {
    const q = new EventQueue<string>();
    expect(q.peekTime()).toBe(Infinity);
    expect(() => q.pop()).toThrow(/empty/);
  });
});

describe('EventQueue with a side heap', () => {
  it('pops in exactly the order of a single heap, whichever heap holds the events', () => {
    let x = 777;
    const next = (): number => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x;
    };
    const one = new EventQueue<string>(4);
    const two = new EventQueue<string>(4, 3);
    const popped: [string[], string[]] = [[], []];
    for (let i = 0; i < 20000; i++) {
      const t = next() % 60;
      const o = next() % 5;
      const kind = next() % 4;
      for (const q of [one, two]) q.push(t, o, kind, `e${i}`);
      if (next() % 3 === 0) {
        expect([two.peekTime(), two.peekOrder(), two.peekKind()]).toEqual([one.peekTime(), one.peekOrder(), one.peekKind()]);
        for (const [k, q] of [one, two].entries()) {
          popped[k]?.push(q.peekPayload() ?? '');
          q.pop();
        }
      }
    }
    expect(two.length).toBe(one.length);
    expect(drain(two)).toEqual(drain(one));
    expect(popped[1]).toEqual(popped[0]);
  });
});
