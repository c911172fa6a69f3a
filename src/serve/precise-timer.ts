/**
 * A one-shot wake-up at a precise instant without busy-waiting. Node's timers fire up to a millisecond or
 * more late, which adds that much to every latency a client of `blis serve` observes; polling the clock with
 * setImmediate instead burns a core that the clients on the same machine need. Here a helper thread sleeps in
 * `Atomics.wait` (a futex with a timeout, accurate to tens of µs) until the deadline and then posts a message,
 * which wakes the event loop at once. Re-arming is a store and a notify; a stale wake-up is ignored by sequence
 * number. The thread does not keep the process alive.
 */
import { Worker } from 'node:worker_threads';

// The helper's code, evaluated as a CommonJS worker (no separate file to locate at run time).
const HELPER = `
const { workerData, parentPort } = require('node:worker_threads');
const ctl = new Int32Array(workerData, 0, 2);
const deadline = new Float64Array(workerData, 8, 1);
for (;;) {
  const seq = Atomics.load(ctl, 0);
  if (Atomics.load(ctl, 1) === 1) break;
  const wait = deadline[0] - (performance.timeOrigin + performance.now());
  if (!Number.isFinite(wait)) { Atomics.wait(ctl, 0, seq); continue; }
  if (wait > 0 && Atomics.wait(ctl, 0, seq, wait) !== 'timed-out') continue;
  if (Atomics.load(ctl, 0) !== seq) continue;
  parentPort.postMessage(seq);
  Atomics.wait(ctl, 0, seq);
}
`;

export class PreciseTimer {
  private readonly sab = new SharedArrayBuffer(16);
  private readonly ctl = new Int32Array(this.sab, 0, 2);
  private readonly deadline = new Float64Array(this.sab, 8, 1);
  private readonly worker: Worker;
  private armed = false;
  private closed = false;

  /** `onFire` runs on the event loop when an armed deadline passes. */
  constructor(private readonly onFire: () => void) {
    this.deadline[0] = Infinity;
    this.worker = new Worker(HELPER, { eval: true, workerData: this.sab });
    this.worker.unref();
    this.worker.on('message', (seq: number) => {
      if (this.closed || !this.armed || seq !== Atomics.load(this.ctl, 0)) return;
      this.armed = false;
      this.onFire();
    });
    this.worker.on('error', () => {
      this.closed = true;
    });
  }

  /** False once the helper thread has failed: the caller falls back to ordinary timers. */
  get usable(): boolean {
    return !this.closed;
  }

  /** Fires at `epochMs` (performance.timeOrigin-based ms); replaces any earlier deadline. */
  arm(epochMs: number): void {
    this.deadline[0] = epochMs;
    this.armed = true;
    Atomics.add(this.ctl, 0, 1);
    Atomics.notify(this.ctl, 0);
  }

  cancel(): void {
    if (!this.armed) return;
    this.armed = false;
    this.deadline[0] = Infinity;
    Atomics.add(this.ctl, 0, 1);
    Atomics.notify(this.ctl, 0);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.ctl, 1, 1);
    Atomics.add(this.ctl, 0, 1);
    Atomics.notify(this.ctl, 0);
    void this.worker.terminate();
  }
}
