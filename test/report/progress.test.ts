import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EtaEstimator, formatEta, progressDisplay, simFraction, PROGRESS_DELAY_MS } from '../../src/cli/progress.js';
import { MODEL, tempDir } from './fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/blis.js');
/**
 * Long enough for the display's one-second delay to pass with room to spare: 40,000 requests took ~1.1 s
 * on an idle machine once the step loop got faster, so the bar sometimes never appeared; 80,000 take ~2 s.
 */
const REQUESTS = 80000;
const LONG_RUN = ['run', '--model', MODEL, '--num-instances', '4', '--rate', '200', '--num-requests', String(REQUESTS), '--prompt-tokens', '128', '--output-tokens', '64'];
const hasScript = spawnSync('script', ['--version']).status === 0;
const built = existsSync(path.join(ROOT, 'dist/cli/main.js'));
/** A progress line: "run [bar] 12% | 9449/80000 requests | sim 48.6 s | ... requests/s | ETA 3s". */
const PROGRESS = new RegExp(`run \\[.*\\] +\\d+% \\| \\d+/${REQUESTS} requests \\| sim [\\d.]+ s \\| [\\d.]+ requests/s \\| ETA`);

const quote = (a: string): string => `'${a.replace(/'/g, "'\\''")}'`;

/** Runs the CLI under a pseudo-terminal (util-linux `script`): stderr is a TTY, stdout goes to `outFile`. */
function underPty(args: readonly string[], outFile: string): string {
  const cmd = `node ${quote(BIN)} ${args.map(quote).join(' ')} > ${quote(outFile)}`;
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', timeout: 240_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe.skipIf(!hasScript || !built)('progress on stderr', () => {
  it('a pseudo-TTY sees progress lines; without a TTY (or with --quiet) stderr has none; stdout is the same bytes', () => {
    const dir = tempDir();
    const ptyOut = path.join(dir, 'pty.json');
    const tty = underPty(LONG_RUN, ptyOut);
    expect(tty).toMatch(PROGRESS);
    expect(tty).toMatch(`100% | ${REQUESTS}/${REQUESTS} requests`);
    const plain = spawnSync('node', [BIN, ...LONG_RUN], { encoding: 'utf8', timeout: 240_000, maxBuffer: 1 << 28 });
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stderr).not.toMatch(/requests\/s|ETA|\[.*%/);
    expect(plain.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: '))).toEqual([]);
    expect(readFileSync(ptyOut, 'utf8')).toBe(plain.stdout);
    const quietOut = path.join(dir, 'quiet.json');
    const quiet = underPty([...LONG_RUN, '--quiet'], quietOut);
    expect(quiet).not.toMatch(/requests\/s|ETA/);
    expect(readFileSync(quietOut, 'utf8')).toBe(plain.stdout);
  }, 300_000);
});

describe('progressDisplay', () => {
  const stream = (isTTY: boolean): { isTTY: boolean; text: string; write(s: string): boolean } => ({ isTTY, text: '', write(s: string) { this.text += s; return true; } });

  it('stays silent before the delay, draws after it, and never without a TTY or with quiet', () => {
    let t = 0;
    const s = stream(true);
    const d = progressDisplay('run', false, s, () => t);
    expect(d).not.toBeNull();
    d?.sim({ simTimeUs: 1e6, requestsArrived: 10, requestsDone: 5, requestsTotal: 100 });
    expect(s.text).toBe('');
    t = PROGRESS_DELAY_MS + 500;
    d?.sim({ simTimeUs: 2e6, requestsArrived: 80, requestsDone: 50, requestsTotal: 100 });
    d?.stop();
    expect(s.text).toMatch(/run \[.*\] 50% \| 50\/100 requests \| sim 2\.0 s \| 33\.3 requests\/s/);
    expect(progressDisplay('run', false, stream(false))).toBeNull();
    expect(progressDisplay('run', true, stream(true))).toBeNull();
  });

  it('shows counts without a bar when the total is unknown (closed-loop sessions), and units of other work', () => {
    let t = 0;
    const s = stream(true);
    const d = progressDisplay('run', false, s, () => t);
    t = PROGRESS_DELAY_MS;
    d?.sim({ simTimeUs: 3e6, requestsArrived: 9, requestsDone: 7, requestsTotal: null });
    d?.stop();
    expect(s.text).toMatch(/run 7 requests \| sim 3\.0 s/);
    const e = stream(true);
    t = 0;
    const ev = progressDisplay('evaluate', false, e, () => t);
    t = 2 * PROGRESS_DELAY_MS;
    ev?.units(2, 4);
    ev?.stop();
    expect(e.text).toMatch(/evaluate \[.*\] 50% \| 2\/4 runs/);
  });
});

describe('ETA', () => {
  it('formats whole seconds, minutes and hours without a 60 in the last field', () => {
    expect([0, 9.4, 59.6, 60, 119.6, 125, 3599.6, 3600, 7199, 7500].map(formatEta)).toEqual(['0s', '9s', '1m00s', '1m00s', '2m00s', '2m05s', '1h00m', '1h00m', '2h00m', '2h05m']);
    expect(formatEta(Number.NaN)).toBe('?');
  });

  it('forgets the slow start: after 10% of a run whose first second ran at a third of the pace, within 30%', () => {
    // 100 s of work at 1%/s, except the first second (start-up), which did a third of a percent.
    const fractionAt = (t: number): number => (t <= 1 ? t / 300 : 1 / 300 + (t - 1) / 100);
    const end = 1 + (1 - 1 / 300) * 100;
    const est = new EtaEstimator();
    const worst: number[] = [];
    for (let t = 0; t <= end; t += 0.1) {
      const left = est.sample(t * 1000, fractionAt(t));
      if (t >= end / 10 && left !== null && end - t > 1) worst.push(Math.abs(left / (end - t) - 1));
    }
    expect(Math.max(...worst)).toBeLessThan(0.3);
  });

  it('weighs arrivals twice: an overloaded run with every request arrived is past two thirds', () => {
    expect(simFraction({ requestsArrived: 100, requestsDone: 0, requestsTotal: 100 })).toBeCloseTo(2 / 3);
    expect(simFraction({ requestsArrived: 100, requestsDone: 100, requestsTotal: 100 })).toBe(1);
    expect(simFraction({ requestsArrived: 5, requestsDone: 1, requestsTotal: null })).toBeNull();
  });

  it('shows the workload generation as its own bar before the simulation', () => {
    let t = 0;
    const s = { isTTY: true, text: '', write(x: string) { this.text += x; return true; } };
    const d = progressDisplay('run', false, s, () => t);
    t = 2 * PROGRESS_DELAY_MS;
    d?.generating(500, 1000);
    t += 1000;
    d?.sim({ simTimeUs: 1e6, requestsArrived: 200, requestsDone: 100, requestsTotal: 1000 });
    d?.stop();
    expect(s.text).toMatch(/run: generating the workload \[.*\] 50% \| 500\/1000 requests/);
    expect(s.text).toMatch(/run \[.*\] 10% \| 100\/1000 requests/);
  });
});
