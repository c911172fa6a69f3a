import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { progressDisplay, PROGRESS_DELAY_MS } from '../../src/cli/progress.js';
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
    d?.sim({ simTimeUs: 1e6, requestsDone: 5, requestsTotal: 100 });
    expect(s.text).toBe('');
    t = PROGRESS_DELAY_MS + 500;
    d?.sim({ simTimeUs: 2e6, requestsDone: 50, requestsTotal: 100 });
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
    d?.sim({ simTimeUs: 3e6, requestsDone: 7, requestsTotal: null });
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
