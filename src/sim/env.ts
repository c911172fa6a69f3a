/**
 * What the simulation layer needs from its host: file contents named by options (model config folders,
 * hardware catalogs, workload specs, policy bundles, traces) and a place for warnings. The CLI reads the
 * file system and writes stderr; the library API serves inline content only.
 */
import type { EngineDriver } from './setup.js';
import type { ServeGenChunkFiles } from '../workload/servegen/index.js';

export interface SimEnv {
  /** The text of `path`, named by `option` (e.g. `--workload-spec`); throws a ConfigError when unreadable. */
  readText(path: string, option: string): string;
  /**
   * The chunk files of a ServeGen directory (a spec's `servegen_data.path`), in byte order of their names;
   * absent when the host cannot list directories (such specs are then refused).
   */
  readServeGen?(dir: string, option: string): ServeGenChunkFiles[];
  /** A diagnostic line (warn level). */
  warn(message: string): void;
  /** What was resolved (model, hardware, KV blocks, policies, workload): shown with `--log info` or `debug`. */
  info?(message: string): void;
  /** Detail for diagnosing blis-ts itself (files read, timings): shown with `--log debug` only. */
  debug?(message: string): void;
  /** Runs the built cluster's events (the library's yields to the event loop); absent = in one go. */
  readonly drive?: EngineDriver;
  /** Called between the phases of a run (workload, simulation, report): the library yields there. */
  readonly pause?: () => Promise<void>;
}
