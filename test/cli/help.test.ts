/**
 * `--help` tells the truth (issue 29): auto-sized and unlimited defaults say so, numbers are not quoted, the
 * scorer list is the registry's, and serve's port line goes where it says.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { SCORER_NAMES } from '../../src/routing/scorer-registry.js';

async function help(args: string[]): Promise<string> {
  let out = '';
  const code = await main([...args, '--help'], { stdout: (t) => (out += t), warn: () => undefined, error: () => undefined });
  expect(code).toBe(0);
  return out.replace(/\s+/g, ' ');
}

describe('--help', () => {
  it('shows true defaults, unquoted numbers and every scorer', async () => {
    const run = await help(['run']);
    expect(run).toContain('(default: auto-sized from GPU memory)');
    expect(run).toMatch(/--horizon <value> .*?\(default: none\)/);
    expect(run).not.toContain('9223372036854775807');
    expect(run).toContain('--num-requests <value> number of requests (default: 100)');
    expect(run).not.toMatch(/default: "\d/);
    for (const s of SCORER_NAMES) expect(run).toContain(s);
    expect(await help(['search'])).toContain('(default: 30)');
  });

  it('serve --port says the listening line is on stdout', async () => {
    expect(await help(['serve'])).toMatch(/--port <value> TCP port to listen on \(0 = any free port; the listening line on stdout names it\)/);
  });
});
