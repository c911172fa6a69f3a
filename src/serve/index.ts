/**
 * `blis serve`: a simulated vLLM. One simulated instance paced to wall time behind vLLM's OpenAI-compatible
 * HTTP API; several processes on different ports make a test cluster for routers and load generators.
 */
import type { AddressInfo } from 'node:net';
import { Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import { runEngine, type EngineSetup } from '../sim/engine-setup.js';
import { textTokenIds } from '../workload/word-prompt.js';
import { fullResponse, roleChunk, tokenChunk, usageChunk } from './openai.js';
import { LiveEngine } from './live-engine.js';
import { createServeServer } from './server.js';
import type { ServeMetrics } from './metrics.js';

export { LiveEngine } from './live-engine.js';
export type { LiveListener, LiveHandle, LiveStats } from './live-engine.js';
export { ServeMetrics, promNumber } from './metrics.js';
export * from './openai.js';

export interface ServeConfig {
  readonly setup: Omit<EngineSetup, 'horizon' | 'numInstances'>;
  /** Name reported by /v1/models and in responses. */
  readonly modelName: string;
  /** Other names a request's `model` may use (e.g. the catalog's canonical id). */
  readonly aliases?: readonly string[];
  readonly host?: string;
  /** 0 = any free port. */
  readonly port?: number;
  readonly defaultMaxTokens?: number;
  readonly spinUs?: number;
  /** Largest request body accepted (bytes, default 64 MiB); larger ones get a 413. */
  readonly maxBodyBytes?: number;
}

export interface RunningServer {
  /** Base URL, e.g. http://127.0.0.1:8000 */
  readonly url: string;
  readonly port: number;
  readonly engine: LiveEngine;
  readonly metrics: ServeMetrics;
  /** Stops accepting requests, drops open connections and stops the engine. */
  close(): Promise<void>;
}

/**
 * Runs the engine offline on a small burst of requests before the server listens: the first requests a
 * cold process serves would otherwise be late by the JIT's compile time (tens of ms on each of the first few),
 * which shows as latency no simulation predicts.
 */
function warmUp(setup: ServeConfig['setup']): void {
  const requests: Request[] = [];
  for (let i = 0; i < 24; i++) {
    const len = 64 + ((i * 197) % 900);
    const input = Int32Array.from({ length: len }, (_, k) => (i * 7919 + k * 31) % 100_000);
    requests.push(new Request(`warmup_${i}`, input, new Int32Array(32), i * 2000, 32, 0));
  }
  runEngine({ ...setup, numInstances: 1, horizon: MAX_INT64 }, requests);
  textTokenIds('warm up the word splitter and the hashing of words');
  const ids = { id: 'warmup', created: 0, model: 'warmup' };
  for (let i = 1; i <= 200; i++) {
    tokenChunk('completions', ids, i, false);
    tokenChunk('chat', ids, i, i === 200);
  }
  roleChunk(ids);
  usageChunk('chat', ids, 1, 1);
  fullResponse('completions', ids, 1, 8);
}

export async function startServe(cfg: ServeConfig): Promise<RunningServer> {
  warmUp(cfg.setup);
  const engine = new LiveEngine(cfg.setup, cfg.spinUs === undefined ? {} : { spinUs: cfg.spinUs });
  const handle = createServeServer({
    engine,
    modelName: cfg.modelName,
    ...(cfg.maxBodyBytes === undefined ? {} : { maxBodyBytes: cfg.maxBodyBytes }),
    limits: {
      modelNames: [cfg.modelName, ...(cfg.aliases ?? [])],
      adapterNames: cfg.setup.lora?.cfg.adapters.map((a) => a.id) ?? [],
      maxModelLen: cfg.setup.maxModelLen,
      totalKvBlocks: cfg.setup.kv.totalBlocks,
      blockSize: cfg.setup.kv.blockSize,
      defaultMaxTokens: cfg.defaultMaxTokens ?? 16,
    },
  });
  const { server, metrics } = handle;
  const host = cfg.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(cfg.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    // Nothing may keep the process alive after a listen error (EADDRINUSE, EACCES, an unknown host).
    engine.close();
    await handle.close();
    throw e;
  }
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    engine,
    metrics,
    close: () =>
      new Promise<void>((resolve) => {
        engine.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => handle.close()),
  };
}
