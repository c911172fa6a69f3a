/**
 * `blis observe`: flags → workload and options, Ctrl-C handling, progress on stderr, and the trace / ITL /
 * summary outputs.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../sim/config-error.js';
import type { FlagValues } from '../sim/options.js';
import { mergeGoodputTargets, resolveGoodputCliFlags } from '../metrics/goodput.js';
import { goJsonIndent } from '../gocompat/go-format.js';
import { goParseDuration } from '../gocompat/go-parse.js';
import { formatItlCsv } from '../calibrate/io.js';
import { formatTraceCsv } from '../workload/tracev2-csv.js';
import { formatTraceHeaderYaml } from '../workload/tracev2-yaml.js';
import { buildObserveWorkload } from '../observe/workload.js';
import { observe } from '../observe/run.js';
import { progressBar } from '../observe/progress.js';
import type { Io } from './io.js';
import { UsageError } from './errors.js';
import { readInputFile } from './read-input.js';
import { showValue } from '../domain/errors.js';
import { checkInputsAndOutputs, checkOutputPath, commitOutputs, type Content, type OutputFile } from './outputs.js';

export interface ObserveCommandHooks {
  /** Replaces SIGINT as the stop signal (tests). */
  readonly stop?: AbortSignal;
}

function required(f: FlagValues, name: string): string {
  const v = f.str(name);
  if (v === '') throw new ConfigError('missing-flag', `--${name} is required`);
  return v;
}

function bad(msg: string): never {
  throw new ConfigError('bad-flag', msg);
}

/**
 * An observation of a real server cannot be repeated identically: when its files cannot be written at the end
 * (the directory vanished, the disk filled), the trace is saved under a recovery name in the current directory
 * (else the temporary directory) and the error says where.
 */
function commitOrRecover(files: readonly (readonly [OutputFile, Content])[], stamp: string): void {
  try {
    commitOutputs(files);
    return;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    const base = `blis-observe-recovery-${stamp}`;
    const suffix = (f: OutputFile): string => (f.flag === '--trace-header' ? '.yaml' : f.flag === '--itl-output' ? '.itl.csv' : '.csv');
    for (const dir of [process.cwd(), tmpdir()]) {
      let saved: (readonly [OutputFile, Content])[];
      try {
        saved = files.map(([f, c]) => [checkOutputPath(f.flag, path.join(dir, base + suffix(f))), c] as const);
        commitOutputs(saved);
      } catch (again) {
        if (again instanceof UsageError) continue;
        throw again;
      }
      throw new UsageError('io', `${e.message}; the observed trace was saved instead to ${saved.map(([f]) => f.path).join(', ')}`);
    }
    throw new UsageError('io', `${e.message}; saving the trace under a recovery name in ${process.cwd()} and ${tmpdir()} failed too`);
  }
}

function timestamp(): string {
  const iso = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${iso}-${process.pid}`;
}

export async function observeCommand(f: FlagValues, io: Io, hooks: ObserveCommandHooks = {}): Promise<void> {
  const serverUrl = required(f, 'server-url');
  const model = required(f, 'model');
  const headerPath = required(f, 'trace-header');
  const dataPath = required(f, 'trace-data');
  if (!/^https?:\/\/[^/]+/.test(serverUrl)) bad(`--server-url must be an http:// or https:// URL, got ${showValue(serverUrl)}`);
  const recordItl = f.bool('record-itl');
  if (recordItl && f.bool('no-streaming')) bad('--record-itl and --no-streaming are mutually exclusive; ITL recording requires streaming responses');
  if (f.str('itl-output') !== '' && !recordItl) io.warn('--itl-output is set but --record-itl is not; no ITL data will be written');
  const apiFormat = f.str('api-format');
  if (apiFormat !== 'completions' && apiFormat !== 'chat') bad(`--api-format must be completions or chat, got ${showValue(apiFormat)}`);
  const timeoutSec = f.int('timeout');
  if (timeoutSec <= 0 || timeoutSec > 86400) bad(`--timeout must be between 1 and 86400 seconds, got ${timeoutSec}`);
  const rttMs = f.float('rtt-ms');
  if (rttMs < 0) bad(`--rtt-ms must be >= 0, got ${rttMs}`);
  const warmup = f.int('warmup-requests');
  if (warmup < 0) bad(`--warmup-requests must be >= 0, got ${warmup}`);
  const concurrency = f.int('concurrency');
  let maxConcurrency = f.int('max-concurrency');
  if (maxConcurrency <= 0) bad(`--max-concurrency must be > 0, got ${maxConcurrency}`);
  if (concurrency > 0 && !f.changed('max-concurrency')) maxConcurrency = concurrency;
  let prewarmNs: bigint;
  try {
    prewarmNs = goParseDuration(f.str('prewarm-duration'));
  } catch (e) {
    bad(`--prewarm-duration: ${(e as Error).message} (use e.g. 30s or 2m)`);
  }
  if (prewarmNs < 0n) bad(`--prewarm-duration must be >= 0, got ${f.str('prewarm-duration')}`);
  const horizon = f.bigint('horizon');
  if (horizon < 0n) bad(`--horizon must be >= 0, got ${horizon}`);
  // Every output is checked before the first request is sent: the server's work cannot be redone identically.
  const headerOut = checkOutputPath('--trace-header', headerPath);
  const dataOut = checkOutputPath('--trace-data', dataPath);
  const itlPath = recordItl ? (f.str('itl-output') !== '' ? f.str('itl-output') : `${dataPath.replace(/\.csv$/, '')}.itl.csv`) : '';
  const itlOut = recordItl ? checkOutputPath('--itl-output', itlPath) : null;
  const specPath = f.str('workload-spec');
  checkInputsAndOutputs([headerOut, dataOut, itlOut], [{ flag: '--workload-spec', path: specPath }]);
  let specText = '';
  if (specPath !== '') {
    specText = readInputFile(specPath, '--workload-spec');
  }
  const workload = await buildObserveWorkload({
    workloadSpec: specPath,
    specText,
    preset: f.str('workload'),
    rate: f.changed('rate') ? f.float('rate') : null,
    numRequests: f.int('num-requests'),
    seed: f.bigint('seed'),
    seedChanged: f.changed('seed'),
    horizonUs: Number(horizon),
    concurrency,
    thinkTimeMs: f.int('think-time-ms'),
    thinkTimeDist: f.changed('think-time-dist') ? f.str('think-time-dist') : null,
    thinkTimeMsChanged: f.changed('think-time-ms'),
    prefixTokens: f.int('prefix-tokens'),
    prompt: { mean: f.int('prompt-tokens'), stdev: f.int('prompt-tokens-stdev'), min: f.int('prompt-tokens-min'), max: f.int('prompt-tokens-max') },
    output: { mean: f.int('output-tokens'), stdev: f.int('output-tokens-stdev'), min: f.int('output-tokens-min'), max: f.int('output-tokens-max') },
  });
  if (workload.requests.length === 0) io.warn('no requests generated; writing an empty trace');
  const goodput = mergeGoodputTargets(resolveGoodputCliFlags(f.str('slo-ttft'), f.str('slo-itl'), f.str('slo-e2e')), null, workload.specGoodput);

  const ctl = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts++;
    if (interrupts === 1) {
      io.warn('interrupted: no new requests; aborting those in flight and writing the trace (Ctrl-C again to quit at once)');
      ctl.abort();
    } else {
      process.exit(130);
    }
  };
  const stop = hooks.stop === undefined ? ctl.signal : AbortSignal.any([hooks.stop, ctl.signal]);
  if (hooks.stop === undefined) process.on('SIGINT', onSigint);
  const progress = progressBar(workload.sessions.length > 0 ? 0 : workload.requests.length);
  let result;
  try {
    result = await observe({
      serverUrl,
      model,
      apiKey: f.str('api-key'),
      apiFormat,
      serverType: f.str('server-type'),
      workload,
      maxConcurrency,
      warmupRequests: warmup,
      noStreaming: f.bool('no-streaming'),
      unconstrained: f.bool('unconstrained-output'),
      recordItl,
      timeoutSec,
      rttMs,
      measureRtt: f.bool('measure-rtt'),
      prewarmUs: Number(prewarmNs / 1000n),
      scrapeKv: f.bool('scrape-kv-metrics') ? { url: f.str('kv-metrics-url') !== '' ? f.str('kv-metrics-url') : `${serverUrl.replace(/\/+$/, '')}/metrics`, vllmCommit: f.str('vllm-commit') } : null,
      goodput,
      stop,
      warn: (m) => io.warn(m),
      onDone: (_o, counts, done) => progress.update(done, counts),
    });
  } finally {
    progress.finish();
    process.off('SIGINT', onSigint);
  }
  const files: [OutputFile, Content][] = [[headerOut, formatTraceHeaderYaml(result.header)], [dataOut, formatTraceCsv(result.records, 'real')]];
  if (itlOut !== null) {
    if (result.itl.length === 0) io.warn('--record-itl was set but no chunk times were recorded');
    files.push([itlOut, formatItlCsv(result.itl)]);
  }
  commitOrRecover(files, timestamp());
  io.stdout(`${goJsonIndent(result.summary)}\n`);
  const c = { ok: 0, error: 0, timeout: 0 };
  for (const o of result.observed) c[o.result.status]++;
  io.info?.(`observe: ${result.observed.length} requests dispatched (ok ${c.ok}, error ${c.error}, timeout ${c.timeout}); ${result.records.length} recorded to ${headerPath} / ${dataPath}${itlPath === '' ? '' : `, chunk times to ${itlPath}`}`);
}
