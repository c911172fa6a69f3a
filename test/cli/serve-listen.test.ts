/**
 * `blis serve` that cannot listen (the port is taken) prints one error line and exits 1, instead of staying
 * alive with nothing served. (Spawns bin/blis.js: `npm test` builds first.)
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});

describe('blis serve on a port in use', () => {
  it('exits 1 with a message naming the address, in seconds', async () => {
    const taken = createServer();
    servers.push(taken);
    const port = await new Promise<number>((resolve) => taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)));
    const child = spawn(process.execPath, [path.join(root, 'bin', 'blis.js'), 'serve', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE.*--port`));
  }, 30_000);
});
