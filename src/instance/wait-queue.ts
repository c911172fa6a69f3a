/**
 * The instance wait queue: FIFO with O(1) dequeue at the head, front insertion for preempted requests,
 * removal by identity (timeouts) and in-place stable reordering by the scheduler.
 */
import type { Request } from '../domain/request.js';

export class WaitQueue {
  private items: Request[] = [];
  private head = 0;
  /** Sum of the input lengths of the queued requests. */
  inputTokens = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  enqueue(r: Request): void {
    this.inputTokens += r.inputLen;
    this.items.push(r);
  }

  peekAt(i: number): Request | undefined {
    return this.items[this.head + i];
  }

  dequeue(): Request | undefined {
    if (this.head >= this.items.length) return undefined;
    const r = this.items[this.head] as Request;
    this.inputTokens -= r.inputLen;
    this.items[this.head] = undefined as unknown as Request;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) this.compact();
    return r;
  }

  prependFront(r: Request): void {
    this.inputTokens += r.inputLen;
    if (this.head > 0) {
      this.head--;
      this.items[this.head] = r;
    } else {
      this.items.unshift(r);
    }
  }

  remove(r: Request): boolean {
    const i = this.items.indexOf(r, this.head);
    if (i < 0) return false;
    this.inputTokens -= (this.items[i] as Request).inputLen;
    this.items.splice(i, 1);
    return true;
  }

  /** The live items, head first (a copy). */
  toArray(): Request[] {
    return this.items.slice(this.head);
  }

  /** Stable in-place sort of the live items. */
  sort(compare: (a: Request, b: Request) => number): void {
    if (this.length < 2) return;
    this.compact();
    this.items.sort(compare);
  }

  private compact(): void {
    if (this.head === 0) return;
    this.items = this.items.slice(this.head);
    this.head = 0;
  }
}
