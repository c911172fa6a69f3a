/**
 * Vitest global set-up: one temporary root per test run. Every test file makes its scratch folders with
 * `mkdtemp(path.join(tmpdir(), 'blis-…'))`; pointing TMPDIR (which os.tmpdir() and the spawned `blis` processes
 * read) at a fresh root before the workers start puts all of them under it, and the teardown removes it, so a run
 * leaves nothing behind in the machine's /tmp even when a test forgets to clean up or fails half-way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const previous = process.env['TMPDIR'];
  const root = mkdtempSync(path.join(tmpdir(), 'blis-test-run-'));
  process.env['TMPDIR'] = root;
  return () => {
    if (previous === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = previous;
    // Keep the folder when asked, to inspect what a failing test wrote.
    if (process.env['BLIS_KEEP_TEST_TMP'] !== '1') rmSync(root, { recursive: true, force: true });
  };
}
