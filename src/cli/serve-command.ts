/**
 * `blis serve`: resolves the engine flags like `run` does, starts the simulated vLLM, and runs until SIGINT or
 * SIGTERM.
 */
import { ConfigError } from '../sim/config-error.js';
import type { FlagValues } from '../sim/options.js';
import { resolveEngineFlags } from '../sim/resolve-engine.js';
import { processEnv } from './commands.js';
import { EXIT_FAILURE, RunFailure } from './errors.js';
import type { Io } from './io.js';

export interface ServeCommandHooks {
  /** Resolves instead of waiting for a signal (tests). */
  readonly until?: Promise<void>;
  readonly onListening?: (url: string) => void;
}

export async function serveCommand(f: FlagValues, io: Io, hooks: ServeCommandHooks = {}): Promise<void> {
  if (f.str('model') === '') throw new ConfigError('missing-flag', '--model is required (e.g. --model meta-llama/llama-3.1-8b-instruct)');
  for (const name of ['num-instances', 'admission-latency', 'routing-latency']) {
    if (f.changed(name)) throw new ConfigError('bad-flag', `--${name} is not a serve flag: one blis serve process is one instance; start several on different ports for a cluster`);
  }
  const port = f.int('port');
  if (port < 0 || port > 65535) throw new ConfigError('bad-flag', `--port must be in 0..65535, got ${port}`);
  const defaultMax = f.int('default-max-tokens');
  if (defaultMax < 1) throw new ConfigError('bad-flag', `--default-max-tokens must be >= 1, got ${defaultMax}`);
  const { setup, latency, dpRanks } = await resolveEngineFlags(f, processEnv(io));
  if (dpRanks > 1) throw new ConfigError('bad-flag', `--dp ${dpRanks} with ${latency.backend === 'corrected-physics' ? 'corrected-physics' : '--dp-placement replicas'} makes ${dpRanks} engines; one blis serve process is one engine: start one per rank on different ports`);
  for (const w of latency.warnings) io.warn(w);
  const { startServe } = await import('../serve/index.js');
  const requested = f.str('model');
  const name = f.str('served-model-name') !== '' ? f.str('served-model-name') : requested;
  let running;
  try {
    running = await startServe({ setup, modelName: name, aliases: [requested, latency.model], host: f.str('host'), port, defaultMaxTokens: defaultMax });
  } catch (e) {
    // Only the socket's own errors (EADDRINUSE, EACCES, an unknown host) are about the flags; others are bugs.
    if (typeof (e as { syscall?: unknown }).syscall !== 'string') throw e;
    // Not the input's fault (the port is taken, or not ours to use): exit 1, not 2.
    throw new RunFailure('SERVE_LISTEN', `cannot listen on ${f.str('host')}:${port}: ${(e as Error).message}; choose another --port (0 = any free port) or --host`, EXIT_FAILURE);
  }
  io.stdout(`blis serve: listening on ${running.url} (model ${name}, ${latency.hardware} TP${latency.tp}, ${latency.latency.name}, ${setup.kv.totalBlocks} KV blocks, max-model-len ${setup.maxModelLen})\n`);
  hooks.onListening?.(running.url);
  await (hooks.until ?? untilSignal());
  await running.close();
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
