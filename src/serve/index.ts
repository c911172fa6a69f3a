/**
 * `blis serve`: a simulated vLLM. One simulated instance paced to wall time behind vLLM's OpenAI-compatible
 * HTTP API; several processes on different ports make a test cluster for routers and load generators.
 */
import type { AddressInfo } from 'node:net';
import type { EngineSetup } from '../sim/engine-setup.js';
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

export async function startServe(cfg: ServeConfig): Promise<RunningServer> {
  const engine = new LiveEngine(cfg.setup, cfg.spinUs === undefined ? {} : { spinUs: cfg.spinUs });
  const handle = createServeServer({
    engine,
    modelName: cfg.modelName,
    ...(cfg.maxBodyBytes === undefined ? {} : { maxBodyBytes: cfg.maxBodyBytes }),
    limits: {
      modelNames: [cfg.modelName, ...(cfg.aliases ?? [])],
      maxModelLen: cfg.setup.maxModelLen,
      totalKvBlocks: cfg.setup.kv.totalBlocks,
      blockSize: cfg.setup.kv.blockSize,
      defaultMaxTokens: cfg.defaultMaxTokens ?? 16,
    },
  });
  const { server, metrics } = handle;
  const host = cfg.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
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
