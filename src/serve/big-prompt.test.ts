/**
 * A huge prompt must not stall the other streams of `blis serve`: with the server in a child process and
 * real HTTP clients on loopback, four streams are flowing when a 5,000,000-word prompt (about 30 MB of JSON)
 * arrives; its decoding, parsing and tokenising run off the event loop that paces the streams, so their
 * largest inter-token gap stays under 100 ms (it was 1.46 s when the prompt was tokenised inline). The huge
 * request itself is answered with vLLM's 400 (it exceeds the model length).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, startServeChild, type ServeChild } from '../../test/io/processes.js';
import { TEST_MODEL } from '../../test/io/engine.js';

let serve: ServeChild;

beforeAll(async () => {
  ensureBuilt();
  serve = await startServeChild(['--model', TEST_MODEL, '--hardware', 'H100', '--tp', '1']);
}, 120_000);
afterAll(async () => {
  await serve?.stop();
});

/**
 * A reader process (prioritised like the server, so that this test runner's own scheduling is not what is
 * measured): four streams, printing every chunk's arrival time (ms since the reader started) as JSON.
 */
function readerScript(url: string): string {
  return `const t0 = performance.now();
    async function one(i) {
      const res = await fetch(${JSON.stringify(`${url}/v1/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: ${JSON.stringify(TEST_MODEL)}, prompt: 'stream ' + i + ' ' + 'x '.repeat(200), max_tokens: 400, min_tokens: 400, stream: true }) });
      if (res.status !== 200) throw new Error('status ' + res.status);
      const times = [];
      for await (const _ of res.body) times.push(performance.now() - t0);
      return times;
    }
    process.stdout.write('started ' + Date.now() + '\\n');
    Promise.all([0, 1, 2, 3].map(one)).then((all) => process.stdout.write(JSON.stringify({ t0: performance.timeOrigin + t0, all })));`;
}

function run(script: string, onLine?: (line: string) => void): { child: ChildProcess; done: Promise<string> } {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    if (child.pid !== undefined) setPriority(child.pid, -10);
  } catch {
    // not permitted: normal priority
  }
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    if (onLine !== undefined && out.includes('\n')) onLine(out.slice(0, out.indexOf('\n')));
  });
  const done = new Promise<string>((resolve) => child.once('exit', () => resolve(out)));
  return { child, done };
}

describe('blis serve with a 5M-word prompt arriving', () => {
  it('keeps every other stream\'s largest inter-token gap under 100 ms', { retry: 2, timeout: 120_000 }, async () => {
    // The huge request comes from another process: encoding and sending 30 MB must not stall this one's readers.
    const dir = mkdtempSync(join(tmpdir(), 'blis-big-'));
    const bodyFile = join(dir, 'body.json');
    writeFileSync(bodyFile, JSON.stringify({ model: TEST_MODEL, prompt: Array.from({ length: 5_000_000 }, (_, i) => `w${i % 997}`).join(' '), max_tokens: 8 }));
    // The sender starts (and reads the body) first, then posts when told on stdin.
    const sender = `const b = require('node:fs').readFileSync(${JSON.stringify(bodyFile)});
      process.stdout.write('ready\\n');
      process.stdin.once('data', () => fetch(${JSON.stringify(`${serve.url}/v1/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: b })
        .then(async (r) => { process.stdout.write(JSON.stringify({ status: r.status, body: await r.json() })); process.exit(0); }));`;
    let senderReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (senderReady = resolve));
    const s = run(sender, () => senderReady());
    await ready;
    const reader = run(readerScript(serve.url));
    await new Promise((r) => setTimeout(r, 500));
    const sentAt = performance.timeOrigin + performance.now();
    s.child.stdin?.write('go\n');
    const big = (await s.done).slice('ready\n'.length);
    const answeredAt = performance.timeOrigin + performance.now();
    rmSync(dir, { recursive: true, force: true });
    const answer = JSON.parse(big) as { status: number; body: { error: { param: string; message: string } } };
    expect(answer.status).toBe(400);
    expect(answer.body.error.param).toBe('input_tokens');
    expect(answer.body.error.message).toMatch(/your request has 5000000 input tokens/);
    const readerOut = await reader.done;
    const { t0, all } = JSON.parse(readerOut.slice(readerOut.indexOf('\n') + 1)) as { t0: number; all: number[][] };
    let worst = 0;
    let worstAt = 0;
    let during = 0;
    for (const times of all) {
      expect(times.length).toBeGreaterThan(100);
      for (let k = 1; k < times.length; k++) {
        const gap = (times[k] as number) - (times[k - 1] as number);
        if (gap > worst) [worst, worstAt] = [gap, t0 + (times[k - 1] as number) - sentAt];
        if (t0 + (times[k] as number) >= sentAt && t0 + (times[k - 1] as number) <= answeredAt) during++;
      }
    }
    process.stderr.write(`big prompt: answered in ${(answeredAt - sentAt).toFixed(0)} ms; largest inter-token gap of the other streams ${worst.toFixed(1)} ms, ${worstAt.toFixed(0)} ms after the send\n`);
    // The streams were flowing while the prompt was read and parsed.
    expect(during).toBeGreaterThan(10);
    // On a machine so overloaded that processes wait tens of ms for a core (a 1-minute load average over
    // three per core), 100 ms gaps happen without any prompt; the bound is then looser, still far below the
    // seconds an inline tokeniser stalls for.
    const overloaded = (loadavg()[0] ?? 0) > 3 * availableParallelism();
    expect(worst).toBeLessThan(overloaded ? 250 : 100);
  });
});
