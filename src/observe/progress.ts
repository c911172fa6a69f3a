/**
 * A one-line progress bar on stderr, redrawn at most every 100 ms, shown only when stderr is a terminal (logs
 * and CI output stay clean). With an unknown total (closed-loop sessions) it shows the counts only.
 */
import type { StatusCounts } from './orchestrator.js';

export interface Progress {
  update(done: number, counts: Readonly<StatusCounts>): void;
  finish(): void;
}

const NOOP: Progress = { update: () => undefined, finish: () => undefined };

export function progressBar(total: number, out: NodeJS.WriteStream = process.stderr): Progress {
  if (!out.isTTY) return NOOP;
  let last = 0;
  let shown = false;
  const draw = (done: number, c: Readonly<StatusCounts>): void => {
    const width = 30;
    const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
    const bar = total > 0 ? `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}` : `${done} done`;
    out.write(`\r${bar} ok ${c.ok} error ${c.error} timeout ${c.timeout}`);
    shown = true;
  };
  let latest: { done: number; c: StatusCounts } = { done: 0, c: { ok: 0, error: 0, timeout: 0 } };
  return {
    update(done, counts) {
      latest = { done, c: { ...counts } };
      const now = Date.now();
      if (now - last < 100 && (total <= 0 || done < total)) return;
      last = now;
      draw(done, counts);
    },
    finish() {
      if (shown || latest.done > 0) {
        draw(latest.done, latest.c);
        out.write('\n');
      }
    },
  };
}
