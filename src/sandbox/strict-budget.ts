/**
 * The `strict` engine's budget accounting: one unit per QuickJS interrupt poll, counted through the interpreter's
 * own countdown (`JSContext.interrupt_counter`, located by strict-vm.ts). The meter writes the countdown before
 * each call so that the interrupt handler fires on exactly the first poll past the limit, and reads what is left
 * afterwards, which gives the exact units used: identical across runs for the same source, limits and call
 * sequence. Native walks the interpreter does not poll for are charged through {@link InterruptMeter.charge}
 * (the prelude's `$c` host call). Budgets past the int32 countdown are spent in chunks.
 */
import type { WasmMemory } from './strict-vm.js';

/** The interrupt countdown is an int32; longer budgets are spent in chunks of this size. */
const MAX_CHUNK = 2 ** 30;

export class InterruptMeter {
  private counterView: Int32Array;
  /** Armed while policy code may run; `used` counts the polls since arm(). */
  private armed = false;
  private limit = 0;
  private used = 0;
  private chunk = 0;
  /** The limit was passed: the interrupt keeps firing until disarm(). */
  exceeded = false;

  constructor(
    private readonly memory: WasmMemory,
    private readonly counterIndex: number,
  ) {
    this.counterView = new Int32Array(memory.buffer);
    this.setCounter(MAX_CHUNK);
  }


  private setCounter(v: number): void {
    if (this.counterView.buffer !== this.memory.buffer) this.counterView = new Int32Array(this.memory.buffer);
    this.counterView[this.counterIndex] = v;
  }

  private getCounter(): number {
    if (this.counterView.buffer !== this.memory.buffer) this.counterView = new Int32Array(this.memory.buffer);
    return this.counterView[this.counterIndex]!;
  }

  // The countdown: QuickJS decrements it at each poll and calls the interrupt handler on the poll that brings it
  // to 0, so a chunk of `chunk` polls is written as chunk + 1 and the firing poll is the chunk's last one plus one.

  arm(limit: number): void {
    this.armed = true;
    this.limit = limit;
    this.used = 0;
    this.exceeded = false;
    this.startChunk();
  }

  /** Starts a chunk of what is left of the budget (the next poll interrupts when nothing is left). */
  private startChunk(): void {
    this.chunk = Math.min(Math.max(0, this.limit - this.used), MAX_CHUNK);
    this.setCounter(this.chunk + 1);
  }

  /** Stops counting; returns the units used since arm(). */
  disarm(engineSound: boolean): number {
    if (this.armed) {
      this.armed = false;
      if (this.exceeded) this.used = this.limit;
      else this.used += this.chunk + 1 - Math.max(1, this.getCounter());
      if (engineSound) this.setCounter(MAX_CHUNK);
    }
    this.exceeded = false;
    return this.used;
  }

  /** The interrupt import: QuickJS calls it when the countdown reaches 0 (having just reset it to 10,000). */
  onInterrupt(): number {
    if (!this.armed) {
      this.setCounter(MAX_CHUNK);
      return 0;
    }
    if (this.exceeded) return 1;
    this.used += this.chunk + 1;
    if (this.used > this.limit) {
      this.exceeded = true;
      return 1;
    }
    this.startChunk();
    return 0;
  }

  /** Budget units for native work the interpreter does not poll for (the prelude's wrappers call `$c`). */
  charge(units: number): void {
    if (!this.armed || this.exceeded || !(units > 0)) return;
    const n = Math.ceil(units);
    const c = this.getCounter();
    if (c - n >= 1) {
      this.setCounter(c - n);
      return;
    }
    // This chunk is spent, and more: fold it into `used` and start the next one.
    this.used += this.chunk + 1 - c + n;
    if (this.used > this.limit) {
      // The next poll (at the latest, entering the native call about to run) interrupts.
      this.exceeded = true;
      this.setCounter(1);
      return;
    }
    this.startChunk();
  }

  /** The engine failed mid-call: stop counting without touching the instance's memory. */
  abandon(): void {
    this.armed = false;
  }
}
