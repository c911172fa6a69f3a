import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputBlockHashes } from '../domain/block-hash.js';
import type { Request } from '../domain/request.js';
import { distributionWorkloadStream, type DistributionWorkloadOptions } from './distribution.js';
import { HEAD, ThreadedDistributionStream } from './threaded-stream.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WORKER = path.join(ROOT, 'dist', 'workload', 'stream-worker.js');

const opts: DistributionWorkloadOptions = {
  seed: 7n,
  rate: 40,
  numRequests: HEAD + 1500,
  horizon: Number.MAX_SAFE_INTEGER,
  prefixTokens: 40,
  prompt: { mean: 60, stdev: 30, min: 2, max: 200 },
  output: { mean: 20, stdev: 10, min: 1, max: 80 },
  timeoutUs: 5_000_000,
};

async function drain(s: ThreadedDistributionStream): Promise<Request[]> {
  const all: Request[] = [];
  try {
    for (let c = await s.next(); c !== null; c = await s.next()) all.push(...c);
  } finally {
    s.close();
  }
  return all;
}

function expectSame(got: readonly Request[], bs: number): void {
  const want = Array.from(distributionWorkloadStream(opts));
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const a = got[i] as Request;
    const b = want[i] as Request;
    expect([a.id, a.arrivalTime, a.deadline, a.inputLen, a.outputLen, a.maxOutputLen, a.clientId, a.prefixGroup, a.prefixLength]).toEqual([b.id, b.arrivalTime, b.deadline, b.inputLen, b.outputLen, b.maxOutputLen, b.clientId, b.prefixGroup, b.prefixLength]);
    expect(Array.from(a.inputTokens)).toEqual(Array.from(b.inputTokens));
    expect(Array.from(a.outputTokens)).toEqual(Array.from(b.outputTokens));
    expect(Array.from(inputBlockHashes(a, bs))).toEqual(Array.from(inputBlockHashes(b, bs)));
  }
}

describe('ThreadedDistributionStream', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'blis-stream-'));
  beforeAll(() => {
    // `npm test` builds first; a bare `vitest run` on a fresh clone has no dist/ yet.
    if (!existsSync(WORKER)) execSync('npm run build', { cwd: ROOT, stdio: 'ignore' });
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('hands out the same requests, token ids and prompt block hashes as the one-thread generator', async () => {
    const s = new ThreadedDistributionStream(opts, 16);
    expectSame(await drain(s), 16);
    expect(s.fellBack).toBe(false);
  });

  it('the precomputed hashes are for the block size given; another size is recomputed from the tokens', async () => {
    const got = await drain(new ThreadedDistributionStream(opts, 8));
    expect(got[HEAD + 3]!.inputHashBlockSize).toBe(8);
    expectSame(got, 16);
  });

  it('a worker that cannot start changes nothing: this thread generates everything', async () => {
    const s = new ThreadedDistributionStream(opts, 16, path.join(tmp, 'missing-worker.js'));
    expectSame(await drain(s), 16);
    expect(s.fellBack).toBe(true);
  });

  it('a worker that dies part-way changes nothing: this thread replays the stream and goes on', async () => {
    const dying = path.join(tmp, 'dying-worker.mjs');
    // The real worker, stopped once it has posted its second chunk.
    writeFileSync(dying, `import { parentPort } from 'node:worker_threads';\nlet n = 0;\nconst post = parentPort.postMessage.bind(parentPort);\nparentPort.postMessage = (m, t) => { post(m, t); if (++n === 2) process.exit(3); };\nawait import(${JSON.stringify(WORKER)});\n`);
    const s = new ThreadedDistributionStream(opts, 16, dying);
    expectSame(await drain(s), 16);
    expect(s.fellBack).toBe(true);
  });

  it('a workload shorter than the head needs no worker', async () => {
    const short = { ...opts, numRequests: 10 };
    const s = new ThreadedDistributionStream(short, 16);
    const got = await drain(s);
    expect(got.map((r) => r.id)).toEqual(Array.from(distributionWorkloadStream(short), (r) => r.id));
    expect(s.fellBack).toBe(false);
  });
});
